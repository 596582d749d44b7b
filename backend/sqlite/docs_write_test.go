package sqlite

import (
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
		if _, err := b.PutDoc(ctx, backend.DocPut{DocID: backend.DocID{Store: "s", Scope: "a", Key: fmt.Sprint(i)}, JSON: doc}); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-b.ckpt.ran:
	case <-time.After(time.Minute):
		t.Fatalf("%d sets, no checkpoint ran on the checkpointer's goroutine", n)
	}
	before := b.ckpt.written.Load()
	if _, err := b.RemoveDoc(ctx, backend.DocID{Store: "s", Scope: "a", Key: "0"}); err != nil {
		t.Fatal(err)
	}
	if after := b.ckpt.written.Load(); after == before {
		t.Errorf("a remove did not count towards the next checkpoint (%d bytes before and after)", after)
	}
}

// TestPutDocPaths covers both ways of a set: a new
// key (one statement), then replacements of it and of a removed key, which
// take the transaction.
func TestPutDocPaths(t *testing.T) {
	ctx := t.Context()
	b := openTest(t, options{})
	defer b.Close()
	put := func(key, json string, want int64) {
		t.Helper()
		d, err := b.PutDoc(ctx, backend.DocPut{DocID: backend.DocID{Store: "s", Scope: "a", Key: key}, JSON: []byte(json), Versions: 2})
		if err != nil || d.Version != want {
			t.Fatalf("set %s: version %d (%v), want %d", key, d.Version, err, want)
		}
	}
	put("k", `{"v":1}`, 1)
	put("k", `{"v":2}`, 2)
	put("k", `{"v":3}`, 3)
	d, h, ok, err := b.GetDoc(ctx, backend.DocID{Store: "s", Scope: "a", Key: "k"}, true, false)
	if err != nil || !ok || string(d.JSON) != `{"v":3}` || len(h) != 2 || h[0].Version != 2 || h[1].Version != 1 {
		t.Fatalf("get: %+v %+v %v %v", d, h, ok, err)
	}
	if _, err := b.RemoveDoc(ctx, backend.DocID{Store: "s", Scope: "a", Key: "k"}); err != nil {
		t.Fatal(err)
	}
	put("k", `{"v":4}`, 1)
	if _, h, _, err := b.GetDoc(ctx, backend.DocID{Store: "s", Scope: "a", Key: "k"}, true, false); err != nil || len(h) != 0 {
		t.Fatalf("history after remove and set: %+v (%v)", h, err)
	}
}
