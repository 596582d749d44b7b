package engine

import (
	"context"
	"time"

	"github.com/satchel-dev/satchel/backend"
)

// Writers of one thread in several processes (decision 0077). Within a
// process the commits of a thread are serial (the thread's lock, held for a
// whole Update), so a commit refused as stale lost to another process. A
// loser has built its commit for nothing, and builds it again on the
// winner's head, whose packs it must first read: CPU spent on work thrown
// away. Waiting costs none: on a backend.ThreadLocker, the Updates of a
// thread that lately lost a race take the thread's cross-process lock after
// the in-process one and build on the head read under it, which no writer
// that takes the lock can move before they append. Threads without races
// pay nothing: no lock, no round trip. The head's compare-and-swap stays
// what decides; the lock only keeps the work from being wasted.

const (
	// contendedFor is how long a thread stays contended after a lost
	// race, or after a head under the lock that another process wrote.
	contendedFor = 2 * time.Second
	// holdCommits and holdFor bound how many of this process's mutations
	// of a thread, waiting for each other, pass under one hold of its
	// lock, and for how long, before the lock goes to the other
	// processes' writers.
	holdCommits = 16
	holdFor     = 50 * time.Millisecond
	// gatherFor bounds how long the first commit under a hold waits for
	// the commits of the mutations that waited for the lock in this
	// process to be chained to it, so that they go in one Append.
	gatherFor = 2 * time.Millisecond
	// maxContended bounds the threads remembered as contended.
	maxContended = 1024
)

// crossHold is this process's hold of a thread's cross-process lock.
type crossHold struct {
	unlock  func()
	since   time.Time
	commits int // mutations ended under the hold
}

// isContended reports whether thread is contended now.
func (e *Engine) isContended(thread int64) bool {
	if e.locker == nil {
		return false
	}
	e.lockMu.Lock()
	defer e.lockMu.Unlock()
	until, ok := e.contended[thread]
	if ok && time.Now().After(until) {
		delete(e.contended, thread)
		ok = false
	}
	return ok
}

// markContended makes thread contended for contendedFor from now.
func (e *Engine) markContended(thread int64) {
	if e.locker == nil {
		return
	}
	now := time.Now()
	e.lockMu.Lock()
	defer e.lockMu.Unlock()
	if e.contended == nil {
		e.contended = map[int64]time.Time{}
	}
	if _, ok := e.contended[thread]; !ok && len(e.contended) >= maxContended {
		for t, until := range e.contended {
			if now.After(until) {
				delete(e.contended, t)
			}
		}
		if len(e.contended) >= maxContended {
			clear(e.contended)
		}
	}
	e.contended[thread] = now.Add(e.contendFor)
}

// crossLock takes thread's cross-process lock into l (whose in-process
// lock the caller holds, and which holds none yet) and returns the head
// read under it. ok is false when it could not be taken (no lock free, or
// an error: the mutation goes on without it, as it would without the
// capability); err is set only when ctx ended.
func (e *Engine) crossLock(ctx context.Context, thread int64, l *threadLock) (head backend.Commit, ok bool, err error) {
	var known int64
	c, cached := e.heads.get(thread)
	if cached {
		known = c.ID
	}
	head, _, pack, unlock, err := e.locker.LockThread(ctx, thread, known)
	if err != nil {
		if ctx.Err() != nil {
			return head, false, ctx.Err()
		}
		return head, false, nil
	}
	l.hold = &crossHold{unlock: unlock, since: time.Now()}
	if !cached || c.ID != head.ID || c.Seq != head.Seq {
		// Another process wrote since this one last did.
		e.markContended(thread)
	}
	if pack != "" && e.partsReader == nil {
		// The other process's commit, which the build reads first: its
		// root and the nodes it rewrote.
		if v, err := parsePack(head.ID, pack); err == nil {
			e.packs.put(head.ID, v, int64(len(pack))+64)
		}
	}
	return head, true, nil
}

// waiters counts the mutations of l's thread that wait for it in this
// process (the caller holds l).
func (e *Engine) waiters(l *threadLock) int {
	e.lockMu.Lock()
	defer e.lockMu.Unlock()
	return l.refs - 1
}

// passHold ends a mutation under l's hold (the caller holds l.mu and no
// longer counts among l's references): the hold is kept for the next
// mutation of the thread in this process if one waits (holds a reference,
// so it will take l.mu) and the hold's bounds allow, else the lock is
// released.
func (e *Engine) passHold(l *threadLock, waiting bool) {
	h := l.hold
	h.commits++
	if waiting && h.commits < holdCommits && time.Since(h.since) < e.holdFor {
		return
	}
	l.hold = nil
	// The unlock is a round trip the mutation need not wait for: the
	// commit is durable, and the lock's next holder reads the head once
	// it has the lock. A commit published before it is stored (chain.go)
	// is waited for first: the next holder must find it.
	var fin chan struct{}
	if l.pending != nil {
		fin = l.pending.req.fin
	}
	go func() {
		if fin != nil {
			<-fin
		}
		h.unlock()
	}()
}
