package engine

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/memory"
)

// gatedBackend holds every Append until the test opens the gate, and
// counts how many are held at once.
type gatedBackend struct {
	*memory.Backend
	hidePartsAppender
	mu       sync.Mutex
	cond     *sync.Cond
	held     int
	maxHeld  int
	open     bool
	batches  int
	commits  int
	parallel int // what AppendConcurrency says; 0: not a ConcurrentAppender
}

// hidePartsAppender hides AppendParts, so that every batch goes through
// Append: embedded beside a backend at the same depth, the two methods of
// one name are ambiguous and the wrapper has neither (satcheltest.Hide,
// which does it with backend.As, imports this package's users).
type hidePartsAppender struct{}

func (hidePartsAppender) AppendParts() {}

type concurrentGated struct{ *gatedBackend }

func (c concurrentGated) AppendConcurrency() int { return c.parallel }

func newGated(parallel int) *gatedBackend {
	g := &gatedBackend{Backend: memory.New(), parallel: parallel}
	g.cond = sync.NewCond(&g.mu)
	return g
}

func (g *gatedBackend) Append(ctx context.Context, ncs []backend.NewCommit) ([]backend.AppendResult, error) {
	g.mu.Lock()
	g.held++
	g.maxHeld = max(g.maxHeld, g.held)
	g.batches++
	g.commits += len(ncs)
	g.cond.Broadcast()
	for !g.open {
		g.cond.Wait()
	}
	g.held--
	g.mu.Unlock()
	return g.Backend.Append(ctx, ncs)
}

// waitHeld waits until n Appends are held, or all writers are queued
// behind fewer.
func (g *gatedBackend) waitHeld(n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for g.held < n {
		g.cond.Wait()
	}
}

func (g *gatedBackend) release() {
	g.mu.Lock()
	g.open = true
	g.cond.Broadcast()
	g.mu.Unlock()
}

// TestCommitterConcurrentBatches: with a backend.ConcurrentAppender saying
// 3, three batches are stored at once and the writers queued behind them
// go as group commits; without it, one batch at a time. Nothing is lost
// either way.
func TestCommitterConcurrentBatches(t *testing.T) {
	for _, parallel := range []int{0, 3} {
		t.Run(fmt.Sprint(parallel), func(t *testing.T) {
			ctx := context.Background()
			g := newGated(parallel)
			var b backend.Backend = g
			if parallel > 0 {
				b = concurrentGated{g}
			}
			if _, ok := b.(backend.PartsAppender); ok {
				t.Fatal("AppendParts is not hidden")
			}
			e := New(b, Options{})
			const writers = 12
			threads := make([]int64, writers)
			for i := range threads {
				th, err := g.Thread(ctx, "s", fmt.Sprint("t", i), true)
				if err != nil {
					t.Fatal(err)
				}
				threads[i] = th.ID
			}
			var wg sync.WaitGroup
			errs := make(chan error, writers)
			for i := range writers {
				wg.Go(func() {
					_, _, err := e.Update(ctx, threads[i], func(tx *Tx) (CommitInfo, error) {
						return CommitInfo{}, tx.Put(ctx, "f", "x")
					})
					errs <- err
				})
			}
			want := max(1, parallel)
			g.waitHeld(want)
			// Every writer that is not in a held batch queues behind
			// them (the first leader may take some into its batch as it
			// yields): wait until all have reached one or the other.
			waitPending(g, e.commits, writers)
			g.release()
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			if g.maxHeld != want {
				t.Errorf("%d Appends at once, want %d", g.maxHeld, want)
			}
			if g.commits != writers {
				t.Errorf("%d commits stored, want %d", g.commits, writers)
			}
			// The held batches carried one commit each; the queued ones
			// went in as few batches as the slots: at most 2*want.
			if g.batches > 2*want {
				t.Errorf("%d batches for %d writers with %d slots: the queued commits were not grouped", g.batches, writers, want)
			}
			for _, th := range threads {
				if _, ok, err := g.Head(ctx, th); err != nil || !ok {
					t.Fatalf("thread %d: head %v %v", th, ok, err)
				}
			}
		})
	}
}

// waitPending waits until n commits are in held batches or wait in the
// committer's queue.
func waitPending(g *gatedBackend, c *committer, n int) {
	for {
		g.mu.Lock()
		held := g.commits
		g.mu.Unlock()
		c.mu.Lock()
		q := len(c.queue)
		c.mu.Unlock()
		if held+q >= n {
			return
		}
		runtime.Gosched()
	}
}

// headCounter counts Head calls.
type headCounter struct {
	*memory.Backend
	hidePartsAppender
	heads, appends int
}

func (h *headCounter) Head(ctx context.Context, thread int64) (backend.Commit, bool, error) {
	h.heads++
	return h.Backend.Head(ctx, thread)
}

func (h *headCounter) Append(ctx context.Context, ncs []backend.NewCommit) ([]backend.AppendResult, error) {
	h.appends++
	return h.Backend.Append(ctx, ncs)
}

// TestStaleAppendReportsTheHead: a mutation whose cached head another
// process moved rebuilds on the head the lost compare-and-swap reported,
// without reading it again, and loses nothing of either writer.
func TestStaleAppendReportsTheHead(t *testing.T) {
	ctx := context.Background()
	m := memory.New()
	th, err := m.Thread(ctx, "s", "main", true)
	if err != nil {
		t.Fatal(err)
	}
	a, hb := New(m, Options{}), &headCounter{Backend: m}
	b := New(hb, Options{})
	put(t, b, th.ID, map[string]string{"b1": "1"}) // b caches its head
	put(t, a, th.ID, map[string]string{"a": "2"})  // and a moves it
	hb.heads, hb.appends = 0, 0
	put(t, b, th.ID, map[string]string{"b2": "3"})
	if hb.appends != 2 || hb.heads != 0 {
		t.Errorf("after a lost race: %d Appends and %d Head reads, want 2 and 0", hb.appends, hb.heads)
	}
	s, _, _, err := a.Head(ctx, th.ID)
	if err != nil {
		t.Fatal(err)
	}
	model(t, a, s, map[string]string{"b1": "1", "a": "2", "b2": "3"})
}
