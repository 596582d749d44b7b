package engine

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/satchel-dev/satchel/backend"
)

// ErrConflict is returned when a mutation lost the head's compare-and-swap
// more often than Options.MaxRetries: other writers keep winning.
var ErrConflict = errors.New("engine: too many concurrent writers")

// Head returns the snapshot at a thread's head and the head commit (ok is
// false for a thread without commits: an empty tree).
func (e *Engine) Head(ctx context.Context, thread int64) (*Snapshot, backend.Commit, bool, error) {
	c, ok, err := e.readHead(ctx, thread)
	if err != nil || !ok {
		return &Snapshot{e: e}, c, ok, err
	}
	root, err := decodeRoot(c.Root, c.ID)
	if err != nil {
		return nil, c, false, err
	}
	return &Snapshot{e: e, root: root}, c, true, nil
}

// readHead reads a thread's head from the backend. From a HeadPackReader
// the head's pack comes along unless the cache has it, and goes into the
// cache: the read that follows starts at the head's root, in that pack.
func (e *Engine) readHead(ctx context.Context, thread int64) (backend.Commit, bool, error) {
	if e.headPacks == nil {
		return e.b.Head(ctx, thread)
	}
	c, ok, pack, err := e.headPacks.HeadPack(ctx, thread, e.knownHead(thread))
	if err != nil || !ok {
		return c, ok, err
	}
	e.seen.set(thread, c)
	if pack != "" {
		if v, err := parsePack(c.ID, pack); err == nil {
			e.packs.put(c.ID, v, int64(len(pack))+64)
		}
	}
	return c, ok, nil
}

// knownHead is the newest head of thread that this process committed or
// read whose pack is in the cache, or 0: the head whose pack HeadPack need
// not send.
func (e *Engine) knownHead(thread int64) int64 {
	c, ok := e.seen.get(thread)
	if h, mine := e.heads.get(thread); mine && (!ok || h.Seq > c.Seq) {
		c, ok = h, true
	}
	if !ok || c.ID == 0 {
		return 0
	}
	if _, cached := e.packs.get(c.ID); !cached {
		return 0
	}
	return c.ID
}

// NewThread tells the engine that thread was just created, empty, so its
// first commit need not read the head back.
func (e *Engine) NewThread(thread int64) { e.heads.set(thread, backend.Commit{}) }

// Empty returns the snapshot of an empty tree (a thread before its first
// commit).
func (e *Engine) Empty() *Snapshot { return &Snapshot{e: e} }

// At returns the snapshot of a retained commit.
func (e *Engine) At(ctx context.Context, c backend.Commit) (*Snapshot, error) {
	root, err := decodeRoot(c.Root, c.ID)
	if err != nil {
		return nil, err
	}
	return &Snapshot{e: e, root: root}, nil
}

// CommitInfo is what a mutation's function returns besides its changes:
// the commit's metadata, and optionally a checkpoint name to give the
// commit in the same transaction.
type CommitInfo struct {
	Meta       []byte
	Checkpoint string
	// Key is an idempotency key the commit claims in its transaction
	// (backend.NewCommit.Key); Update then fails with backend.ErrKeyUsed
	// when the key is live.
	Key *backend.KeyClaim
}

