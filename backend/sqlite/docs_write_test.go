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
	deadline := time.Now().Add(10 * time.Second)
	for b.ckpt.runs.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d sets, no checkpoint ran on the checkpointer's goroutine", n)
		}
		time.Sleep(time.Millisecond)
	}
	before := b.ckpt.written.Load()
	if _, err := b.RemoveDoc(ctx, backend.DocID{Store: "s", Scope: "a", Key: "0"}); err != nil {
		t.Fatal(err)
	}
	if after := b.ckpt.written.Load(); after == before {
		t.Errorf("a remove did not count towards the next checkpoint (%d bytes before and after)", after)
	}
}
