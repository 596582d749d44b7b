package backendtest

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"testing"

	"github.com/satchel-dev/satchel/backend"
)

// logged is docPut with an entry for the log of document changes (on a
// backend that keeps one) and, when key is not empty, an idempotency key.
func logged(b backend.Backend, r backend.DocReplace, key string) backend.DocReplace {
	if _, ok := backend.As[backend.Keys](b); !ok {
		return r
	}
	r.Change = &backend.DocChange{Op: "set", Scope: r.Scope, Meta: []byte(`{"op":"set"}`)}
	if key != "" {
		r.Change.Key = &backend.KeyClaim{Scope: r.Scope, Key: key, Hash: []byte("h"), Result: []byte("r"), TTL: 3600e9}
	}
	return r
}

// changeLog is the logged changes of store "mixed" in scope, as
// "key@version", sorted, or nil on a backend without a log.
func changeLog(t *testing.T, b backend.Backend, scope string) []string {
	t.Helper()
	k, ok := backend.As[backend.Keys](b)
	if !ok {
		return nil
	}
	es, err := k.DocChanges(t.Context(), backend.DocChangeQuery{Scope: scope, Limit: 10000})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		if e.Store == "mixed" {
			out = append(out, fmt.Sprintf("%s@%d", e.Key, e.Version))
		}
	}
	sort.Strings(out)
	return out
}

// checkReplaceDocsMixed: one batch that mixes new keys of two scopes,
// replacements that keep a history, refused entries of each kind and a
// set with an idempotency key gives each entry its own result, and stores
// (document, history, log of changes, claimed key) exactly what the
// accepted entries said and nothing of the refused ones. A batch large
// enough to be cut into several statements stores every entry.
func checkReplaceDocsMixed(t *testing.T, b backend.Backend) {
	db := docBatcher(t, b)
	docs, _ := backend.As[backend.Documents](b)
	ctx := t.Context()
	id := func(scope, k string) backend.DocID { return backend.DocID{Store: "mixed", Scope: scope, Key: k} }
	// u1 and u2 exist at version 1, u3 at version 2 (one previous version).
	for _, r := range []backend.DocReplace{
		docPut(id("s1", "u1"), 10, 1, 0), docPut(id("s1", "u2"), 20, 1, 0),
		docPut(id("s1", "u3"), 30, 1, 0), docPut(id("s1", "u3"), 31, 2, 1),
	} {
		if _, err := docs.ReplaceDoc(ctx, logged(b, r, "")); err != nil {
			t.Fatal(err)
		}
	}
	rs := []backend.DocReplace{
		logged(b, docPut(id("s1", "n1"), 1, 1, 0), ""),     // new: stored
		logged(b, docPut(id("s1", "u1"), 11, 2, 1), ""),    // u1 at 1: stored, 1 archived
		logged(b, docPut(id("s1", "u2"), 21, 1, 0), ""),    // u2 exists: refused, version 1
		logged(b, docPut(id("s2", "n1"), 2, 1, 0), ""),     // new in another scope: stored
		logged(b, docPut(id("s1", "u3"), 32, 2, 1), ""),    // u3 is at 2: refused, version 2
		logged(b, docPut(id("s1", "gone"), 3, 4, 3), ""),   // no such key: refused, no version
		logged(b, docPut(id("s1", "n2"), 4, 1, 0), "k-n2"), // new, with an idempotency key: stored
		logged(b, docPut(id("s1", "u3"), 33, 3, 2), ""),    // u3 at 2: stored (the earlier entry was refused)
		logged(b, docPut(id("s2", "n3"), 5, 1, 0), ""),     // new: stored
	}
	res, err := db.ReplaceDocs(ctx, rs)
	if err != nil {
		t.Fatalf("ReplaceDocs: %v", err)
	}
	want := []struct {
		changed bool
		version int64
	}{{false, 1}, {false, 2}, {true, 1}, {false, 1}, {true, 2}, {true, 0}, {false, 1}, {false, 3}, {false, 1}}
	for i, w := range want {
		r := res[i]
		if w.changed != errors.Is(r.Err, backend.ErrDocChanged) || !w.changed && r.Err != nil || r.Doc.Version != w.version || r.Doc.Key != rs[i].Key {
			t.Errorf("entry %d (%s/%s, expect %d): %q version %d, %v; want version %d, changed %v",
				i, rs[i].Scope, rs[i].Key, rs[i].Expect, r.Doc.Key, r.Doc.Version, r.Err, w.version, w.changed)
		}
	}
	checkStoredDocs(ctx, t, docs, []storedDoc{
		{id("s1", "n1"), true, 1, "1", nil},
		{id("s1", "u1"), true, 2, "11", []string{"10"}},
		{id("s1", "u2"), true, 1, "20", nil},
		{id("s2", "n1"), true, 1, "2", nil},
		{id("s1", "u3"), true, 3, "33", []string{"31", "30"}},
		{id("s1", "gone"), false, 0, "", nil},
		{id("s1", "n2"), true, 1, "4", nil},
		{id("s2", "n3"), true, 1, "5", nil},
		{id("s1", "n3"), false, 0, "", nil},
	})
	if k, ok := backend.As[backend.Keys](b); ok {
		if got, want := changeLog(t, b, "s1"), []string{"n1@1", "n2@1", "u1@1", "u1@2", "u2@1", "u3@1", "u3@2", "u3@3"}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("log of changes of s1: %v, want %v (one entry per stored version, none for a refused one)", got, want)
		}
		if got, want := changeLog(t, b, "s2"), []string{"n1@1", "n3@1"}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("log of changes of s2: %v, want %v", got, want)
		}
		if rec, ok, err := k.KeyRecord(ctx, "s1", "", "k-n2"); err != nil || !ok || string(rec.Result) != "r" {
			t.Errorf("the idempotency key of the keyed entry: %+v, found %v, %v", rec, ok, err)
		}
	}

	// A large batch: every entry stored, new keys and replacements.
	var big []backend.DocReplace
	for i := range 300 {
		big = append(big, logged(b, docPut(id("s3", fmt.Sprintf("b%03d", i)), i, 1, 0), ""))
	}
	if _, err := db.ReplaceDocs(ctx, big); err != nil {
		t.Fatal(err)
	}
	for i := range big {
		if i%3 == 0 {
			big[i] = logged(b, docPut(big[i].DocID, 1000+i, 2, 1), "")
		}
	}
	res, err = db.ReplaceDocs(ctx, big)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		wantV, wantChanged := int64(2), false
		if i%3 != 0 {
			wantV, wantChanged = 1, true // the key exists since the first batch
		}
		if r.Doc.Version != wantV || errors.Is(r.Err, backend.ErrDocChanged) != wantChanged {
			t.Fatalf("large batch, entry %d: version %d, %v", i, r.Doc.Version, r.Err)
		}
		d, h, ok, err := docs.GetDoc(ctx, big[i].DocID, true)
		if err != nil || !ok || d.Version != wantV || len(h) != int(wantV-1) {
			t.Fatalf("large batch, %s: version %d, %d previous, found %v, %v", big[i].Key, d.Version, len(h), ok, err)
		}
	}
	if _, ok := backend.As[backend.Keys](b); ok {
		if got := len(changeLog(t, b, "s3")); got != 300+100 {
			t.Errorf("log of changes of the large batches: %d entries, want 400", got)
		}
	}
}