// Update applies fn to the head of a thread and commits what it changed
// as one commit, with the metadata fn returns. If another writer moved the
// head first, fn runs again against the new head (so an append lands after
// the other writer's, and an edit whose anchor moved is re-checked). fn
// must therefore have no effects other than on tx. When fn changes nothing,
// nothing is committed and changed is false.
//
// While other mutations of the thread wait in this process, a mutation
// lets the next one build on its commit before it is stored, and they go
// to the backend together (chain.go).
func (e *Engine) Update(ctx context.Context, thread int64, fn func(tx *Tx) (CommitInfo, error)) (c backend.Commit, changed bool, err error) {
	e.commits.active.Add(1)
	defer e.commits.active.Add(-1)
	l := e.lock(thread)
	held := true // l's in-process lock, which a published commit lets go early
	defer func() {
		if held {
			e.unlock(thread, l)
		}
	}()
	// hint is the head a lost compare-and-swap reported (AppendResult.Head).
	var hint backend.Commit
	// locked is the head read under the thread's cross-process lock, when
	// this mutation just took it (lock.go).
	var locked backend.Commit
	fresh := false
	// lost is the outcome of the last attempt when it lost the head's
	// compare-and-swap, and lostSeq that attempt's seq.
	var lost *backend.AppendResult
	var lostSeq int64
	// unchained is set when the last attempt, built on a commit not yet
	// stored, waited for it instead (chainPays): its head, cached when it
	// landed, is tried first again.
	unchained := false
	for attempt := 0; ; attempt++ {
		if !held {
			l = e.lock(thread)
			held = true
		}
		// tookLock is set when this attempt took the thread's
		// cross-process lock: its commit gathers the waiters' (gather).
		tookLock := false
		parent := e.parentOf(thread, l)
		if parent == nil && l.hold == nil && e.locker != nil && (lost != nil || attempt == 0 && e.isContended(thread)) {
			// Another process wrote: wait for its writers instead of
			// racing them (again).
			if locked, fresh, err = e.crossLock(ctx, thread, l); err != nil {
				return c, false, err
			}
			tookLock = fresh
		}
		if lost != nil {
			if !fresh && lost.Head.Seq >= lostSeq {
				hint = lost.Head
			}
			lost = nil
		}
		// The head this process last committed is tried first, saving a
		// query, and after a lost race the head the backend reported. It
		// is only trusted if the commit succeeds (the compare-and-swap
		// checks it): any other outcome (an error, nothing to change,
		// storage collected by another process) may come from a stale
		// head, so fn runs again on the backend's head. A head read under
		// the cross-process lock is the backend's. A commit of this
		// process not yet stored (parent) is trusted once it is.
		var head backend.Commit
		var tx *Tx
		cached := false
		if parent != nil {
			head = parent.commit()
		} else {
			head, cached = e.heads.get(thread)
			cached = cached && (attempt == 0 || unchained)
			unchained = false
			switch {
			case fresh:
				head, cached, fresh = locked, false, false
			case hint.Seq > 0:
				head, cached, hint = hint, true, backend.Commit{}
			case !cached:
				var err error
				if head, _, err = e.readHead(ctx, thread); err != nil {
					return c, false, err
				}
			}
		}
		retry := func() bool {
			if parent != nil {
				// An outcome on a commit not yet stored stands only
				// once it is.
				return !e.settle(thread, parent)
			}
			e.heads.forget(thread)
			return cached
		}
		if err := e.check(ctx, head); err != nil {
			if retry() {
				continue
			}
			return c, false, err
		}
		if parent != nil {
			tx = parent.tx.chain(time.Now().UnixMicro())
			tx.baseSeq = head.Seq
		} else {
			root, err := decodeRoot(head.Root, head.ID)
			if err != nil {
				return c, false, err
			}
			tx = &Tx{e: e, base: root, baseSeq: head.Seq, now: time.Now().UnixMicro()}
		}
		info, err := fn(tx)
		if err == nil && parent != nil && tx.Changed() && !e.chainPays(l, tx, parent) {
			// Stored as it was built, the commit would store again
			// more of its parents' changes than waiting for them costs:
			// build it on the stored head instead.
			unchained = e.settle(thread, parent)
			continue
		}
		if err == nil && !tx.Changed() {
			if retry() {
				continue
			}
			if parent != nil {
				head = parent.req.res.Commit
			}
			return head, false, nil
		}
		var bd build
		var newRoot Ref
		if err == nil {
			newRoot, err = tx.build(ctx, &bd)
		}
		if err != nil {
			// A base whose storage garbage collection took (its grace
			// period ran out while this mutation ran) is stale: the head
			// has moved past it. Run again on the new head, as after a
			// lost compare-and-swap.
			if retry() || (errors.Is(err, ErrCollected) && attempt < e.retries) {
				continue
			}
			return c, false, err
		}
		files, bytes, err := tx.Totals(ctx)
		if err != nil {
			if retry() || (errors.Is(err, ErrCollected) && attempt < e.retries) {
				continue
			}
			return c, false, err
		}
		baseFiles, baseBytes := tx.baseFiles, tx.baseBytes
		if parent != nil {
			baseFiles, baseBytes = parent.files, parent.bytes
		}
		nc := backend.NewCommit{
			Thread: thread, Seq: head.Seq + 1, Root: encodeRoot(newRoot), Meta: info.Meta,
			Checkpoint: info.Checkpoint, Key: info.Key,
			Files: files, Bytes: bytes, DeltaFiles: files - baseFiles, DeltaBytes: bytes - baseBytes,
			Chained: parent != nil,
		}
		var parts []string
		if e.commits.parts != nil {
			parts = bd.pb.parts()
		} else {
			nc.Pack = bd.pb.bytes()
		}
		r := &commitReq{nc: nc, parts: parts}
		depth := 1
		if parent != nil {
			r.after, depth = parent.req, parent.depth+1
		}
		p := e.publishable(thread, l, tx, depth)
		if p {
			r.fin = make(chan struct{})
			if tookLock {
				r.gather = e.waiters(l)
			}
		}
		leadNow := e.commits.enqueue(r)
		var pc *pendingCommit
		if p {
			// The next mutation of the thread builds on this commit
			// now; this one waits for its outcome without the lock.
			pc = &pendingCommit{req: r, tx: tx, bd: &bd, depth: depth, files: files, bytes: bytes}
			l.pending = pc
			e.unlock(thread, l)
			held = false
		} else {
			l.pending = nil
		}
		res, err := e.commits.await(ctx, r, leadNow)
		if err != nil {
			e.heads.forget(thread)
			return c, false, err
		}
		if res.Contended && (!held || l.hold == nil) {
			// Writers of other processes wait for the thread's lock:
			// this one takes it too from its next mutation.
			e.markContended(thread)
		}
		if errors.Is(res.Err, backend.ErrStale) {
			e.heads.forget(thread)
			e.markContended(thread)
			if attempt < e.retries {
				lost, lostSeq = &res, nc.Seq
				continue
			}
			return c, false, ErrConflict
		}
		if res.Err != nil {
			e.heads.forget(thread)
			return c, false, res.Err
		}
		if pc != nil {
			e.storedOnce(pc)
		} else {
			e.stored(res.Commit.ID, &bd)
		}
		e.heads.setNewer(thread, res.Commit)
		return res.Commit, true, nil
	}
}

