package engine

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/memory"
)

// lockingBackend is a memory backend with a backend.ThreadLocker: one lock
// a thread, in this process, standing for the cross-process one. It counts
// the locks taken, the unlocks and the Head reads; gate, when set, holds
// every LockThread until it is closed.
type lockingBackend struct {
	*memory.Backend
	hidePartsAppender
	hidePartsReader
	mu    sync.Mutex
	held  map[int64]chan struct{} // a thread's lock, a token
	locks int
	heads int
	packs int // packs returned with a lock
	// packReads counts the Pack reads of the engine.
	packReads int
	gate      chan struct{}
	unlocks   chan int64
	// unlocked counts the unlocks waitUnlocks has waited for.
	unlocked int
	// others makes every Append report the thread contended.
	others bool
	// batches are the sizes of the Appends, in order.
	batches []int
}

func newLockingBackend(m *memory.Backend) *lockingBackend {
	return &lockingBackend{Backend: m, held: map[int64]chan struct{}{}, unlocks: make(chan int64, 100)}
}

func (l *lockingBackend) token(thread int64) chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.held[thread]
	if c == nil {
		c = make(chan struct{}, 1)
		l.held[thread] = c
	}
	return c
}

func (l *lockingBackend) LockThread(ctx context.Context, thread, known int64) (backend.Commit, bool, string, func(), error) {
	l.mu.Lock()
	gate := l.gate
	l.mu.Unlock()
	if gate != nil {
		<-gate
	}
	tok := l.token(thread)
	select {
	case tok <- struct{}{}:
	case <-ctx.Done():
		return backend.Commit{}, false, "", nil, ctx.Err()
	}
	l.mu.Lock()
	l.locks++
	l.mu.Unlock()
	c, found, err := l.Backend.Head(ctx, thread)
	if err != nil {
		<-tok
		return backend.Commit{}, false, "", nil, err
	}
	var pack string
	if found && c.ID != known {
		l.packs++
		if pack, err = l.Backend.Pack(ctx, c.ID); err != nil {
			<-tok
			return backend.Commit{}, false, "", nil, err
		}
	}
	var once sync.Once
	return c, found, pack, func() {
		once.Do(func() {
			<-tok
			l.unlocks <- thread
		})
	}, nil
}

func (l *lockingBackend) Head(ctx context.Context, thread int64) (backend.Commit, bool, error) {
	l.mu.Lock()
	l.heads++
	l.mu.Unlock()
	return l.Backend.Head(ctx, thread)
}

func (l *lockingBackend) Append(ctx context.Context, ncs []backend.NewCommit) ([]backend.AppendResult, error) {
	res, err := l.Backend.Append(ctx, ncs)
	l.mu.Lock()
	l.batches = append(l.batches, len(ncs))
	others := l.others
	l.mu.Unlock()
	for i := range res {
		res[i].Contended = others
	}
	return res, err
}

func (l *lockingBackend) Pack(ctx context.Context, id int64) (string, error) {
	l.mu.Lock()
	l.packReads++
	l.mu.Unlock()
	return l.Backend.Pack(ctx, id)
}

// hidePartsReader hides PackParts, so that the engine reads and caches
// packs as it does from a server.
type hidePartsReader struct{}

func (hidePartsReader) PackParts() {}

func (l *lockingBackend) batchSizes() []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.batches)
}

func (l *lockingBackend) counts() (locks, heads int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.locks, l.heads
}

// waitUnlocks waits for the unlock of every lock taken so far (the engine
// unlocks after the mutation returned), and fails if there are more.
func (l *lockingBackend) waitUnlocks(t *testing.T) {
	t.Helper()
	l.mu.Lock()
	n := l.locks - l.unlocked
	l.unlocked = l.locks
	l.mu.Unlock()
	for range n {
		<-l.unlocks
	}
	select {
	case th := <-l.unlocks:
		t.Errorf("an unlock more than the locks taken (thread %d)", th)
	default:
	}
}

// sharedThread returns an engine over a locking memory backend and a
// thread of it, "shared".
func sharedThread(t *testing.T) (*Engine, *lockingBackend, backend.Thread) {
	t.Helper()
	m := memory.New()
	th, err := m.Thread(context.Background(), "s", "shared", true)
	if err != nil {
		t.Fatal(err)
	}
	lb := newLockingBackend(m)
	return New(lb, Options{}), lb, th
}

// TestUncontendedThreadNeverLocks: the writers of threads no other process
// writes take no cross-process lock and read no head they would not read
// without the capability.
func TestUncontendedThreadNeverLocks(t *testing.T) {
	ctx := context.Background()
	m := memory.New()
	lb := newLockingBackend(m)
	e := New(lb, Options{})
	var wg sync.WaitGroup
	for w := range 4 {
		th, err := m.Thread(ctx, "s", fmt.Sprintf("t%d", w), true)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 4 {
			wg.Go(func() {
				for k := range 5 {
					put(t, e, th.ID, map[string]string{fmt.Sprintf("w%d-%d", i, k): "x"})
				}
			})
		}
	}
	wg.Wait()
	if locks, heads := lb.counts(); locks != 0 || heads > 4 {
		t.Errorf("80 mutations of 4 threads of one process: %d locks and %d Head reads, want 0 and at most one a thread", locks, heads)
	}
}

