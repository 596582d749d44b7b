package sqlite

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/satchel-dev/satchel/backend"
)

// TestDocWritesCheckpoint checks that document writes wake the
// checkpointer goroutine (checkpoint.go), as Appends do, instead of
// leaving every checkpoint to the writer's backstop in the middle of a
// set.
func TestDocWritesCheckpoint(t *testing.T) {
	ctx := t.Context()
	b := openTest(t, options{})
	defer b.Close()
	doc := []byte(`{"n":1}`)
	// Each write counts for docWritePages pages: enough of them pass
	// walCheckpointBytes several times.
	n := 3 * walCheckpointBytes / (docWritePages * 4096)
	for i := range n {
		if _, err := b.ReplaceDoc(ctx, backend.DocReplace{DocID: backend.DocID{Store: "s", Scope: "a", Key: fmt.Sprint(i)}, JSON: doc, Version: 1}); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-b.ckpt.ran:
	case <-time.After(time.Minute):
		t.Fatalf("%d sets, no checkpoint ran on the checkpointer's goroutine", n)
	}
	before := b.ckpt.written.Load()
	if _, _, err := b.DeleteDoc(ctx, backend.DocID{Store: "s", Scope: "a", Key: "0"}); err != nil {
		t.Fatal(err)
	}
	if after := b.ckpt.written.Load(); after == before {
		t.Errorf("a remove did not count towards the next checkpoint (%d bytes before and after)", after)
	}
}

// TestReplaceDocPaths covers both ways of a replacement: a new key (one
// statement, which on a key that exists reports the current version), then
// replacements of it (the transaction), a replacement that expects another
// version (nothing written), and a new key after a delete.
func TestReplaceDocPaths(t *testing.T) {
	ctx := t.Context()
	b := openTest(t, options{})
	defer b.Close()
	id := backend.DocID{Store: "s", Scope: "a", Key: "k"}
	replace := func(json string, version, expect int64) (backend.Doc, error) {
		t.Helper()
		return b.ReplaceDoc(ctx, backend.DocReplace{DocID: id, JSON: []byte(json), Version: version, Expect: expect, Archive: expect > 0, Keep: 2})
	}
	put := func(json string, version, expect int64) {
		t.Helper()
		if d, err := replace(json, version, expect); err != nil || d.Version != version {
			t.Fatalf("set version %d over %d: %d (%v)", version, expect, d.Version, err)
		}
	}
	put(`{"v":1}`, 1, 0)
	if d, err := replace(`{"v":9}`, 1, 0); !errors.Is(err, backend.ErrDocChanged) || d.Version != 1 {
		t.Fatalf("a new key that exists: %+v, %v", d, err)
	}
	put(`{"v":2}`, 2, 1)
	put(`{"v":3}`, 3, 2)
	if d, err := replace(`{"v":9}`, 3, 2); !errors.Is(err, backend.ErrDocChanged) || d.Version != 3 {
		t.Fatalf("a stale replacement: %+v, %v", d, err)
	}
	put(`{"v":4}`, 4, 3) // the history keeps 3 and 2
	d, h, ok, err := b.GetDoc(ctx, id, true)
	if err != nil || !ok || string(d.JSON) != `{"v":4}` || len(h) != 2 || h[0].Version != 3 || h[1].Version != 2 {
		t.Fatalf("get: %+v %+v %v %v", d, h, ok, err)
	}
	if _, ok, err := b.DeleteDoc(ctx, id); err != nil || !ok {
		t.Fatal(ok, err)
	}
	if d, err := replace(`{"v":9}`, 5, 4); !errors.Is(err, backend.ErrDocChanged) || d.Version != 0 {
		t.Fatalf("a replacement of a deleted document: %+v, %v", d, err)
	}
	put(`{"v":5}`, 1, 0)
	if _, h, _, err := b.GetDoc(ctx, id, true); err != nil || len(h) != 0 {
		t.Fatalf("history after remove and set: %+v (%v)", h, err)
	}
}