// Point appends a commit whose tree is that of another retained commit
// (restore when thread is the source's own thread, fork into a new empty
// thread), without copying anything. The source must still be retained
// when the new commit is stored. key, when set, is claimed with it
// (CommitInfo.Key).
func (e *Engine) Point(ctx context.Context, thread int64, src backend.Commit, meta []byte, checkpoint string, key *backend.KeyClaim) (backend.Commit, error) {
	root, err := decodeRoot(src.Root, src.ID)
	if err != nil {
		return backend.Commit{}, err
	}
	files, bytes, err := e.totals(ctx, root)
	if err != nil {
		return backend.Commit{}, err
	}
	l := e.lock(thread)
	defer e.unlock(thread, l)
	e.settlePending(thread, l)
	for attempt := 0; ; attempt++ {
		head, cached := e.heads.get(thread)
		if !cached || attempt > 0 {
			var err error
			if head, _, err = e.readHead(ctx, thread); err != nil {
				return backend.Commit{}, err
			}
		}
		if err := e.check(ctx, head); err != nil {
			e.heads.forget(thread)
			if cached && attempt == 0 {
				continue
			}
			return backend.Commit{}, err
		}
		hf, hb, err := e.commitTotals(ctx, head)
		if err != nil {
			return backend.Commit{}, err
		}
		res, err := e.commits.do(ctx, backend.NewCommit{
			Thread: thread, Seq: head.Seq + 1, Root: encodeRoot(root), Meta: meta,
			Requires:   &backend.CommitID{Thread: src.Thread, Seq: src.Seq},
			Checkpoint: checkpoint, Key: key,
			Files: files, Bytes: bytes, DeltaFiles: files - hf, DeltaBytes: bytes - hb,
		}, nil)
		if err != nil {
			return backend.Commit{}, err
		}
		if errors.Is(res.Err, backend.ErrStale) {
			e.markContended(thread)
			if attempt < e.retries {
				continue
			}
		}
		if res.Err == nil {
			e.heads.set(thread, res.Commit)
		} else {
			e.heads.forget(thread)
		}
		return res.Commit, res.Err
	}
}

