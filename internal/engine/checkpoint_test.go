package engine

import (
	"context"
	"errors"
	"testing"

	"github.com/satchel-dev/satchel/backend"
)

// TestCheckpointEmptyThread: a checkpoint of a thread without commits is
// an empty commit that carries the name, and the head the engine caches
// is that commit, so the next write goes on it at once.
func TestCheckpointEmptyThread(t *testing.T) {
	ctx := context.Background()
	e, th := newThread(t)
	e.NewThread(th)
	ok := func(backend.Commit) error { return nil }
	c, err := e.Checkpoint(ctx, th, "start", []byte("meta"), ok)
	if err != nil || c.Seq != 1 {
		t.Fatalf("checkpoint of an empty thread: %+v, %v", c, err)
	}
	if h, cached := e.heads.get(th); !cached || h.ID != c.ID {
		t.Fatalf("the cached head is %+v (cached %v), not the checkpoint's commit %+v", h, cached, c)
	}
	if seq, err := e.b.CheckpointSeq(ctx, th, "start"); err != nil || seq != 1 {
		t.Fatalf("checkpoint start: seq %d, %v", seq, err)
	}
	if next := put(t, e, th, map[string]string{"a.md": "a"}); next.Seq != 2 {
		t.Fatalf("the write after the checkpoint is seq %d", next.Seq)
	}
	c2, err := e.Checkpoint(ctx, th, "after", nil, ok)
	if err != nil || c2.Seq != 2 {
		t.Fatalf("checkpoint of the head: %+v, %v", c2, err)
	}
	refused := errors.New("refused")
	if _, err := e.Checkpoint(ctx, th, "no", nil, func(backend.Commit) error { return refused }); !errors.Is(err, refused) {
		t.Fatalf("a refused checkpoint: %v", err)
	}
	if _, err := e.b.CheckpointSeq(ctx, th, "no"); err == nil {
		t.Fatal("a refused checkpoint was named")
	}
	if _, err := e.Checkpoint(ctx, th, "after", nil, ok); !errors.Is(err, backend.ErrCheckpointExists) {
		t.Fatalf("a name taken: %v", err)
	}
}
