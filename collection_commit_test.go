package satchel

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/memory"
	"github.com/satchel-dev/satchel/backend/postgres/postgrestest"
	"github.com/satchel-dev/satchel/backend/sqlite"
	"github.com/satchel-dev/satchel/internal/sqlitetest"
	"github.com/satchel-dev/satchel/internal/testenv"
)

// gatedDocs wraps a backend's documents to watch the committer: the call
// after arm waits until release, ReplaceDocs records each batch's keys,
// a replacement counts as committed only once the backend's call that
// stored it has returned (a keyed set's too), and a batch that holds the key fail fails as a
// whole (as a transaction that one document breaks would), as does that
// key's own ReplaceDoc.
type gatedDocs struct {
	backend.Backend
	backend.Documents
	backend.Keys // so that sets log their changes and may carry idempotency keys
	inner        backend.DocBatcher
	fail         string

	mu        sync.Mutex
	gate      chan struct{} // armed: the next call waits for it to close
	entered   chan struct{} // closed when the armed call is waiting
	batches   [][]string
	committed map[string]int // key → replacements stored and returned
}

var errBroken = errors.New("test: this document breaks its transaction")

func (g *gatedDocs) arm() (entered <-chan struct{}, release func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.gate, g.entered = make(chan struct{}), make(chan struct{})
	gate := g.gate
	return g.entered, func() { close(gate) }
}

func (g *gatedDocs) wait() {
	g.mu.Lock()
	gate, entered := g.gate, g.entered
	g.gate = nil
	g.mu.Unlock()
	if gate != nil {
		close(entered)
		<-gate
	}
}

func (g *gatedDocs) stored(rs []backend.DocReplace, errs func(i int) error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.committed == nil {
		g.committed = map[string]int{}
	}
	for i, r := range rs {
		if errs(i) == nil {
			g.committed[r.Key]++
		}
	}
}

func (g *gatedDocs) ReplaceDoc(ctx context.Context, r backend.DocReplace) (backend.Doc, error) {
	g.wait()
	if r.Key == g.fail {
		return backend.Doc{}, errBroken
	}
	d, err := g.Documents.ReplaceDoc(ctx, r)
	g.stored([]backend.DocReplace{r}, func(int) error { return err })
	return d, err
}

func (g *gatedDocs) ReplaceDocs(ctx context.Context, rs []backend.DocReplace) ([]backend.DocResult, error) {
	g.wait()
	keys := make([]string, len(rs))
	broken := false
	for i, r := range rs {
		keys[i] = r.Key
		broken = broken || r.Key == g.fail
	}
	g.mu.Lock()
	g.batches = append(g.batches, keys)
	g.mu.Unlock()
	if broken {
		return nil, errBroken
	}
	res, err := g.inner.ReplaceDocs(ctx, rs)
	if err == nil {
		g.stored(rs, func(i int) error { return res[i].Err })
	}
	return res, err
}

func (g *gatedDocs) isCommitted(key string, n int) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.committed[key] >= n
}

// docBackends opens each backend that stores documents in batches.
func docBackends(t *testing.T) map[string]func(t *testing.T) backend.Backend {
	return map[string]func(t *testing.T) backend.Backend{
		"memory": func(t *testing.T) backend.Backend { return memory.New() },
		"sqlite": func(t *testing.T) backend.Backend {
			b, err := sqlite.Open(t.Context(), sqlitetest.NewFileAt(t, filepath.Join(t.TempDir(), "docs.db")))
			if err != nil {
				t.Fatal(err)
			}
			return b
		},
		"postgres": func(t *testing.T) backend.Backend {
			url := testenv.PostgresURL(t)
			b, _ := postgrestest.OpenAt(t, url, postgrestest.Name("satchel_docbatch"))
			return b
		},
	}
}

var batchProject = fstest.MapFS{"stores/notes.json": {Data: []byte(`{
  "key": "{id}",
  "schema": { "id": { "type": "string" }, "n": { "type": "number", "max": 10 }, "kind": { "type": "string" } },
  "history": { "versions": 2 },
  "ttl": { "override": [ { "condition": "kind = 'tmp'", "ttl": 60 } ] }
}`)}}

// gatedStore opens a store over backend b wrapped in gatedDocs.
func gatedStore(t *testing.T, b backend.Backend, fail string) (*Store, *gatedDocs, *Collection) {
	g := &gatedDocs{Backend: b, Documents: b.(backend.Documents), Keys: b.(backend.Keys), inner: b.(backend.DocBatcher), fail: fail}
	st := New(g)
	t.Cleanup(func() { st.Close() })
	p, err := LoadProjectFS(batchProject)
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.Collection(t.Context(), p, "s1", "notes")
	if err != nil {
		t.Fatal(err)
	}
	return st, g, c
}

// queueOf waits until n sets wait in the store's committer.
func queueOf(st *Store, n int) { queueOfUntil(st, n, nil) }

// queueOfUntil waits until n sets wait in the store's committer or stop
// is closed, whichever comes first: a watcher that may miss a short-lived
// queue must not wait for it forever.
func queueOfUntil(st *Store, n int, stop <-chan struct{}) {
	for {
		l := st.docs.Queued()
		if l >= n {
			return
		}
		select {
		case <-stop:
			return
		default:
		}
		runtime.Gosched()
	}
}