// check asks the Guard, if any, about a head.
func (e *Engine) check(ctx context.Context, head backend.Commit) error {
	if e.guard == nil || ctx.Value(unguardedKey{}) != nil {
		return nil
	}
	return e.guard(head)
}

type unguardedKey struct{}

// Unguarded returns a context under which commits are not checked by the
// Guard: an import, which writes a log as it was, its archive and
// unarchive entries among the other commits.
func Unguarded(ctx context.Context) context.Context {
	return context.WithValue(ctx, unguardedKey{}, true)
}

// Mark appends a commit with the tree of the thread's head and meta,
// without the Guard: check decides instead, from the head (the zero
// Commit for a thread without commits). It is how package satchel
// archives and unarchives a thread, in the log itself, so that the head's
// compare-and-swap orders every write against the change. When check
// returns skip, nothing is appended and the head is returned.
func (e *Engine) Mark(ctx context.Context, thread int64, meta []byte, check func(head backend.Commit) (skip bool, err error)) (backend.Commit, bool, error) {
	l := e.lock(thread)
	defer e.unlock(thread, l)
	e.settlePending(thread, l)
	for attempt := 0; ; attempt++ {
		head, _, err := e.readHead(ctx, thread)
		if err != nil {
			return backend.Commit{}, false, err
		}
		skip, err := check(head)
		if err != nil || skip {
			return head, false, err
		}
		var root Ref
		if head.Seq > 0 {
			if root, err = decodeRoot(head.Root, head.ID); err != nil {
				return backend.Commit{}, false, err
			}
		}
		nc := backend.NewCommit{Thread: thread, Seq: head.Seq + 1, Root: encodeRoot(root), Meta: meta}
		if head.Seq > 0 {
			nc.Requires = &backend.CommitID{Thread: thread, Seq: head.Seq}
		}
		res, err := e.commits.do(ctx, nc, nil)
		if err != nil {
			e.heads.forget(thread)
			return backend.Commit{}, false, err
		}
		if errors.Is(res.Err, backend.ErrStale) && attempt < e.retries {
			e.heads.forget(thread)
			e.markContended(thread)
			continue
		}
		if res.Err != nil {
			e.heads.forget(thread)
			return backend.Commit{}, false, res.Err
		}
		e.heads.set(thread, res.Commit)
		return res.Commit, true, nil
	}
}

// Fork creates thread name in scope whose first commit has the tree of
// src, a retained commit, without copying anything: in one transaction
// when the backend is a backend.Forker, else as CreateThread then Point
// (the thread is deleted again if Point fails).
func (e *Engine) Fork(ctx context.Context, scope, name string, src backend.Commit, meta []byte) (backend.Thread, error) {
	root, err := decodeRoot(src.Root, src.ID)
	if err != nil {
		return backend.Thread{}, err
	}
	if f, ok := backend.As[backend.Forker](e.b); ok {
		files, bytes, err := e.totals(ctx, root)
		if err != nil {
			return backend.Thread{}, err
		}
		t, c, err := f.Fork(ctx, scope, name, backend.NewCommit{
			Seq: 1, Root: encodeRoot(root), Meta: meta,
			Requires: &backend.CommitID{Thread: src.Thread, Seq: src.Seq},
			Files:    files, Bytes: bytes, DeltaFiles: files, DeltaBytes: bytes,
		})
		if err == nil {
			e.heads.set(t.ID, c)
		}
		return t, err
	}
	t, err := e.b.CreateThread(ctx, scope, name)
	if err != nil {
		return t, err
	}
	e.NewThread(t.ID)
	if _, err := e.Point(ctx, t.ID, src, meta, "", nil); err != nil {
		_ = e.b.DeleteThread(ctx, t.ID)
		return backend.Thread{}, err
	}
	return t, nil
}

// commitTotals returns the files and bytes of a commit's tree (zero for
// the empty head of a thread without commits).
func (e *Engine) commitTotals(ctx context.Context, c backend.Commit) (files, bytes int64, err error) {
	if c.Seq == 0 {
		return 0, 0, nil
	}
	root, err := decodeRoot(c.Root, c.ID)
	if err != nil {
		return 0, 0, err
	}
	return e.totals(ctx, root)
}

