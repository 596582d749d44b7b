package engine

import (
	"sync"

	"github.com/satchel-dev/satchel/backend"
)

// Chained commits (decision 0092). Within a process the mutations of a
// thread are serial: each waits for the one before it to be stored, a
// round trip to a server, so a thread written by many clients passes one
// commit per round trip. Instead, while others wait, a mutation publishes
// its commit before it is stored (threadLock.pending) and lets the thread
// go: the next mutation builds on it, and its commit is marked
// backend.NewCommit.Chained, so the backend stores it only right after
// its parent, in the same Append, and only if the parent landed. The
// commits that queue up behind one in flight then go together, in one
// round trip. A chained commit cannot name the objects of its parent's
// pack (a pack's objects are named by the ID the backend gives it when it
// is stored), so it stores its parent's changes again in its own pack:
// chains are bounded by maxChain commits and maxChainText bytes of such
// changes.

const (
	// maxChain bounds the commits of a thread whose outcome is not yet
	// known that a new one may be chained to.
	maxChain = 32
	// maxChainText bounds the new text a commit chained to a mutation
	// stores again (the mutation's changes and those it was chained to).
	maxChainText = 256 << 10
	// maxInheritedLocal bounds, on a backend that is not a round trip away
	// (backend.Remote), the text a chained commit stores again of its
	// parents' changes that it did not rewrite itself: past it, the
	// commit waits for its parent and is built again on the stored head
	// (decision 0095).
	maxInheritedLocal = 512
)

// pendingCommit is a commit of this process published before it is stored.
type pendingCommit struct {
	req *commitReq
	// tx is the mutation's transaction, built: a chained one starts with
	// its changes.
	tx *Tx
	bd *build
	// depth counts the commits of the chain up to this one.
	depth int
	// files and bytes are the totals of its tree.
	files, bytes int64
	once         sync.Once
}

// commit is the pending commit as a head to build on (its ID is not known
// yet).
func (p *pendingCommit) commit() backend.Commit {
	nc := &p.req.nc
	return backend.Commit{Thread: nc.Thread, Seq: nc.Seq, Root: nc.Root, Meta: nc.Meta}
}

// storedOnce caches what the commit built, once it landed, whichever of
// its mutation and the next one gets there first.
func (e *Engine) storedOnce(p *pendingCommit) {
	p.once.Do(func() { e.stored(p.req.res.Commit.ID, p.bd) })
}

// parentOf returns the commit of l's thread a new mutation builds on when
// it is not yet stored, or nil: there is none, or its outcome is known
// (its head is then cached when it landed), or the thread is contended
// and not held, when the mutation waits for the commit and takes the
// cross-process lock instead (the lock's other holders would win the
// race). The caller holds l.
func (e *Engine) parentOf(thread int64, l *threadLock) *pendingCommit {
	p := l.pending
	if p == nil {
		return nil
	}
	select {
	case <-p.req.fin:
	default:
		if e.noChain || l.hold == nil && e.isContended(thread) {
			e.settle(thread, p)
			break
		}
		return p
	}
	l.pending = nil
	if landed(p.req) {
		e.storedOnce(p)
		e.heads.setNewer(thread, p.req.res.Commit)
	}
	return nil
}

// settle waits for p's outcome and reports whether it landed.
func (e *Engine) settle(thread int64, p *pendingCommit) bool {
	<-p.req.fin
	if !landed(p.req) {
		return false
	}
	e.storedOnce(p)
	e.heads.setNewer(thread, p.req.res.Commit)
	return true
}

// settlePending waits for the outcome of l's pending commit, if any: for
// a mutation that does not chain (Point, Mark). The caller holds l.
func (e *Engine) settlePending(thread int64, l *threadLock) {
	if p := l.pending; p != nil {
		e.settle(thread, p)
		l.pending = nil
	}
}

// chainPays reports whether tx, built on the pending commit parent, is
// worth storing as a chained commit: on an embedded backend, only when
// it stores again little of its parents' changes. Waiting for the parent
// costs such a backend microseconds, less than storing their files again
// (a chain of writes of distinct files would store them quadratically).
//
// When it does not, the next maxChain commits of the thread are not
// published (l.unpaid), so that the writers of distinct files do not each
// build their change twice. The caller holds l.
func (e *Engine) chainPays(l *threadLock, tx *Tx, parent *pendingCommit) bool {
	if e.remote || tx.inheritedText(parent.tx) <= maxInheritedLocal {
		return true
	}
	l.unpaid = maxChain
	return false
}

// publishable reports whether a mutation of l's thread (whose lock the
// caller holds) publishes its commit before it is stored: another
// mutation waits for the thread, the chain is within its bounds, and the
// thread is either not contended across processes or held.
func (e *Engine) publishable(thread int64, l *threadLock, tx *Tx, depth int) bool {
	if e.noChain || depth >= maxChain {
		return false
	}
	if l.unpaid > 0 {
		l.unpaid--
		return false
	}
	e.lockMu.Lock()
	waiting := l.refs > 1
	e.lockMu.Unlock()
	if !waiting || l.hold == nil && e.isContended(thread) {
		return false
	}
	return tx.pendingText() <= maxChainText
}
