package engine

import (
	"context"
	"errors"
	"testing"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/memory"
)

// TestGuard: a head the Guard refuses refuses Update and Point after it,
// also when another engine (another process) made that head and this
// engine's cached head is older; Mark appends without asking it, keeping
// the tree; under Unguarded the Guard is not asked.
func TestGuard(t *testing.T) {
	ctx := context.Background()
	frozen := errors.New("frozen")
	guard := func(h backend.Commit) error {
		if string(h.Meta) == "freeze" {
			return frozen
		}
		return nil
	}
	b := memory.New()
	e := New(b, Options{Guard: guard})
	other := New(b, Options{Guard: guard})
	th, err := b.Thread(ctx, "s", "main", true)
	if err != nil {
		t.Fatal(err)
	}
	first := put(t, e, th.ID, map[string]string{"a": "1"}) // e caches this head
	c, changed, err := other.Mark(ctx, th.ID, []byte("freeze"), func(h backend.Commit) (bool, error) {
		return string(h.Meta) == "freeze", nil
	})
	if err != nil || !changed || c.Seq != 2 {
		t.Fatalf("Mark = %+v, %v, %v", c, changed, err)
	}
	write := func(e *Engine, ctx context.Context) error {
		_, _, err := e.Update(ctx, th.ID, func(tx *Tx) (CommitInfo, error) {
			return CommitInfo{}, tx.Put(ctx, "b", "2")
		})
		return err
	}
	if err := write(e, ctx); !errors.Is(err, frozen) {
		t.Errorf("Update after a refused head (this engine's cache older): %v", err)
	}
	if _, err := e.Point(ctx, th.ID, first, nil, "", nil); !errors.Is(err, frozen) {
		t.Errorf("Point after a refused head: %v", err)
	}
	snap, _, _, err := e.Head(ctx, th.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ent, ok, err := snap.Get(ctx, "a"); err != nil || !ok || ent.Size != 1 {
		t.Errorf("the marked head's tree lost a: %+v, %v, %v", ent, ok, err)
	}
	if _, changed, err := other.Mark(ctx, th.ID, []byte("freeze"), func(h backend.Commit) (bool, error) {
		return string(h.Meta) == "freeze", nil
	}); err != nil || changed {
		t.Errorf("a Mark its check skips: changed %v, %v", changed, err)
	}
	if err := write(e, Unguarded(ctx)); err != nil {
		t.Errorf("Update under Unguarded: %v", err)
	}
	if err := write(other, ctx); err != nil {
		t.Errorf("Update after the head moved past the refused one: %v", err)
	}
}