// Live is the backend.LiveFunc of the engine: the totals of each head's
// tree.
func (e *Engine) Live(ctx context.Context, heads []backend.Commit) (files, bytes []int64, err error) {
	files, bytes = make([]int64, len(heads)), make([]int64, len(heads))
	for i, c := range heads {
		if files[i], bytes[i], err = e.commitTotals(ctx, c); err != nil {
			return nil, nil, err
		}
	}
	return files, bytes, nil
}

// headCache remembers the last head this process committed per thread, so
// that a mutation need not read it back. It is only a guess: the
// compare-and-swap refuses a stale one.
type headCache struct {
	mu sync.Mutex
	m  map[int64]backend.Commit
}

const maxCachedHeads = 1 << 14

func (h *headCache) get(thread int64) (backend.Commit, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.m[thread]
	return c, ok
}

func (h *headCache) set(thread int64, c backend.Commit) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil || len(h.m) >= maxCachedHeads {
		h.m = map[int64]backend.Commit{}
	}
	h.m[thread] = c
}

// setNewer is set, unless the head cached for thread is newer than c: the
// commits of a chain learn their outcomes in any order.
func (h *headCache) setNewer(thread int64, c backend.Commit) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if old, ok := h.m[thread]; ok && old.Seq > c.Seq {
		return
	}
	if h.m == nil || len(h.m) >= maxCachedHeads {
		h.m = map[int64]backend.Commit{}
	}
	h.m[thread] = c
}

func (h *headCache) forget(thread int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.m, thread)
}

// committer batches concurrent commits into backend Appends (group
// commit): up to limit batches are stored at once (one for a backend with
// a single writer, more for a server that runs transactions side by side:
// backend.ConcurrentAppender); the commits that arrive while every slot is
// busy wait and go together in the next batch. Each caller returns only
// once its own commit is durable.
type committer struct {
	b     backend.Backend
	parts backend.PartsAppender // b, when it takes packs as parts
	limit int                   // batches in flight at most
	// gatherFor bounds a gathering commit's wait (gatherFor in lock.go;
	// tests lengthen it).
	gatherFor time.Duration
	mu        sync.Mutex
	queue     []*commitReq
	// inflight counts the batches being stored (the slots taken).
	inflight int
	// active counts the mutations of this process in progress (Update).
	active atomic.Int64
}

type commitReq struct {
	nc    backend.NewCommit
	parts []string // the pack, for a PartsAppender
	res   backend.AppendResult
	err   error
	done  chan struct{}
	// lead is set, before done is closed, on a waiter taken out of the
	// queue and handed a slot: it stores the next batch, its own first.
	lead bool
	// after is the commit this one was built on before it was stored
	// (nc.Chained): it travels in the same batch, right after it, or
	// waits among after's held until after's batch is stored, and then
	// goes as a plain commit if after landed, and not at all if not.
	after *commitReq
	held  []*commitReq
	state reqState // under the committer's mu
	// fin, when made (a commit others may be chained to), is closed once
	// res and err are set.
	fin chan struct{}
	// gather, when not 0, is the number of commits chained to this one
	// (directly or not) that its batch waits for, at most gatherFor;
	// gathered is closed once they are queued (under the committer's mu).
	gather, joined int
	gathered       chan struct{}
}

type reqState int8

const (
	reqQueued  reqState = iota // in the committer's queue
	reqHeld                    // among after's held
	reqSending                 // in a batch being stored
	reqDone                    // res and err are set
)

const maxBatch = 256

// fullBatch is the size of batch worth a slot of its own while another
// batch is in flight (backend.ConcurrentAppender).
const fullBatch = 4

func newCommitter(b backend.Backend) *committer {
	c := &committer{b: b, limit: 1, gatherFor: gatherFor}
	c.parts, _ = backend.As[backend.PartsAppender](b)
	if ca, ok := backend.As[backend.ConcurrentAppender](b); ok {
		c.limit = max(1, ca.AppendConcurrency())
	}
	return c
}

func (c *committer) do(ctx context.Context, nc backend.NewCommit, parts []string) (backend.AppendResult, error) {
	r := &commitReq{nc: nc, parts: parts}
	return c.await(ctx, r, c.enqueue(r))
}