type setResult struct {
	key       string
	version   int64
	err       error
	committed bool // the replacement's transaction had returned when Set did
}

// leadAndQueue starts a set of lead that the backend holds until the sets
// of docs, started meanwhile, all wait in the committer; it then lets them
// go, and returns each set's result (lead's first). The waiting sets go
// to the backend together, in one batch.
func leadAndQueue(t *testing.T, st *Store, g *gatedDocs, c *Collection, lead map[string]any, docs []map[string]any) []setResult {
	entered, release := g.arm()
	out := make([]setResult, 1+len(docs))
	var wg sync.WaitGroup
	set := func(i int, doc map[string]any) {
		defer wg.Done()
		key, v, err := c.Set(t.Context(), doc)
		out[i] = setResult{key: key, version: v, err: err, committed: err != nil || g.isCommitted(key, 1)}
	}
	wg.Add(1)
	go set(0, lead)
	<-entered
	for i, d := range docs {
		wg.Add(1)
		go set(i+1, d)
	}
	queueOf(st, len(docs))
	release()
	wg.Wait()
	return out
}

// TestDocGroupCommit: sets that arrive while one is being stored go
// together in the next backend transaction, each with its own version and
// expiry, a second set of the same key in that batch is refused by the
// batch and retried by its own set, and no set returns before the
// transaction that stored it has.
func TestDocGroupCommit(t *testing.T) {
	for name, open := range docBackends(t) {
		t.Run(name, func(t *testing.T) {
			st, g, c := gatedStore(t, open(t), "")
			var docs []map[string]any
			for i := range 14 {
				kind := "keep"
				if i%3 == 0 {
					kind = "tmp"
				}
				docs = append(docs, map[string]any{"id": fmt.Sprintf("k%d", i), "n": i % 10, "kind": kind})
			}
			docs = append(docs, map[string]any{"id": "k1", "n": 9, "kind": "keep"}) // k1 twice
			res := leadAndQueue(t, st, g, c, map[string]any{"id": "lead", "n": 1, "kind": "keep"}, docs)
			if len(g.batches) == 0 || len(g.batches[0]) != len(docs) {
				t.Fatalf("batches %v: the %d waiting sets must go in one", g.batches, len(docs))
			}
			k1 := map[int64]bool{}
			for i, r := range res {
				if r.err != nil {
					t.Fatalf("set %d: %v", i, r.err)
				}
				if !r.committed {
					t.Errorf("set of %s returned before its transaction had", r.key)
				}
				if r.key == "k1" {
					k1[r.version] = true
				} else if r.version != 1 {
					t.Errorf("%s: version %d, want 1", r.key, r.version)
				}
			}
			if !k1[1] || !k1[2] {
				t.Errorf("the two sets of k1 got versions %v, want 1 and 2", k1)
			}
			for i := range 14 {
				key := fmt.Sprintf("k%d", i)
				d, err := c.Get(t.Context(), key, true)
				if err != nil {
					t.Fatal(err)
				}
				if tmp := i%3 == 0; tmp != !d.Expires.IsZero() || tmp && d.Expires.Sub(d.Updated) != time.Minute {
					t.Errorf("%s: updated %v, expires %v (a tmp document expires after 60 s, others never)", key, d.Updated, d.Expires)
				}
				if key == "k1" && (d.Version != 2 || len(d.History) != 1 || d.History[0].Version != 1) {
					t.Errorf("k1: version %d, %d previous versions", d.Version, len(d.History))
				}
			}
		})
	}
}

// TestDocGroupCommitFailureIsolated: a document that breaks its batch's
// transaction (as a constraint or a quota refusing it would) fails its own
// set only: its batch-mates are stored, one by one, and acknowledged; an
// invalid document is refused before it reaches a batch.
func TestDocGroupCommitFailureIsolated(t *testing.T) {
	for name, open := range docBackends(t) {
		t.Run(name, func(t *testing.T) {
			st, g, c := gatedStore(t, open(t), "bad")
			var docs []map[string]any
			for i := range 6 {
				docs = append(docs, map[string]any{"id": fmt.Sprintf("k%d", i), "n": i, "kind": "keep"})
			}
			docs = append(docs, map[string]any{"id": "bad", "n": 1, "kind": "keep"})
			res := leadAndQueue(t, st, g, c, map[string]any{"id": "lead", "n": 1, "kind": "keep"}, docs)
			_, _, err := c.Set(t.Context(), map[string]any{"id": "big", "n": 11, "kind": "keep"})
			if !errors.Is(err, ErrValidation) {
				t.Errorf("an invalid document: %v", err)
			}
			if len(g.batches) == 0 || len(g.batches[0]) != len(docs) {
				t.Fatalf("batches %v: the %d waiting sets must go in one", g.batches, len(docs))
			}
			failed := 0
			for _, r := range res {
				switch {
				case r.key == "bad" || r.err != nil:
					failed++
					if !errors.Is(r.err, errBroken) {
						t.Errorf("the breaking document: %q %v", r.key, r.err)
					}
				case r.version != 1 || !r.committed:
					t.Errorf("%s: version %d, committed %v", r.key, r.version, r.committed)
				}
			}
			if failed != 1 {
				t.Errorf("%d sets failed, want the breaking one alone", failed)
			}
			for i := range 6 {
				if d, err := c.Get(t.Context(), fmt.Sprintf("k%d", i), false); err != nil || d.Version != 1 {
					t.Errorf("k%d: version %d, %v", i, d.Version, err)
				}
			}
			for _, key := range []string{"bad", "big"} {
				if _, err := c.Get(t.Context(), key, false); !errors.Is(err, ErrNotFound) {
					t.Errorf("%s: %v, want not found", key, err)
				}
			}
		})
	}
}

