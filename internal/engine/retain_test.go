package engine

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/memory"
)

// recordDrops records what Retain asks the backend to drop.
type recordDrops struct {
	*memory.Backend
	drops []int64
}

func (b *recordDrops) Drop(ctx context.Context, thread int64, seqs []int64) error {
	b.drops = append(b.drops, seqs...)
	return b.Backend.Drop(ctx, thread, seqs)
}

// TestRetainNeverDropsHead: the head is never dropped, whatever the
// policy allows: the engine never asks the backend to (the backend drops
// what it is told).
func TestRetainNeverDropsHead(t *testing.T) {
	ctx := context.Background()
	for _, p := range []Policy{{MaxCommits: 1}, {MaxAge: time.Nanosecond}, {MaxAge: time.Nanosecond, MaxCheckpoints: 1}} {
		mb := memory.New()
		now := time.Now()
		mb.SetClock(func() time.Time { return now })
		b := &recordDrops{Backend: mb}
		e := New(b, Options{})
		th, err := b.Thread(ctx, "s", "main", true)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 4 {
			put(t, e, th.ID, map[string]string{"a": string(rune('a' + i))})
		}
		if err := b.SetCheckpoint(ctx, th.ID, "last", 4); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Hour)
		if _, err := e.Retain(ctx, th.ID, p); err != nil {
			t.Fatal(err)
		}
		if slices.Contains(b.drops, 4) || len(b.drops) != 3 {
			t.Errorf("policy %+v: dropped %v, want 1, 2 and 3 (never the head, 4)", p, b.drops)
		}
		if h, ok, err := b.Head(ctx, th.ID); err != nil || !ok || h.Seq != 4 {
			t.Errorf("policy %+v: head %d %v %v", p, h.Seq, ok, err)
		}
	}
}

var _ backend.Backend = (*recordDrops)(nil)