// enqueue places r: it reports true when a slot is r's at once (await
// then stores r's batch), false when r waits for a batch to carry it.
func (c *committer) enqueue(r *commitReq) (leadNow bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if a := r.after; a != nil {
		switch a.state {
		case reqQueued:
			// The batch that takes a takes r too (lead).
			r.done, r.state = make(chan struct{}), reqQueued
			c.queue = append(c.queue, r)
			c.joinLocked(r)
			return false
		case reqHeld, reqSending:
			r.done, r.state = make(chan struct{}), reqHeld
			a.held = append(a.held, r)
			return false
		case reqDone:
			if !landed(a) {
				c.finishLocked(r, backend.AppendResult{Err: backend.ErrStale}, nil)
				return false
			}
			r.after, r.nc.Chained = nil, false // a is stored: r is a plain commit on it
		}
	}
	// A batch goes out at once when none is in flight; beside others,
	// only once it would carry fullBatch commits. A second transaction of
	// one commit next to one in flight costs the server (and, on this
	// 2-core machine, every process) more CPU per commit than waiting
	// for the slot costs in latency (decision 0064).
	if c.inflight == 0 || c.inflight < c.limit && len(c.queue)+1 >= fullBatch {
		c.inflight++
		r.state = reqSending
		if r.gather > 0 {
			// Queued, for the commits chained to it, until it leads.
			r.state, r.gathered = reqQueued, make(chan struct{})
		}
		return true
	}
	r.done, r.state = make(chan struct{}), reqQueued // only a waiter needs one
	c.queue = append(c.queue, r)
	return false
}

// await returns r's outcome once it is durable (or refused), storing
// batches when handed a slot.
func (c *committer) await(ctx context.Context, r *commitReq, leadNow bool) (backend.AppendResult, error) {
	if !leadNow && r.done != nil {
		<-r.done
	}
	if leadNow || r.lead {
		c.lead(ctx, r)
	}
	return r.res, r.err
}

// joinLocked counts r, queued behind a commit still queued, for the
// commit its chain starts with, when that one gathers (commitReq.gather).
func (c *committer) joinLocked(r *commitReq) {
	root := r.after
	for root.after != nil {
		root = root.after
	}
	if root.gathered == nil || root.state != reqQueued {
		return
	}
	root.joined++
	if root.joined == root.gather {
		close(root.gathered)
	}
}

// takeLocked takes r's batch out of the queue: r, then the queued
// commits in their order, up to maxBatch. A chained commit goes only with
// the commit it was built on, and past maxBatch still, so that a chain is
// never cut; one whose parent is in another batch (a waiter handed a slot
// and not yet leading it) is left for that batch.
func (c *committer) takeLocked(r *commitReq) []*commitReq {
	batch := make([]*commitReq, 0, min(len(c.queue), maxBatch-1)+1)
	batch = append(batch, r)
	r.state = reqSending
	var in map[*commitReq]bool // the batch, once a chain is queued
	rest := c.queue[:0]
	for i, q := range c.queue {
		if q.after == nil && len(batch) < maxBatch {
			batch = append(batch, q)
			q.state = reqSending
			if in != nil {
				in[q] = true
			}
			continue
		}
		if q.after != nil {
			if in == nil {
				in = make(map[*commitReq]bool, len(batch)+len(c.queue)-i)
				for _, b := range batch {
					in[b] = true
				}
			}
			if in[q.after] {
				batch = append(batch, q)
				q.state = reqSending
				in[q] = true
				continue
			}
		}
		rest = append(rest, q)
	}
	clear(c.queue[len(rest):])
	c.queue = rest
	return batch
}

// chainOrder puts each chained commit of a batch right after the one it
// was built on (backend.NewCommit.Chained), the others in their order.
func chainOrder(batch []*commitReq) []*commitReq {
	var next map[*commitReq][]*commitReq
	for _, q := range batch {
		if q.after != nil {
			if next == nil {
				next = map[*commitReq][]*commitReq{}
			}
			next[q.after] = append(next[q.after], q)
		}
	}
	if next == nil {
		return batch
	}
	out := make([]*commitReq, 0, len(batch))
	var add func(q *commitReq)
	add = func(q *commitReq) {
		out = append(out, q)
		for _, f := range next[q] {
			add(f)
		}
	}
	for _, q := range batch {
		if q.after == nil {
			add(q)
		}
	}
	if len(out) < len(batch) {
		// A chained commit whose parent is not in the batch (never
		// queued so): it goes last, and the backend refuses it.
		in := make(map[*commitReq]bool, len(out))
		for _, q := range out {
			in[q] = true
		}
		for _, q := range batch {
			if !in[q] {
				out = append(out, q)
			}
		}
	}
	return out
}

