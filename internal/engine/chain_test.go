package engine

import (
	"context"
	"errors"
	"fmt"
	"github.com/satchel-dev/satchel/backend/memory"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/satchel-dev/satchel/backend"
)

// waitRefs waits until n mutations hold or wait for thread's lock.
func waitRefs(t *testing.T, e *Engine, thread int64, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		e.lockMu.Lock()
		refs := 0
		if l := e.locks[thread]; l != nil {
			refs = l.refs
		}
		e.lockMu.Unlock()
		if refs == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d mutations of the thread, waited for %d", refs, n)
		}
		time.Sleep(time.Millisecond)
	}
}

func appendLine(e *Engine, thread int64, path, line string, gate <-chan struct{}) error {
	_, _, err := e.Update(context.Background(), thread, func(tx *Tx) (CommitInfo, error) {
		if gate != nil {
			<-gate
		}
		return CommitInfo{Meta: []byte(`{}`)}, tx.Append(context.Background(), path, line)
	})
	return err
}

// history checks that each commit of thread after the first adds at most
// one line to path, and returns the lines added, in order.
func history(t *testing.T, e *Engine, b backend.Backend, thread int64, path string) []string {
	t.Helper()
	ctx := context.Background()
	log, err := b.Log(ctx, thread, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	prev := ""
	for i := len(log) - 1; i >= 0; i-- {
		s, err := e.At(ctx, log[i])
		if err != nil {
			t.Fatal(err)
		}
		ent, ok, err := s.Get(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		content := ""
		if ok {
			if content, err = s.Content(ctx, &ent); err != nil {
				t.Fatal(err)
			}
		}
		if i < len(log)-1 {
			added, ok := strings.CutPrefix(content, prev)
			if !ok || strings.Count(added, "\n") > 1 {
				t.Fatalf("commit %d: %s went from %q to %q, not at most one line more", log[i].Seq, path, prev, content)
			}
			if added != "" {
				lines = append(lines, added)
			}
		}
		prev = content
	}
	return lines
}

// TestChainedCommitsGoTogether: sixteen mutations of one thread, queued
// behind one whose commit is on its way to the backend, are built on it
// and on each other and stored in one or two more Appends, not fifteen,
// each its own commit adding its own line.
func TestChainedCommitsGoTogether(t *testing.T) {
	g := newGated(0)
	th, err := g.Thread(context.Background(), "s", "main", true)
	if err != nil {
		t.Fatal(err)
	}
	e := New(g, Options{})
	g.release()
	if err := appendLine(e, th.ID, "log.txt", "start\n", nil); err != nil {
		t.Fatal(err)
	}
	g.mu.Lock()
	g.open, g.batches, g.commits = false, 0, 0
	g.mu.Unlock()

	const writers = 16
	first := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	wg.Go(func() { errs <- appendLine(e, th.ID, "log.txt", "line 0\n", first) })
	waitRefs(t, e, th.ID, 1)
	for i := 1; i < writers; i++ {
		wg.Go(func() { errs <- appendLine(e, th.ID, "log.txt", fmt.Sprintf("line %d\n", i), nil) })
	}
	waitRefs(t, e, th.ID, writers)
	close(first)
	g.waitHeld(1)
	// The first commit is held at the backend; the others chain to it
	// and let the thread go, all but the last.
	waitRefs(t, e, th.ID, 1)
	g.release()
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	g.mu.Lock()
	batches, commits := g.batches, g.commits
	g.mu.Unlock()
	if commits != writers || batches > 3 {
		t.Errorf("%d commits in %d Appends, want %d in at most 3", commits, batches, writers)
	}
	lines := history(t, e, g, th.ID, "log.txt")
	sort.Strings(lines)
	var want []string
	for i := range writers {
		want = append(want, fmt.Sprintf("line %d\n", i))
	}
	sort.Strings(want)
	if strings.Join(lines, "") != strings.Join(want, "") {
		t.Errorf("lines added by the commits: %q, want %q", lines, want)
	}
}

// TestChainRefusedWithItsParent: another writer takes the seq of a commit
// in flight; the commits chained to it must not land on the other
// writer's, and are built again on it.
func TestChainRefusedWithItsParent(t *testing.T) {
	g := newGated(0)
	ctx := context.Background()
	th, err := g.Thread(ctx, "s", "main", true)
	if err != nil {
		t.Fatal(err)
	}
	e := New(g, Options{})
	other := New(g.Backend, Options{}) // another process, not gated
	g.release()
	if err := appendLine(e, th.ID, "log.txt", "start\n", nil); err != nil {
		t.Fatal(err)
	}
	g.mu.Lock()
	g.open = false
	g.mu.Unlock()

	const writers = 4
	first := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, writers+1)
	wg.Go(func() { errs <- appendLine(e, th.ID, "log.txt", "line 0\n", first) })
	waitRefs(t, e, th.ID, 1)
	for i := 1; i < writers; i++ {
		wg.Go(func() { errs <- appendLine(e, th.ID, "log.txt", fmt.Sprintf("line %d\n", i), nil) })
	}
	// One waiter is not an append: it refuses to run once line 0 is
	// there, which it is only in a commit that will be refused.
	refused := errors.New("line 0 is there")
	wg.Go(func() {
		_, _, err := e.Update(ctx, th.ID, func(tx *Tx) (CommitInfo, error) {
			ent, _, err := tx.Get(ctx, "log.txt")
			if err != nil {
				return CommitInfo{}, err
			}
			c, err := tx.Content(ctx, &ent)
			if err != nil {
				return CommitInfo{}, err
			}
			if strings.Contains(c, "line 0\n") {
				return CommitInfo{}, refused
			}
			return CommitInfo{Meta: []byte(`{}`)}, tx.Put(ctx, "checked.md", "line 0 was not there\n")
		})
		errs <- err
	})
	waitRefs(t, e, th.ID, writers+1)
	close(first)
	g.waitHeld(1)
	// The other writer wins the seq the held commit was built for.
	if err := appendLine(other, th.ID, "log.txt", "other\n", nil); err != nil {
		t.Fatal(err)
	}
	g.release()
	wg.Wait()
	close(errs)
	var got []error
	for err := range errs {
		got = append(got, err)
	}
	nRefused := 0
	for _, err := range got {
		switch {
		case errors.Is(err, refused):
			nRefused++
		case err != nil:
			t.Fatal(err)
		}
	}
	lines := history(t, e, g, th.ID, "log.txt")
	if len(lines) == 0 || lines[0] != "other\n" {
		t.Fatalf("lines added: %q, want the other writer's first", lines)
	}
	if len(lines) != writers+1 {
		t.Errorf("lines added: %q, want the other writer's and %d", lines, writers)
	}
	// The checking mutation ran at least once on a head without line 0,
	// or after it landed, and refused only then.
	s, _, _, err := e.Head(ctx, th.ID)
	if err != nil {
		t.Fatal(err)
	}
	_, checked, err := s.Get(ctx, "checked.md")
	if err != nil {
		t.Fatal(err)
	}
	if checked == (nRefused == 1) {
		t.Errorf("checked.md present %v, refusals %d: want exactly one of them", checked, nRefused)
	}
}

// staleSpy counts the entries a backend refuses.
type staleSpy struct {
	*memory.Backend
	hidePartsAppender
	mu sync.Mutex
	n  int
	t  *testing.T
}

func (s *staleSpy) Append(ctx context.Context, ncs []backend.NewCommit) ([]backend.AppendResult, error) {
	res, err := s.Backend.Append(ctx, ncs)
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, r := range res {
		if r.Err != nil {
			s.n++
			desc := ""
			for _, nc := range ncs {
				desc += fmt.Sprintf(" [thread %d seq %d chained %v]", nc.Thread, nc.Seq, nc.Chained)
			}
			s.t.Logf("entry %d of%s: %v", i, desc, r.Err)
		}
	}
	return res, err
}

type concurrentSpy struct{ *staleSpy }

func (concurrentSpy) AppendConcurrency() int { return 4 }

// TestChainsOfThreadsShareABatch: the chains of several threads, in one
// process, go in shared batches, one at a time or several at once
// (backend.ConcurrentAppender); none is ever refused: each chained commit
// follows its parent in its Append.
func TestChainsOfThreadsShareABatch(t *testing.T) {
	for _, parallel := range []bool{false, true} {
		t.Run(fmt.Sprintf("concurrent=%v", parallel), func(t *testing.T) {
			ctx := context.Background()
			m := memory.New()
			sp := &staleSpy{Backend: m, t: t}
			var b backend.Backend = sp
			if parallel {
				b = concurrentSpy{sp}
			}
			e := New(b, Options{})
			var wg sync.WaitGroup
			for w := range 6 {
				th, err := m.Thread(ctx, "s", fmt.Sprintf("t%d", w), true)
				if err != nil {
					t.Fatal(err)
				}
				for i := range 4 {
					wg.Go(func() {
						for k := range 10 {
							put(t, e, th.ID, map[string]string{fmt.Sprintf("w%d-%d", i, k): "x"})
						}
					})
				}
			}
			wg.Wait()
			sp.mu.Lock()
			defer sp.mu.Unlock()
			if sp.n > 0 {
				t.Errorf("%d entries refused in one process", sp.n)
			}
		})
	}
}
