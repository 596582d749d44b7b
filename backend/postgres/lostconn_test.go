package postgres_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/postgres"
	"github.com/satchel-dev/satchel/internal/testenv"
)

// cutProxy relays TCP connections to PostgreSQL and, once armed, cuts the
// first connection that sends the marker (bytes of a commit's root or
// pack): before the server sees it
// (cutBefore: nothing can have committed), or after the server has
// answered it completely (cutAfter: it committed, the client never hears).
type cutProxy struct {
	ln     net.Listener
	target string
	mode   atomic.Int32 // 0 relay, cutBefore, cutAfter, cutAfterRefuse
	marker []byte
	cuts   atomic.Int32
	refuse atomic.Bool // new connections are closed at once
}

const (
	cutBefore = 1
	cutAfter  = 2
	// cutAfterRefuse is cutAfter, and then the proxy refuses every new
	// connection until refuse is cleared: the client cannot learn the
	// outcome.
	cutAfterRefuse = 3
)

func newCutProxy(t *testing.T, target string, marker string) *cutProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target, marker: []byte(marker)}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.relay(c)
		}
	}()
	return p
}

func (p *cutProxy) relay(client net.Conn) {
	if p.refuse.Load() {
		client.Close()
		return
	}
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		client.Close()
		return
	}
	var once sync.Once
	cut := func() { once.Do(func() { client.Close(); server.Close() }) }
	defer cut()
	var dropReplies atomic.Bool
	go func() {
		defer cut()
		buf := make([]byte, 64<<10)
		var seen []byte
		for {
			n, err := server.Read(buf)
			if n > 0 && dropReplies.Load() {
				// Swallow the replies until ReadyForQuery: the batch's
				// implicit transaction has committed by then.
				seen = append(seen, buf[:n]...)
				if bytes.Contains(seen, []byte{'Z', 0, 0, 0, 5}) {
					return
				}
				continue
			}
			if n > 0 {
				if _, err := client.Write(buf[:n]); err != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	buf := make([]byte, 64<<10)
	marked := false // this connection carried the marker
	for {
		n, err := client.Read(buf)
		if n > 0 && !marked && p.refuse.Load() {
			// Out of reach means every connection: an idle one the pool
			// kept (the change feed's, another caller's) is cut when used.
			return
		}
		if n > 0 && bytes.Contains(buf[:n], p.marker) {
			marked = true
			switch p.mode.Swap(0) {
			case cutBefore:
				p.cuts.Add(1)
				return
			case cutAfter:
				p.cuts.Add(1)
				dropReplies.Store(true)
			case cutAfterRefuse:
				p.refuse.Store(true)
				p.cuts.Add(1)
				dropReplies.Store(true)
			}
		}
		if n > 0 {
			if _, err := server.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// openThroughProxy opens a fresh schema through a cutProxy.
func openThroughProxy(t *testing.T, marker string) (*postgres.Backend, *cutProxy) {
	raw := testenv.PostgresURL(t)
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	p := newCutProxy(t, u.Host, marker)
	u.Host = p.ln.Addr().String()
	schema := fmt.Sprintf("satchel_cut_%d_%d", os.Getpid(), cutSchemas.Add(1))
	b, err := postgres.OpenFresh(t.Context(), u.String(), schema)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		b.Close()
		if err := postgres.DropSchema(context.Background(), raw, schema); err != nil {
			t.Errorf("drop schema: %v", err)
		}
	})
	return b, p
}

var cutSchemas atomic.Int64

// TestAppendLostConnection cuts the connection of an Append before and
// after its transaction commits: either way Append reports the commit as
// stored, and it is stored exactly once.
func TestAppendLostConnection(t *testing.T) {
	for _, mode := range []struct {
		name string
		mode int32
	}{{"before", cutBefore}, {"after", cutAfter}} {
		t.Run(mode.name, func(t *testing.T) {
			ctx := t.Context()
			b, p := openThroughProxy(t, "root-marker-1")
			th1, err := b.CreateThread(ctx, "s", "one")
			if err != nil {
				t.Fatal(err)
			}
			th2, err := b.CreateThread(ctx, "s", "two")
			if err != nil {
				t.Fatal(err)
			}
			p.mode.Store(mode.mode)
			res, err := b.Append(ctx, []backend.NewCommit{
				{Thread: th1.ID, Seq: 1, Root: []byte("root-marker-1"), Meta: []byte("m1"), Pack: []byte("p1")},
				{Thread: th2.ID, Seq: 1, Root: []byte("r2"), Meta: []byte("m2"), Pack: []byte("p2"), Checkpoint: "cp"},
			})
			if err != nil {
				t.Fatalf("Append: %v", err)
			}
			if p.cuts.Load() != 1 {
				t.Fatalf("the proxy cut %d connections, want 1", p.cuts.Load())
			}
			for i, th := range []backend.Thread{th1, th2} {
				if res[i].Err != nil {
					t.Fatalf("entry %d: %v", i, res[i].Err)
				}
				head, ok, err := b.Head(ctx, th.ID)
				if err != nil || !ok {
					t.Fatalf("head of %s: %v %v", th.Name, ok, err)
				}
				if head.ID != res[i].Commit.ID || head.Seq != 1 || string(head.Root) != []string{"root-marker-1", "r2"}[i] {
					t.Errorf("head of %s is %+v, Append said %+v", th.Name, head, res[i].Commit)
				}
				log, err := b.Log(ctx, th.ID, 0, 10)
				if err != nil || len(log) != 1 {
					t.Errorf("log of %s: %d commits (%v), want 1", th.Name, len(log), err)
				}
			}
			if seq, err := b.CheckpointSeq(ctx, th2.ID, "cp"); err != nil || seq != 1 {
				t.Errorf("checkpoint cp: %d, %v", seq, err)
			}
		})
	}
}

// TestAppendLostConnectionWorkspace appends to a file through a connection
// cut after the commit: the text is there once, and the caller was told
// it succeeded.
func TestAppendLostConnectionWorkspace(t *testing.T) {
	ctx := t.Context()
	b, p := openThroughProxy(t, "appended-marker")
	st := satchel.New(b)
	ws, err := st.Workspace(ctx, "s", "main")
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.Write(ctx, "log.md", "a\n"); err != nil {
		t.Fatal(err)
	}
	p.mode.Store(cutAfter)
	if err := ws.Append(ctx, "log.md", "appended-marker\n"); err != nil {
		t.Fatalf("Append: %v", err)
	}
	if p.cuts.Load() != 1 {
		t.Fatalf("the proxy cut %d connections, want 1", p.cuts.Load())
	}
	got, err := ws.Read(ctx, "log.md")
	if err != nil || got != "a\nappended-marker\n" {
		t.Fatalf("log.md = %q, %v; want %q", got, err, "a\nappended-marker\n")
	}
}

// TestForkLostConnection cuts the connection of a Fork before and after
// its statement commits: either way Fork reports the fork as made, and
// the thread exists once, with its one first commit.
func TestForkLostConnection(t *testing.T) {
	for _, mode := range []struct {
		name string
		mode int32
	}{{"before", cutBefore}, {"after", cutAfter}} {
		t.Run(mode.name, func(t *testing.T) {
			ctx := t.Context()
			b, p := openThroughProxy(t, "fork-marker")
			src, err := b.CreateThread(ctx, "s", "src")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := b.Append(ctx, []backend.NewCommit{{Thread: src.ID, Seq: 1, Root: []byte("r"), Meta: []byte("m"), Pack: []byte("p")}}); err != nil {
				t.Fatal(err)
			}
			p.mode.Store(mode.mode)
			th, c, err := b.Fork(ctx, "s", "fork", backend.NewCommit{
				Seq: 1, Root: []byte("fork-marker"), Meta: []byte("m"),
				Requires: &backend.CommitID{Thread: src.ID, Seq: 1},
			})
			if err != nil {
				t.Fatalf("Fork: %v", err)
			}
			if p.cuts.Load() != 1 {
				t.Fatalf("the proxy cut %d connections, want 1", p.cuts.Load())
			}
			got, err := b.Thread(ctx, "s", "fork", false)
			if err != nil || got.ID != th.ID {
				t.Fatalf("thread fork: %+v %v, Fork said %+v", got, err, th)
			}
			log, err := b.Log(ctx, th.ID, 0, 10)
			if err != nil || len(log) != 1 || log[0].ID != c.ID || string(log[0].Root) != "fork-marker" {
				t.Fatalf("log of the fork: %+v %v, Fork said %+v", log, err, c)
			}
		})
	}
}

// TestConcurrentBatchesLostConnection: writers of two stores (two
// processes) append lines to one shared file and to files of their own,
// with several batches of each store in flight at once
// (backend.ConcurrentAppender) and cross-store races refused as stale,
// while one connection carrying a batch is cut after its transaction
// committed. Every acknowledged line is in its file exactly once.
func TestConcurrentBatchesLostConnection(t *testing.T) {
	ctx := t.Context()
	b, p := openThroughProxy(t, "cut-marker-line")
	if b.AppendConcurrency() < 2 {
		t.Fatalf("AppendConcurrency %d: the test needs batches side by side", b.AppendConcurrency())
	}
	stores := []*satchel.Store{satchel.New(b), satchel.New(b)}
	ws0, err := stores[0].Workspace(ctx, "s", "main")
	if err != nil {
		t.Fatal(err)
	}
	if err := ws0.Write(ctx, "shared.md", ""); err != nil {
		t.Fatal(err)
	}
	p.mode.Store(cutAfter)
	const writers, lines = 8, 12
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			ws, err := stores[w%2].Workspace(ctx, "s", "main")
			if err != nil {
				errs <- err
				return
			}
			for k := range lines {
				line := fmt.Sprintf("w%d-%d\n", w, k)
				if w == 3 && k == 5 {
					line = "cut-marker-line\n"
				}
				for _, path := range []string{"shared.md", fmt.Sprintf("own-%d.md", w)} {
					err := ws.Append(ctx, path, line)
					for errors.Is(err, satchel.ErrConflict) {
						err = ws.Append(ctx, path, line) // as the message says
					}
					if err != nil {
						errs <- fmt.Errorf("writer %d, %s: %w", w, path, err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if p.cuts.Load() != 1 {
		t.Fatalf("the proxy cut %d connections, want 1", p.cuts.Load())
	}
	shared, err := ws0.Read(ctx, "shared.md")
	if err != nil {
		t.Fatal(err)
	}
	for w := range writers {
		own, err := ws0.Read(ctx, fmt.Sprintf("own-%d.md", w))
		if err != nil {
			t.Fatal(err)
		}
		var want strings.Builder
		for k := range lines {
			line := fmt.Sprintf("w%d-%d\n", w, k)
			if w == 3 && k == 5 {
				line = "cut-marker-line\n"
			}
			want.WriteString(line)
			if n := strings.Count(shared, line); n != 1 {
				t.Errorf("shared.md holds %q %d times, want once", line, n)
			}
		}
		if own != want.String() {
			t.Errorf("own-%d.md = %q, want %q", w, own, want.String())
		}
	}
	if n := strings.Count(shared, "\n"); n != writers*lines {
		t.Errorf("shared.md has %d lines, want %d", n, writers*lines)
	}
}

// TestIdempotentAppendLostConnection appends with an idempotency key
// through a connection cut after the commit reached the server and before
// its answer, with the server out of reach until the append gives up: the
// caller gets an error and retries with the same key, and the text is
// there once, the retry reporting the first call's commit.
func TestIdempotentAppendLostConnection(t *testing.T) {
	defer postgres.SetResolveTimeout(200 * time.Millisecond)()
	ctx := t.Context()
	b, p := openThroughProxy(t, "keyed-marker")
	st := satchel.New(b)
	ws, err := st.Workspace(ctx, "s", "main")
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.Write(ctx, "log.md", "a\n"); err != nil {
		t.Fatal(err)
	}
	p.mode.Store(cutAfterRefuse)
	key := satchel.IdempotencyKey("retry-1")
	var first satchel.Commit
	err = ws.Append(ctx, "log.md", "keyed-marker\n", key, satchel.Committed(&first))
	if err == nil {
		t.Fatal("the append through a cut connection to an unreachable server succeeded; the test needs it to fail")
	}
	if p.cuts.Load() != 1 {
		t.Fatalf("the proxy cut %d connections, want 1", p.cuts.Load())
	}
	p.refuse.Store(false)
	var retry satchel.Commit
	if err := ws.Append(ctx, "log.md", "keyed-marker\n", key, satchel.Committed(&retry)); err != nil {
		t.Fatalf("retry: %v", err)
	}
	got, err := ws.Read(ctx, "log.md")
	if err != nil || got != "a\nkeyed-marker\n" {
		t.Fatalf("log.md = %q, %v; want the text once", got, err)
	}
	if retry.Seq != 2 || retry.IdempotencyKey != "retry-1" {
		t.Errorf("the retry reported %+v, want the first call's commit 2", retry)
	}
	h, err := ws.History(ctx, 0, 0)
	if err != nil || len(h) != 2 {
		t.Errorf("history: %d commits (%v), want 2", len(h), err)
	}
}

// TestIdempotentAppendTwoStores makes the same keyed append from two
// stores over one database at once, many times: each key applies once.
func TestIdempotentAppendTwoStores(t *testing.T) {
	ctx := t.Context()
	raw := testenv.PostgresURL(t)
	schema := fmt.Sprintf("satchel_idem_%d_%d", os.Getpid(), cutSchemas.Add(1))
	a, err := postgres.OpenFresh(ctx, raw, schema)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		a.Close()
		if err := postgres.DropSchema(context.Background(), raw, schema); err != nil {
			t.Errorf("drop schema: %v", err)
		}
	})
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	b, err := postgres.Open(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	stores := []*satchel.Store{satchel.New(a), satchel.New(b)}
	const rounds = 20
	for i := range rounds {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		seqs := make([]int64, 2)
		for j, st := range stores {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ws, err := st.Workspace(ctx, "s", "main")
				if err != nil {
					errs[j] = err
					return
				}
				var c satchel.Commit
				errs[j] = ws.Append(ctx, "log.md", fmt.Sprintf("line %d\n", i), satchel.IdempotencyKey(fmt.Sprintf("k%d", i)), satchel.Committed(&c))
				seqs[j] = c.Seq
			}()
		}
		wg.Wait()
		if errs[0] != nil || errs[1] != nil {
			t.Fatalf("round %d: %v, %v", i, errs[0], errs[1])
		}
		if seqs[0] != seqs[1] {
			t.Fatalf("round %d: the two calls reported commits %d and %d, want one", i, seqs[0], seqs[1])
		}
	}
	ws, _ := stores[0].Workspace(ctx, "s", "main")
	got, err := ws.Read(ctx, "log.md")
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for i := range rounds {
		fmt.Fprintf(&want, "line %d\n", i)
	}
	if got != want.String() {
		t.Fatalf("log.md = %q, want each line once:\n%q", got, want.String())
	}
}