// TestContendedThreadTakesTheLock: after a race lost to another process, a
// thread's mutations take its lock and build on the head read under it
// (no Head read of their own); a thread that lost no race does not.
func TestContendedThreadTakesTheLock(t *testing.T) {
	ctx := context.Background()
	m := memory.New()
	th, err := m.Thread(ctx, "s", "shared", true)
	if err != nil {
		t.Fatal(err)
	}
	quiet, err := m.Thread(ctx, "s", "quiet", true)
	if err != nil {
		t.Fatal(err)
	}
	lb := newLockingBackend(m)
	a, b := New(m, Options{}), New(lb, Options{})
	b.contendFor = time.Hour // not the clock's to decide here
	put(t, b, th.ID, map[string]string{"b1": "1"})
	put(t, b, quiet.ID, map[string]string{"q1": "1"})
	if locks, _ := lb.counts(); locks != 0 {
		t.Fatalf("%d locks before any race", locks)
	}
	put(t, a, th.ID, map[string]string{"a": "2"}) // another process moves the head
	put(t, b, th.ID, map[string]string{"b2": "3"})
	lb.waitUnlocks(t)
	if locks, _ := lb.counts(); locks != 1 {
		t.Errorf("a mutation that lost a race: %d locks, want 1 (taken for the rebuild)", locks)
	}
	_, heads0 := lb.counts()
	lb.mu.Lock()
	packs0, reads0 := lb.packs, lb.packReads
	lb.mu.Unlock()
	put(t, a, th.ID, map[string]string{"a2": "4"})
	put(t, b, th.ID, map[string]string{"b3": "5"})
	lb.waitUnlocks(t)
	locks, heads := lb.counts()
	if locks != 2 || heads != heads0 {
		t.Errorf("the next mutation of the contended thread: %d locks and %d more Head reads, want 2 and 0", locks, heads-heads0)
	}
	lb.mu.Lock()
	packs, reads := lb.packs-packs0, lb.packReads-reads0
	lb.mu.Unlock()
	if packs != 1 || reads != 0 {
		t.Errorf("building on another process's commit: %d packs with the lock and %d Pack reads, want 1 and 0 (the head's pack comes with the lock)", packs, reads)
	}
	put(t, b, quiet.ID, map[string]string{"q2": "2"})
	if locks, _ := lb.counts(); locks != 2 {
		t.Errorf("a thread without races took the lock (%d locks)", locks)
	}
	s, _, _, err := a.Head(ctx, th.ID)
	if err != nil {
		t.Fatal(err)
	}
	model(t, a, s, map[string]string{"b1": "1", "a": "2", "b2": "3", "a2": "4", "b3": "5"})
}

// TestContendedAppendTakesTheLock: a writer that never loses a race
// learns from an Append that others wait for the thread's lock, and takes
// it from its next mutation.
func TestContendedAppendTakesTheLock(t *testing.T) {
	e, lb, th := sharedThread(t)
	e.contendFor = time.Hour
	put(t, e, th.ID, map[string]string{"1": "1"})
	lb.mu.Lock()
	lb.others = true
	lb.mu.Unlock()
	put(t, e, th.ID, map[string]string{"2": "2"})
	if locks, _ := lb.counts(); locks != 0 {
		t.Fatalf("%d locks before an Append reported the thread contended", locks)
	}
	put(t, e, th.ID, map[string]string{"3": "3"})
	lb.waitUnlocks(t)
	if locks, _ := lb.counts(); locks != 1 {
		t.Errorf("after an Append reported the thread contended: %d locks, want 1", locks)
	}
}

