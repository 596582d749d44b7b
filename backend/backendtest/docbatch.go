package backendtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/satchel-dev/satchel/backend"
)

// The contract of backend.DocBatcher: a batch of replacements, each
// decided on its own against what the entries before it left, stored in
// one transaction.

// docBatcher returns b as a DocBatcher, or skips.
func docBatcher(t *testing.T, b backend.Backend) backend.DocBatcher {
	t.Helper()
	db, ok := backend.As[backend.DocBatcher](b)
	if !ok {
		t.Skipf("%T is not a backend.DocBatcher", b)
	}
	return db
}

// docPut is a replacement of id with document {"v": v} (as a map and as
// JSON, so that backends of either kind store it).
func docPut(id backend.DocID, v int, version, expect int64) backend.DocReplace {
	js := fmt.Appendf(nil, `{"v":%d}`, v)
	r := backend.DocReplace{DocID: id, Doc: map[string]any{"v": json.Number(fmt.Sprint(v))}, JSON: js, Version: version, Expect: expect}
	if expect > 0 {
		r.Live, r.Archive, r.Keep = true, true, 2
	}
	return r
}

// docValue reads the "v" of a stored version.
func docValue(t *testing.T, d backend.Doc) string {
	t.Helper()
	if d.Map != nil {
		return fmt.Sprint(d.Map["v"])
	}
	var m map[string]any
	if err := json.Unmarshal(d.JSON, &m); err != nil {
		t.Fatalf("stored document %s: %v (%q)", d.Key, err, d.JSON)
	}
	return fmt.Sprint(m["v"])
}

// checkReplaceDocs: each entry of a batch is decided alone, in order (a
// later entry of a key sees the earlier one), a refused entry refuses only
// itself and reports the current version, and what was stored is exactly
// what each accepted entry said.
func checkReplaceDocs(t *testing.T, b backend.Backend) {
	db := docBatcher(t, b)
	docs, _ := backend.As[backend.Documents](b)
	ctx := t.Context()
	id := func(k string) backend.DocID { return backend.DocID{Store: "batch", Scope: "s1", Key: k} }
	// b exists before the batch.
	if _, err := docs.ReplaceDoc(ctx, docPut(id("b"), 10, 1, 0)); err != nil {
		t.Fatal(err)
	}
	ttl := docPut(id("t"), 5, 1, 0)
	ttl.TTL = time.Hour
	rs := []backend.DocReplace{
		docPut(id("a"), 1, 1, 0),     // new: stored
		docPut(id("b"), 11, 1, 0),    // b exists: refused, current version 1
		docPut(id("a"), 2, 2, 1),     // a's version 1 is the previous entry's: stored
		docPut(id("c"), 3, 6, 5),     // c does not exist: refused, no version
		docPut(id("b"), 12, 2, 1),    // b at 1: stored, its version 1 archived
		docPut(id("a"), 9, 2, 1),     // a is at 2 now: refused, current version 2
		ttl,                          // new, with an expiry
		docPut(id("other"), 4, 1, 0), // new
	}
	rs[7].Scope = "s2"
	res, err := db.ReplaceDocs(ctx, rs)
	if err != nil {
		t.Fatalf("ReplaceDocs: %v", err)
	}
	if len(res) != len(rs) {
		t.Fatalf("ReplaceDocs returned %d results for %d entries", len(res), len(rs))
	}
	want := []struct {
		changed bool
		version int64
	}{{false, 1}, {true, 1}, {false, 2}, {true, 0}, {false, 2}, {true, 2}, {false, 1}, {false, 1}}
	for i, w := range want {
		r := res[i]
		if w.changed != errors.Is(r.Err, backend.ErrDocChanged) || !w.changed && r.Err != nil {
			t.Errorf("entry %d (%s, expect %d): error %v, want changed = %v", i, rs[i].Key, rs[i].Expect, r.Err, w.changed)
		}
		if r.Doc.Version != w.version || r.Doc.Key != rs[i].Key {
			t.Errorf("entry %d: key %q version %d, want %q version %d", i, r.Doc.Key, r.Doc.Version, rs[i].Key, w.version)
		}
	}
	if res[6].Doc.Expires.IsZero() || res[6].Doc.Expires.Sub(res[6].Doc.Updated) != time.Hour {
		t.Errorf("entry with a TTL of an hour: updated %v, expires %v", res[6].Doc.Updated, res[6].Doc.Expires)
	}
	checkStoredDocs(ctx, t, docs, []storedDoc{
		{id("a"), true, 2, "2", []string{"1"}},
		{id("b"), true, 2, "12", []string{"10"}},
		{id("c"), false, 0, "", nil},
		{id("t"), true, 1, "5", nil},
		{backend.DocID{Store: "batch", Scope: "s2", Key: "other"}, true, 1, "4", nil},
		{backend.DocID{Store: "batch", Scope: "s1", Key: "other"}, false, 0, "", nil},
	})
	if res, err := db.ReplaceDocs(ctx, nil); err != nil || len(res) != 0 {
		t.Errorf("an empty batch: %v, %v", res, err)
	}
}