// TestDocGroupCommitMixed: one batch that holds new keys, replacements of
// keys this process set before, a replacement refused because another
// writer changed its key meanwhile (its set retries it), while a set with
// an idempotency key goes alone: each set gets its own version, history
// and acknowledgement, and the keyed set's retry is answered from its key.
func TestDocGroupCommitMixed(t *testing.T) {
	for name, open := range docBackends(t) {
		t.Run(name, func(t *testing.T) {
			b := open(t)
			st, g, c := gatedStore(t, b, "")
			ctx := t.Context()
			for _, k := range []string{"u1", "u2"} {
				if _, _, err := c.Set(ctx, map[string]any{"id": k, "n": 1, "kind": "keep"}); err != nil {
					t.Fatal(err)
				}
			}
			// Another writer moves u2 to version 2 behind this store's back.
			other := New(b)
			t.Cleanup(func() { other.Close() })
			p, err := LoadProjectFS(batchProject)
			if err != nil {
				t.Fatal(err)
			}
			oc, err := other.Collection(ctx, p, "s1", "notes")
			if err != nil {
				t.Fatal(err)
			}
			if _, v, err := oc.Set(ctx, map[string]any{"id": "u2", "n": 2, "kind": "keep"}); err != nil || v != 2 {
				t.Fatalf("the other writer's set of u2: version %d, %v", v, err)
			}
			docs := []map[string]any{
				{"id": "n1", "n": 1, "kind": "keep"},
				{"id": "u1", "n": 3, "kind": "keep"},
				{"id": "n2", "n": 2, "kind": "tmp"},
				{"id": "u2", "n": 4, "kind": "keep"},
				{"id": "n3", "n": 3, "kind": "keep"},
			}
			keyed := make(chan error, 1)
			var keyedV int64
			gone := make(chan struct{}) // closed once the batch has been stored
			go func() {
				// While the batch is forming; on a loaded machine this
				// goroutine may not run until the batch has gone, and then
				// the keyed set runs after it, which must hold as well.
				queueOfUntil(st, 1, gone)
				_, v, err := c.Set(ctx, map[string]any{"id": "kk", "n": 5, "kind": "keep"}, IdempotencyKey("key-kk"))
				keyedV = v
				keyed <- err
			}()
			res := leadAndQueue(t, st, g, c, map[string]any{"id": "lead", "n": 1, "kind": "keep"}, docs)
			close(gone)
			if err := <-keyed; err != nil || keyedV != 1 {
				t.Fatalf("the keyed set: version %d, %v", keyedV, err)
			}
			want := map[string]int64{"lead": 1, "n1": 1, "u1": 2, "n2": 1, "u2": 3, "n3": 1}
			for _, r := range res {
				if r.err != nil || r.version != want[r.key] || !r.committed {
					t.Errorf("%s: version %d, %v, committed %v; want version %d", r.key, r.version, r.err, r.committed, want[r.key])
				}
			}
			for _, batch := range g.batches {
				for _, k := range batch {
					if k == "kk" {
						t.Errorf("the keyed set went in a batch: %v", g.batches)
					}
				}
			}
			for key, hist := range map[string][]int64{"u1": {1}, "u2": {2, 1}, "n1": nil, "kk": nil} {
				d, err := c.Get(ctx, key, true)
				if err != nil {
					t.Fatal(err)
				}
				var hv []int64
				for _, h := range d.History {
					hv = append(hv, h.Version)
				}
				if fmt.Sprint(hv) != fmt.Sprint(hist) {
					t.Errorf("%s: previous versions %v, want %v", key, hv, hist)
				}
			}
			if d, err := c.Get(ctx, "n2", false); err != nil || d.Expires.Sub(d.Updated) != time.Minute {
				t.Errorf("n2 (tmp): expires %v after it was set, %v; want a minute", d.Expires.Sub(d.Updated), err)
			}
			// The keyed set again: answered from its key, no new version.
			if _, v, err := c.Set(ctx, map[string]any{"id": "kk", "n": 5, "kind": "keep"}, IdempotencyKey("key-kk")); err != nil || v != 1 {
				t.Errorf("the keyed set, retried: version %d, %v", v, err)
			}
			if d, err := c.Get(ctx, "kk", false); err != nil || d.Version != 1 {
				t.Errorf("kk after the retry: version %d, %v", d.Version, err)
			}
		})
	}
}