// TestWaitingUpdateReusesTheHold: mutations of a contended thread that
// wait in this process for the one holding the cross-process lock commit
// under the same hold: one lock, one unlock for them all.
func TestWaitingUpdateReusesTheHold(t *testing.T) {
	ctx := context.Background()
	e, lb, th := sharedThread(t)
	e.holdFor = time.Hour // the commits' bound only, not the clock's
	const n = 6           // < holdCommits
	wg := holdWithWaiters(t, e, lb, th.ID, n, func(i int) {
		put(t, e, th.ID, map[string]string{fmt.Sprintf("f%d", i): "x"})
	})
	wg.Wait()
	lb.waitUnlocks(t)
	if locks, _ := lb.counts(); locks != 1 {
		t.Errorf("%d mutations waiting for each other: %d locks, want 1", n, locks)
	}
	s, _, _, err := e.Head(ctx, th.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for i := range n {
		want[fmt.Sprintf("f%d", i)] = "x"
	}
	model(t, e, s, want)
}

// TestHoldNotLostToAFastWaiter: mutations of a contended thread that end
// at once (their function refuses) hand the hold on to each other; the
// one that ends last must release the lock, whichever order the waiters
// take the in-process lock and drop their references in. A hold kept for
// a waiter already gone is lost, and the thread's lock with it: every
// later writer, in this process and others, waits forever.
func TestHoldNotLostToAFastWaiter(t *testing.T) {
	ctx := context.Background()
	e, lb, th := sharedThread(t)
	lb.unlocks = make(chan int64, 1<<16)
	e.holdFor = time.Hour
	refused := fmt.Errorf("refused")
	for round := range 200 {
		e.markContended(th.ID)
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				_, _, err := e.Update(ctx, th.ID, func(tx *Tx) (CommitInfo, error) { return CommitInfo{}, refused })
				if err != refused {
					t.Errorf("round %d: %v, want the function's refusal", round, err)
				}
			})
		}
		wg.Wait()
		// Every lock taken is released (the engine unlocks without
		// waiting): the thread's token comes free.
		deadline := time.Now().Add(30 * time.Second)
		tok := lb.token(th.ID)
		for len(tok) != 0 {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: the thread's lock is still held after every mutation ended", round)
			}
			runtime.Gosched()
		}
	}
}

// holdWithWaiters starts n mutations (do) of a contended thread whose
// lock is gated, waits until all are in (one at the lock, the others for
// the thread in this process), and opens the gate.
func holdWithWaiters(t *testing.T, e *Engine, lb *lockingBackend, th int64, n int, do func(i int)) *sync.WaitGroup {
	t.Helper()
	e.markContended(th)
	gate := make(chan struct{})
	lb.mu.Lock()
	lb.gate = gate
	lb.mu.Unlock()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { do(i) })
	}
	for {
		e.lockMu.Lock()
		l := e.locks[th]
		refs := 0
		if l != nil {
			refs = l.refs
		}
		e.lockMu.Unlock()
		if refs == n {
			break
		}
		runtime.Gosched()
	}
	close(gate)
	return &wg
}

// TestHoldGathersWaiters: when a mutation takes a contended thread's
// cross-process lock while others of this process wait for the thread,
// their commits, chained to its, go with it in one Append: the hold pays
// one round trip for them, not one for the first and another for the
// rest.
func TestHoldGathersWaiters(t *testing.T) {
	e, lb, th := sharedThread(t)
	e.holdFor = time.Hour
	e.commits.gatherFor = time.Hour // only the waiters end the gathering
	const n = 8
	wg := holdWithWaiters(t, e, lb, th.ID, n, func(i int) {
		if err := appendLine(e, th.ID, "log.txt", fmt.Sprintf("line %d\n", i), nil); err != nil {
			t.Error(err)
		}
	})
	wg.Wait()
	lb.waitUnlocks(t)
	if got := lb.batchSizes(); !slices.Equal(got, []int{n}) {
		t.Errorf("the hold's commits went in Appends of %v, want one of %d", got, n)
	}
	if got := strings.Count(readLog(t, e, th.ID), "\n"); got != n {
		t.Errorf("%d lines in the log, want %d", got, n)
	}
}

// TestGatherEndsInTime: a waiter whose mutation changes nothing never
// chains a commit: the gathering commit goes once gatherFor has passed,
// with the commits that did chain, and every line lands.
func TestGatherEndsInTime(t *testing.T) {
	ctx := context.Background()
	e, lb, th := sharedThread(t)
	e.holdFor = time.Hour
	e.commits.gatherFor = 20 * time.Millisecond
	const n = 6
	wg := holdWithWaiters(t, e, lb, th.ID, n, func(i int) {
		if i == n-1 {
			_, _, err := e.Update(ctx, th.ID, func(tx *Tx) (CommitInfo, error) { return CommitInfo{}, nil })
			if err != nil {
				t.Error(err)
			}
			return
		}
		if err := appendLine(e, th.ID, "log.txt", fmt.Sprintf("line %d\n", i), nil); err != nil {
			t.Error(err)
		}
	})
	wg.Wait()
	lb.waitUnlocks(t)
	if got := strings.Count(readLog(t, e, th.ID), "\n"); got != n-1 {
		t.Errorf("%d lines in the log, want %d", got, n-1)
	}
}

func readLog(t *testing.T, e *Engine, th int64) string {
	t.Helper()
	s, _, _, err := e.Head(context.Background(), th)
	if err != nil {
		t.Fatal(err)
	}
	ent, ok, err := s.Get(context.Background(), "log.txt")
	if err != nil || !ok {
		t.Fatal(err, ok)
	}
	text, err := s.Content(context.Background(), &ent)
	if err != nil {
		t.Fatal(err)
	}
	return text
}