// checkReplaceDocsRefusedWhole: a batch that a quota refuses is stored
// exactly as its results say: when the call fails, nothing of it is
// stored (no document, no entry in the log of changes), and an entry
// refused alone leaves nothing behind.
func checkReplaceDocsRefusedWhole(t *testing.T, b backend.Backend) {
	db := docBatcher(t, b)
	q, ok := backend.As[backend.Quotas](b)
	if !ok {
		t.Skipf("%T keeps no quotas", b)
	}
	docs, _ := backend.As[backend.Documents](b)
	ctx := t.Context()
	live := func(_ context.Context, heads []backend.Commit) ([]int64, []int64, error) {
		return make([]int64, len(heads)), make([]int64, len(heads)), nil
	}
	lim := backend.Usage{Bytes: backend.NoLimit, Files: backend.NoLimit, Threads: backend.NoLimit, Documents: 3, HistoryBytes: backend.NoLimit}
	if err := q.SetQuota(ctx, "quota", lim, live); err != nil {
		t.Fatal(err)
	}
	id := func(k string) backend.DocID { return backend.DocID{Store: "mixed", Scope: "quota", Key: k} }
	if _, err := docs.ReplaceDoc(ctx, logged(b, docPut(id("a"), 1, 1, 0), "")); err != nil {
		t.Fatal(err)
	}
	rs := []backend.DocReplace{
		logged(b, docPut(id("a"), 2, 2, 1), ""), // a replacement: not a new document
		logged(b, docPut(id("b"), 3, 1, 0), ""),
		logged(b, docPut(id("c"), 4, 1, 0), ""),
		logged(b, docPut(id("d"), 5, 1, 0), ""), // the fourth document: over the quota
	}
	res, err := db.ReplaceDocs(ctx, rs)
	for i, r := range rs {
		d, _, found, gerr := docs.GetDoc(ctx, r.DocID, false)
		if gerr != nil {
			t.Fatal(gerr)
		}
		stored := err == nil && res[i].Err == nil
		if stored != (found && d.Version == r.Version) {
			t.Errorf("entry %d (%s): call %v, result %v; found %v at version %d", i, r.Key, err, resultErr(res, i), found, d.Version)
		}
	}
	if err == nil && res[3].Err == nil {
		t.Errorf("a fourth document under a quota of 3 was stored")
	}
	wantLog := []string{"a@1"}
	for i, r := range rs {
		if err == nil && res[i].Err == nil {
			wantLog = append(wantLog, fmt.Sprintf("%s@%d", r.Key, r.Version))
		}
	}
	sort.Strings(wantLog)
	if _, ok := backend.As[backend.Keys](b); ok {
		if got := changeLog(t, b, "quota"); fmt.Sprint(got) != fmt.Sprint(wantLog) {
			t.Errorf("log of changes: %v, want %v (only what was stored)", got, wantLog)
		}
	}
}

func resultErr(res []backend.DocResult, i int) error {
	if i < len(res) {
		return res[i].Err
	}
	return nil
}