// checkReplaceDocsConcurrent: batches from several goroutines at once,
// over distinct keys and one key they share, all land: every accepted
// entry is stored, and the shared key's versions are each accepted once.
func checkReplaceDocsConcurrent(t *testing.T, b backend.Backend) {
	db := docBatcher(t, b)
	docs, _ := backend.As[backend.Documents](b)
	ctx := t.Context()
	const writers, rounds, per = 4, 10, 8
	hot := backend.DocID{Store: "batch", Scope: "s1", Key: "hot"}
	var mu sync.Mutex
	var hotVersion int64 // the version of hot each writer last saw
	accepted := map[int64]int{}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				var rs []backend.DocReplace
				for k := range per {
					rs = append(rs, docPut(backend.DocID{Store: "batch", Scope: "s1", Key: fmt.Sprintf("w%d-%d-%d", w, r, k)}, k, 1, 0))
				}
				mu.Lock()
				v := hotVersion
				mu.Unlock()
				rs = append(rs, docPut(hot, w, v+1, v))
				res, err := db.ReplaceDocs(ctx, rs)
				if err != nil {
					t.Error(err)
					return
				}
				for i, x := range res[:per] {
					if x.Err != nil || x.Doc.Version != 1 {
						t.Errorf("writer %d round %d entry %d: %v version %d", w, r, i, x.Err, x.Doc.Version)
					}
				}
				x := res[per]
				switch {
				case x.Err == nil:
					mu.Lock()
					accepted[x.Doc.Version]++
					hotVersion = max(hotVersion, x.Doc.Version)
					mu.Unlock()
				case errors.Is(x.Err, backend.ErrDocChanged):
					mu.Lock()
					hotVersion = max(hotVersion, x.Doc.Version)
					mu.Unlock()
				default:
					t.Errorf("hot: %v", x.Err)
				}
			}
		}()
	}
	wg.Wait()
	for v, n := range accepted {
		if n != 1 {
			t.Errorf("version %d of the shared key accepted %d times", v, n)
		}
	}
	d, _, ok, err := docs.GetDoc(ctx, hot, false)
	if err != nil || !ok || d.Version != int64(len(accepted)) {
		t.Errorf("shared key: version %d (found %v, %v), %d versions accepted", d.Version, ok, err, len(accepted))
	}
	for w := range writers {
		for r := range rounds {
			for k := range per {
				id := backend.DocID{Store: "batch", Scope: "s1", Key: fmt.Sprintf("w%d-%d-%d", w, r, k)}
				d, _, ok, err := docs.GetDoc(ctx, id, false)
				if err != nil || !ok || d.Version != 1 || docValue(t, d) != fmt.Sprint(k) {
					t.Fatalf("%v: found %v, version %d, %v", id, ok, d.Version, err)
				}
			}
		}
	}
}

// storedDoc is what a document should be after a batch: found or not,
// and if found its version, value and history (newest first).
type storedDoc struct {
	id      backend.DocID
	ok      bool
	version int64
	v       string
	hist    []string
}

// checkStoredDocs reads each document with its history and compares it
// with what it should be.
func checkStoredDocs(ctx context.Context, t *testing.T, docs backend.Documents, want []storedDoc) {
	t.Helper()
	for _, c := range want {
		d, h, ok, err := docs.GetDoc(ctx, c.id, true)
		if err != nil {
			t.Fatal(err)
		}
		if ok != c.ok {
			t.Errorf("%v: found = %v, want %v", c.id, ok, c.ok)
			continue
		}
		if !ok {
			continue
		}
		var hv []string
		for _, x := range h {
			hv = append(hv, docValue(t, x))
		}
		if d.Version != c.version || docValue(t, d) != c.v || fmt.Sprint(hv) != fmt.Sprint(c.hist) {
			t.Errorf("%v: version %d value %s history %v, want version %d value %s history %v", c.id, d.Version, docValue(t, d), hv, c.version, c.v, c.hist)
		}
	}
}
