package backendtest

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/satchel-dev/satchel/backend"
)

func checkConcurrentOneThread(t *testing.T, b backend.Backend) {
	ctx := t.Context()
	th := newThread(t, b, "s", "main")
	const writers, total = 8, 60
	type win struct {
		seq, id int64
		writer  int
	}
	var (
		mu    sync.Mutex
		wins  []win
		stale int
		wg    sync.WaitGroup
	)
	errc := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for {
				h, ok, err := b.Head(ctx, th.ID)
				if err != nil {
					errc <- fmt.Errorf("Head: %w", err)
					return
				}
				var seq int64 = 1
				if ok {
					seq = h.Seq + 1
				}
				if seq > total {
					return
				}
				c := backend.NewCommit{Thread: th.ID, Seq: seq, Root: fmt.Appendf(nil, "w%d-s%d", w, seq), Meta: []byte("{}")}
				res, err := b.Append(ctx, []backend.NewCommit{c})
				if err != nil {
					errc <- fmt.Errorf("Append: %w", err)
					return
				}
				switch err := res[0].Err; {
				case err == nil:
					mu.Lock()
					wins = append(wins, win{seq, res[0].Commit.ID, w})
					mu.Unlock()
				case errors.Is(err, backend.ErrStale):
					mu.Lock()
					stale++
					mu.Unlock()
				default:
					errc <- fmt.Errorf("Append entry: %w", err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	if len(wins) != total {
		t.Fatalf("%d appends succeeded for %d sequence numbers (%d stale)", len(wins), total, stale)
	}
	bySeq := map[int64]win{}
	for _, w := range wins {
		if prev, dup := bySeq[w.seq]; dup {
			t.Errorf("seq %d stored twice (writers %d and %d)", w.seq, prev.writer, w.writer)
		}
		bySeq[w.seq] = w
	}
	l, err := b.Log(ctx, th.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(l) != total {
		t.Fatalf("log has %d commits, want %d", len(l), total)
	}
	for i, c := range l {
		want := int64(total - i)
		w := bySeq[want]
		if c.Seq != want || c.ID != w.id || string(c.Root) != fmt.Sprintf("w%d-s%d", w.writer, want) {
			t.Errorf("log entry %d: %s; the winner of seq %d was writer %d with ID %d", i, fmtCommit(c), want, w.writer, w.id)
		}
		if i > 0 && c.ID >= l[i-1].ID {
			t.Errorf("IDs do not grow with seq: seq %d has ID %d, seq %d has ID %d", c.Seq, c.ID, l[i-1].Seq, l[i-1].ID)
		}
	}
	t.Logf("%d writers, %d commits, %d stale attempts", writers, total, stale)
}

func checkConcurrentManyThreads(t *testing.T, b backend.Backend) {
	ctx := t.Context()
	const writers, each = 8, 15
	ths := make([]backend.Thread, writers)
	for i := range ths {
		ths[i] = newThread(t, b, "s", fmt.Sprintf("t%d", i))
	}
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for i, th := range ths {
		wg.Go(func() {
			for seq := int64(1); seq <= each; seq++ {
				res, err := b.Append(ctx, []backend.NewCommit{nc(th.ID, seq)})
				if err == nil {
					err = res[0].Err
				}
				if err != nil {
					errs[i] = fmt.Errorf("thread %d seq %d: %w", th.ID, seq, err)
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	ids := map[int64]bool{}
	for _, th := range ths {
		l, err := b.Log(ctx, th.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(l) != each {
			t.Errorf("thread %d has %d commits, want %d", th.ID, len(l), each)
		}
		for _, c := range l {
			if !bytes.Equal(c.Root, nc(th.ID, c.Seq).Root) {
				t.Errorf("thread %d seq %d has root %q", th.ID, c.Seq, c.Root)
			}
			if ids[c.ID] {
				t.Errorf("commit ID %d given twice", c.ID)
			}
			ids[c.ID] = true
		}
	}
}

func checkConcurrentGroupCommit(t *testing.T, b backend.Backend) {
	ctx := t.Context()
	// Each writer sends Appends carrying one entry for each of its threads,
	// as an engine doing group commit does.
	const writers, perWriter, rounds = 4, 3, 8
	ths := make([][]backend.Thread, writers)
	for w := range ths {
		for i := range perWriter {
			ths[w] = append(ths[w], newThread(t, b, "s", fmt.Sprintf("w%d-%d", w, i)))
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for w := range writers {
		wg.Go(func() {
			for r := range rounds {
				batch := make([]backend.NewCommit, 0, perWriter)
				for _, th := range ths[w] {
					batch = append(batch, nc(th.ID, int64(r+1)))
				}
				res, err := b.Append(ctx, batch)
				if err != nil {
					errs[w] = err
					return
				}
				for i, rr := range res {
					if rr.Err != nil || rr.Commit.Seq != int64(r+1) || rr.Commit.Thread != batch[i].Thread {
						errs[w] = fmt.Errorf("round %d entry %d: %s, %v", r, i, fmtCommit(rr.Commit), rr.Err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	for _, row := range ths {
		for _, th := range row {
			if got := headSeq(t, b, th.ID); got != rounds {
				t.Errorf("thread %s head %d, want %d", th.Name, got, rounds)
			}
		}
	}
}

// checkConcurrentDropRequires races forks of a commit against its drop:
// every fork that was stored must have been stored while the commit was
// retained, so a fork that succeeds after the drop returned is a bug. The
// check is one-sided (it cannot see inside the race), but it catches
// backends that check Requires outside the append's transaction.
func checkConcurrentDropRequires(t *testing.T, b backend.Backend) {
	ctx := t.Context()
	for round := range 10 {
		src := newThread(t, b, "s", fmt.Sprintf("src%d", round))
		commits(t, b, src.ID, 3)
		const forks = 4
		fs := make([]backend.Thread, forks)
		for i := range fs {
			fs[i] = newThread(t, b, "s", fmt.Sprintf("fork%d-%d", round, i))
		}
		var wg sync.WaitGroup
		dropped := make(chan struct{})
		errs := make([]error, forks)
		afterDrop := make([]bool, forks)
		wg.Go(func() {
			defer close(dropped)
			if err := b.Drop(ctx, src.ID, []int64{2}); err != nil {
				t.Errorf("Drop: %v", err)
			}
		})
		for i := range forks {
			wg.Go(func() {
				if i%2 == 1 {
					<-dropped
					afterDrop[i] = true
				}
				c := nc(fs[i].ID, 1)
				c.Requires = &backend.CommitID{Thread: src.ID, Seq: 2}
				res, err := b.Append(ctx, []backend.NewCommit{c})
				if err != nil {
					errs[i] = err
					return
				}
				errs[i] = res[0].Err
			})
		}
		wg.Wait()
		for i, err := range errs {
			switch {
			case err == nil && afterDrop[i]:
				t.Errorf("round %d: a fork of a commit dropped before it began was stored", round)
			case err != nil && !errors.Is(err, backend.ErrNotRetained):
				t.Errorf("round %d: fork %d: %v, want success or ErrNotRetained", round, i, err)
			}
		}
		if _, err := b.CommitAt(ctx, src.ID, 2); !errors.Is(err, backend.ErrNoCommit) {
			t.Errorf("round %d: the required commit was not dropped: %v", round, err)
		}
	}
}
