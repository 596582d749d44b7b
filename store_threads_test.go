package satchel_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/memory"
)

// countingHeads counts the calls of Head on a memory backend.
type countingHeads struct {
	*memory.Backend
	heads *atomic.Int64
}

func (b countingHeads) Head(ctx context.Context, thread int64) (backend.Commit, bool, error) {
	b.heads.Add(1)
	return b.Backend.Head(ctx, thread)
}

// TestThreadsReadsHeadsOnce: listing a scope's threads asks a
// backend.HeadsLister once for every head, not Head once a thread.
func TestThreadsReadsHeadsOnce(t *testing.T) {
	ctx := context.Background()
	b := countingHeads{memory.New(), &atomic.Int64{}}
	st := satchel.New(b)
	defer st.Close()
	for i := range 20 {
		ws, err := st.Workspace(ctx, "s", fmt.Sprintf("t%02d", i))
		if err != nil {
			t.Fatal(err)
		}
		for range i%3 + 1 {
			if err := ws.Append(ctx, "a", "x"); err != nil {
				t.Fatal(err)
			}
		}
	}
	b.heads.Store(0)
	ts, err := st.Threads(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if n := b.heads.Load(); n != 0 {
		t.Errorf("listing 20 threads called Head %d times", n)
	}
	if len(ts) != 20 {
		t.Fatalf("%d threads", len(ts))
	}
	for i, th := range ts {
		if th.Name != fmt.Sprintf("t%02d", i) || th.Head != int64(i%3+1) || th.HeadTime.IsZero() {
			t.Errorf("thread %d: %+v", i, th)
		}
	}
}