// landed reports whether a finished request's commit was stored.
func landed(r *commitReq) bool { return r.err == nil && r.res.Err == nil }

// finishLocked sets r's outcome and wakes whoever waits for it (c.mu is
// held).
func (c *committer) finishLocked(r *commitReq, res backend.AppendResult, err error) {
	r.res, r.err, r.state = res, err, reqDone
	if r.fin != nil {
		close(r.fin)
	}
	if r.done != nil && !r.lead {
		close(r.done)
	}
}

// releaseLocked moves the commits held for r, which is done, on: into the
// queue (after them, those chained to them) when r landed, else they are
// refused as stale, and so are those chained to them.
func (c *committer) releaseLocked(r *commitReq) {
	held := r.held
	r.held = nil
	for _, h := range held {
		if landed(r) {
			h.after, h.nc.Chained = nil, false
			c.requeueLocked(h)
			continue
		}
		c.finishLocked(h, backend.AppendResult{Err: backend.ErrStale}, nil)
		c.releaseLocked(h)
	}
}

// requeueLocked queues h and, right after it, the commits chained to it.
func (c *committer) requeueLocked(h *commitReq) {
	h.state = reqQueued
	c.queue = append(c.queue, h)
	held := h.held
	h.held = nil
	for _, g := range held {
		c.requeueLocked(g)
	}
}

// lead stores one batch, r's commit first and then the waiters', in the
// slot r holds, then hands the slot to the first waiter left, if any.
func (c *committer) lead(ctx context.Context, r *commitReq) {
	// Writers of this process that are runnable but not running (two
	// cores, sixteen writers) are about to queue their commits: yield once
	// so that they do, and one transaction carries them all. A lone writer
	// does not (a yield costs it time). Waiting longer for writers still
	// building measured slower once SQLite's Append got cheaper: the
	// leader idled while the other core built (decisions 0006, 0015).
	if r.gathered != nil {
		t := time.NewTimer(c.gatherFor)
		select {
		case <-r.gathered:
		case <-t.C:
		}
		t.Stop()
	} else if c.active.Load() > 1 {
		runtime.Gosched()
	}
	c.mu.Lock()
	batch := c.takeLocked(r)
	c.mu.Unlock()
	batch = chainOrder(batch)

	ncs := make([]backend.NewCommit, len(batch))
	for i, q := range batch {
		ncs[i] = q.nc
	}
	var results []backend.AppendResult
	var err error
	if ctx.Done() != nil {
		ctx = context.WithoutCancel(ctx) // the batch holds others' commits
	}
	if c.parts != nil {
		packs := make([][]string, len(batch))
		for i, q := range batch {
			packs[i] = q.parts
		}
		results, err = c.parts.AppendParts(ctx, ncs, packs)
	} else {
		results, err = c.b.Append(ctx, ncs)
	}
	if err == nil && len(results) != len(batch) {
		err = fmt.Errorf("engine: backend returned %d results for %d commits", len(results), len(batch))
	}
	c.mu.Lock()
	for i, q := range batch {
		if err != nil {
			c.finishLocked(q, backend.AppendResult{}, err)
		} else {
			c.finishLocked(q, results[i], nil)
		}
	}
	for _, q := range batch {
		c.releaseLocked(q)
	}
	// The slot goes to the first waiter that is not chained (a chained
	// one goes with the commit it was built on, which is queued before
	// it or leads a batch that takes it). From now on it counts as
	// sending: a commit chained to it meanwhile waits among its held.
	for i, next := range c.queue {
		if next.after != nil {
			continue
		}
		c.queue = slices.Delete(c.queue, i, i+1)
		next.lead, next.state = true, reqSending
		c.mu.Unlock()
		close(next.done)
		return
	}
	c.inflight--
	c.mu.Unlock()
}
