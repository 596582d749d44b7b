package sqlite

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/satchel-dev/satchel/backend"
)

// TestPollChanges: a backend learns of another's commit to its file (as
// another process's) through the WAL index's header, and through
// data_version where the index cannot be read.
func TestPollChanges(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "w.db")
	a, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	th, err := b.Thread(ctx, "x", "w", true)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := a.readHeads.idx.header(); !ok {
		t.Fatal("the WAL index cannot be read: the first case would test the second")
	}
	seq := int64(0)
	for _, c := range []struct {
		name string
		idx  *walIndex
	}{{"WAL index", a.readHeads.idx}, {"data_version", nil}} {
		t.Run(c.name, func(t *testing.T) {
			wctx, cancel := context.WithCancel(ctx)
			defer cancel()
			signals := make(chan string, 100)
			p := a.newPoller(wctx, c.idx)
			go p.run(wctx, func(scope string) { signals <- scope })
			// The baseline was read: the next commit is seen.
			seq++
			res, err := b.Append(ctx, []backend.NewCommit{{Thread: th.ID, Seq: seq, Root: []byte("r"), Meta: []byte("{}")}})
			if err != nil || res[0].Err != nil {
				t.Fatal(err, res)
			}
			select {
			case <-signals:
			case <-time.After(30 * time.Second):
				t.Fatal("no change seen")
			}
		})
	}
}
