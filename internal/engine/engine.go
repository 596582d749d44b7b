// Package engine is satchel's versioned file engine (DESIGN §1.1): file
// contents cut into chunks, a persistent sorted tree of paths, commits in a
// per-thread log with a compare-and-swap on the head, checkpoints, fork,
// restore, diff, retention and garbage collection. It knows nothing of the
// rules of paths or lines (package satchel applies them); it stores and
// finds files, versions them, and keeps bounds' totals.
//
// Every object is immutable once written, and named by where it was
// written (Ref). The new objects of one commit travel in one pack, stored
// with the commit as one row: one commit, one append-ordered row, which is
// what makes SQLite fast (docs/decisions/0003-tree-and-packs.md).
package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/satchel-dev/satchel/backend"
)

// Options tune an Engine.
type Options struct {
	// CacheBytes bounds the cache of packs and indexed nodes (default 256 MiB).
	CacheBytes int64
	// MaxRetries bounds how often a mutation is re-applied after losing the
	// head's compare-and-swap to another process (default 64).
	MaxRetries int
	// Guard, when set, is asked about a thread's head before every commit
	// is appended after it (Update, Point): an error refuses the commit.
	// The head's compare-and-swap makes the answer hold: a commit lands
	// only right after the head Guard accepted. Package satchel refuses
	// the writes to an archived thread with it.
	Guard func(head backend.Commit) error
	// NoChaining turns chained commits off (chain.go): every mutation
	// of a thread waits for the one before it to be stored. For
	// benchmarks' baseline.
	NoChaining bool
}

// Engine runs versioned workspaces over one backend.
type Engine struct {
	b       backend.Backend
	packs   *lru[int64, *packView]
	nodes   *lru[uint64, *node] // by nodeKey
	commits *committer
	// partsReader is b when it keeps packs in memory: its packs are read
	// from it, not cached.
	partsReader backend.PartsReader
	// views are the packs last read from partsReader, parsed.
	views partsViews
	// packsReader is b when it reads many packs in one call (and keeps
	// them elsewhere than in memory): walks read packs ahead with it
	// (ahead.go).
	packsReader backend.PacksReader
	heads       headCache
	// headPacks is b when it sends a head's pack with the head (one round
	// trip for a read of another process's commit); seen holds the heads
	// read through it, whose packs went into the cache.
	headPacks backend.HeadPackReader
	seen      headCache
	tails     tails
	retries   int
	guard     func(head backend.Commit) error
	// visits, when set (by tests), counts the nodes read: what a test
	// asserts instead of a time, to show what an operation walks.
	visits *atomic.Int64
	// keepReplaced (benchmarks' baseline) keeps the nodes a commit
	// replaced in the node cache, as before stored dropped them.
	keepReplaced bool
	// noChain is Options.NoChaining.
	noChain bool
	// remote is set when b is a round trip away (backend.Remote): chains
	// may then store again more of their parents' changes (chain.go).
	remote bool

	// locker is b when it locks threads across processes: the writers of
	// a contended thread then wait for each other instead of racing
	// (lock.go).
	locker backend.ThreadLocker
	// holdFor bounds a hold of a thread's cross-process lock (holdFor in
	// lock.go; tests lengthen it).
	holdFor time.Duration
	// contendFor is how long a thread stays contended (contendedFor).
	contendFor time.Duration

	lockMu sync.Mutex
	locks  map[int64]*threadLock
	// contended maps the threads whose commits lately lost their
	// compare-and-swap to another process to when that ends (lock.go);
	// under lockMu.
	contended map[int64]time.Time
}

type threadLock struct {
	mu   sync.Mutex
	refs int
	// hold is the cross-process lock of the thread while this process
	// holds it (lock.go); under mu.
	hold *crossHold
	// pending is the last commit of the thread published before it was
	// stored (chain.go); under mu.
	pending *pendingCommit
	// unpaid counts the next commits of the thread that are not
	// published, after a chain on it did not pay (chain.go); under mu.
	unpaid int
}

// New returns an engine over b.
func New(b backend.Backend, o Options) *Engine {
	if o.CacheBytes <= 0 {
		o.CacheBytes = 256 << 20
	}
	if o.MaxRetries <= 0 {
		o.MaxRetries = 64
	}
	c := newCommitter(b)
	pr, _ := backend.As[backend.PartsReader](b)
	var psr backend.PacksReader
	if pr == nil {
		psr, _ = backend.As[backend.PacksReader](b)
	}
	tl, _ := backend.As[backend.ThreadLocker](b)
	hp, _ := backend.As[backend.HeadPackReader](b)
	if pr != nil {
		hp = nil // nothing is cached: the pack would be read again anyway
	}
	_, remote := backend.As[backend.Remote](b)
	return &Engine{
		headPacks:   hp,
		locker:      tl,
		holdFor:     holdFor,
		contendFor:  contendedFor,
		partsReader: pr,
		packsReader: psr,
		b:           b,
		packs:       newLRU[int64, *packView](o.CacheBytes * 3 / 4),
		nodes:       newLRU[uint64, *node](o.CacheBytes / 4),
		commits:     c,
		retries:     o.MaxRetries,
		guard:       o.Guard,
		noChain:     o.NoChaining,
		remote:      remote,
		locks:       map[int64]*threadLock{},
	}
}

// Backend returns the engine's backend.
func (e *Engine) Backend() backend.Backend { return e.b }

// lock takes the in-process lock of a thread, so that mutations of one
// process do not race each other's compare-and-swap needlessly; unlock
// releases it.
func (e *Engine) lock(thread int64) *threadLock {
	e.lockMu.Lock()
	l := e.locks[thread]
	if l == nil {
		l = threadLocks.Get().(*threadLock)
		e.locks[thread] = l
	}
	l.refs++
	e.lockMu.Unlock()
	l.mu.Lock()
	return l
}

func (e *Engine) unlock(thread int64, l *threadLock) {
	// The caller's reference goes first, so that whether another
	// mutation waits is decided by the waiters alone: counted after
	// l.mu is released, a waiter could take l.mu, find the caller's
	// reference still there and keep the cross-process hold for a
	// waiter that no longer exists, and the hold would be lost with l.
	e.lockMu.Lock()
	l.refs--
	last := l.refs == 0
	if last {
		delete(e.locks, thread)
	}
	e.lockMu.Unlock()
	if l.hold != nil {
		e.passHold(l, !last)
	}
	if last {
		l.pending, l.unpaid = nil, 0
	}
	l.mu.Unlock()
	if last {
		// Nobody holds it or waits for it: it is out of the map and
		// unlocked, so it can serve the next mutation of any thread.
		threadLocks.Put(l)
	}
}

var threadLocks = sync.Pool{New: func() any { return new(threadLock) }}

func (e *Engine) pack(ctx context.Context, id int64) (*packView, error) {
	if e.partsReader != nil {
		parts, err := e.partsReader.PackParts(ctx, id)
		if errors.Is(err, backend.ErrNoPack) {
			return nil, ErrCollected
		}
		if err != nil {
			return nil, err
		}
		if len(parts) == 0 {
			return parsePack(id, "")
		}
		if v, ok := e.views.get(id, parts); ok {
			return v, nil
		}
		var v *packView
		if len(parts) == 1 {
			v, err = parsePack(id, parts[0])
		} else {
			v, err = parsePackParts(id, parts)
		}
		if err != nil {
			return nil, err
		}
		e.views.put(id, parts, v)
		return v, nil
	}
	if v, ok := e.packs.get(id); ok {
		return v, nil
	}
	data, err := e.b.Pack(ctx, id)
	if err != nil {
		if errors.Is(err, backend.ErrNoPack) {
			return nil, ErrCollected
		}
		return nil, err
	}
	v, err := parsePack(id, data)
	if err != nil {
		return nil, err
	}
	e.packs.put(id, v, int64(len(data))+64)
	return v, nil
}

// ErrCollected is returned when an object's pack was garbage-collected: the
// commit being read is no longer retained.
var ErrCollected = errors.New("engine: commit no longer retained")

func (e *Engine) object(ctx context.Context, r Ref) (byte, string, error) {
	v, err := e.pack(ctx, r.Pack)
	if err != nil {
		return 0, "", err
	}
	return v.object(r.Idx)
}

// nodeKey packs a Ref into the node cache's key: a map of integers costs
// about half what one of structs does, and every write makes a dozen node
// look-ups. Refs beyond 2^40 packs or 2^24 objects in a pack, which no
// store reaches, are not cached.
func nodeKey(r Ref) (uint64, bool) {
	return uint64(r.Pack)<<24 | uint64(r.Idx), r.Pack >= 0 && r.Pack < 1<<40 && r.Idx < 1<<24
}

func (e *Engine) node(ctx context.Context, r Ref) (*node, error) {
	if e.visits != nil {
		e.visits.Add(1)
	}
	key, cacheable := nodeKey(r)
	if n, ok := e.nodes.get(key); ok && cacheable {
		return n, nil
	}
	kind, data, err := e.object(ctx, r)
	if err != nil {
		return nil, err
	}
	n, err := parseNode(kind, data, r.Pack)
	if err != nil {
		return nil, err
	}
	if cacheable {
		e.nodes.put(key, n, n.cost())
	}
	return n, nil
}

func (e *Engine) chunk(ctx context.Context, r Ref) (string, error) {
	kind, data, err := e.object(ctx, r)
	if err != nil {
		return "", err
	}
	if kind != kindChunk {
		return "", fmt.Errorf("%w: %v is not a chunk", errCorrupt, r)
	}
	return data, nil
}

// chunks returns an entry's chunk list, loading it for large files.
func (e *Engine) chunks(ctx context.Context, ent *Entry) ([]Chunk, error) {
	if ent.List.IsZero() {
		return ent.Chunks, nil
	}
	kind, data, err := e.object(ctx, ent.List)
	if err != nil {
		return nil, err
	}
	if kind != kindChunkList {
		return nil, fmt.Errorf("%w: %v is not a chunk list", errCorrupt, ent.List)
	}
	r := reader{s: data}
	cs := decodeChunks(&r, ent.List.Pack, nil)
	if r.err != nil {
		return nil, fmt.Errorf("%w: chunk list %v", errCorrupt, ent.List)
	}
	return cs, nil
}

// Content returns a file's content.
func (e *Engine) Content(ctx context.Context, ent *Entry) (string, error) {
	cs, err := e.chunks(ctx, ent)
	if err != nil {
		return "", err
	}
	if len(cs) == 1 {
		return e.chunk(ctx, cs[0].Ref)
	}
	var b strings.Builder
	b.Grow(int(ent.Size))
	for _, c := range cs {
		s, err := e.chunk(ctx, c.Ref)
		if err != nil {
			return "", err
		}
		b.WriteString(s)
	}
	return b.String(), nil
}

// lookup finds path in the tree at root.
func (e *Engine) lookup(ctx context.Context, root Ref, path string) (Entry, bool, error) {
	if root.IsZero() {
		return Entry{}, false, nil
	}
	r := root
	for {
		n, err := e.node(ctx, r)
		if err != nil {
			return Entry{}, false, err
		}
		if n.leaf {
			i := sort.Search(n.count(), func(i int) bool { return n.key(i) >= path })
			if i < n.count() && n.key(i) == path {
				return n.entry(i, nil), true, nil
			}
			return Entry{}, false, nil
		}
		r = n.ref(childFor(n, path))
	}
}

// childFor returns the index of the child whose range holds key: the last
// child whose first key is <= key (the first child also holds smaller keys).
func childFor(n *node, key string) int {
	i := sort.Search(n.count(), func(i int) bool { return n.key(i) > key })
	if i == 0 {
		return 0
	}
	return i - 1
}

// scan calls fn for each entry with from <= path < to (to == "" means no
// upper bound), in path order, visiting only subtrees that overlap the
// range. fn returns false to stop.
// When full is false, the entries hold only their paths.
func (e *Engine) scan(ctx context.Context, root Ref, from, to string, full bool, fn func(*Entry) (bool, error)) error {
	return e.scanFiles(ctx, root, from, to, full, false, nil, fn)
}

// scanFiles is scan that calls fn only for the entries for which want
// returns true (all when want is nil). With files set, the caller reads
// the content of those entries: when the backend reads many packs at once
// (backend.PacksReader) the scan reads their packs ahead (ahead.go), and
// the packs of the nodes it is about to visit.
func (e *Engine) scanFiles(ctx context.Context, root Ref, from, to string, full, files bool, want func(string) bool, fn func(*Entry) (bool, error)) error {
	if root.IsZero() {
		return nil
	}
	sc := scanner{full: full, want: want, ahead: files && full && e.packsReader != nil}
	_, err := sc.node(ctx, e, root, from, to, fn)
	return err
}

// scanner is one scan's state: the entry it decodes each file into, whose
// chunk list's storage it reuses.
type scanner struct {
	full   bool // decode whole entries, not only paths
	ent    Entry
	chunks []Chunk
	// want, when set, picks the entries fn is called for.
	want func(string) bool
	// decided holds want's answers for the walk's next entries, which the
	// read-ahead asked (ahead.go).
	decided []bool
	// ahead reads the packs of the walk's next nodes and files ahead
	// (ahead.go); ra and aheadChunks are its storage.
	ahead       bool
	ra          readAhead
	aheadChunks []Chunk
	// covered is set while the walk visits a leaf whose files its parent
	// read ahead.
	covered bool
}

func (sc *scanner) node(ctx context.Context, e *Engine, r Ref, from, to string, fn func(*Entry) (bool, error)) (bool, error) {
	n, err := e.node(ctx, r)
	if err != nil {
		return false, err
	}
	if n.leaf {
		start := sort.Search(n.count(), func(i int) bool { return n.key(i) >= from })
		aheadAt := start
		if sc.covered {
			aheadAt = n.count()
		}
		for i := start; i < n.count(); i++ {
			if to != "" && n.key(i) >= to {
				return false, nil
			}
			if sc.ahead && i >= aheadAt {
				if aheadAt, err = sc.entriesAhead(ctx, e, n, i, to); err != nil {
					return false, err
				}
			}
			if !sc.wants(n.key(i)) {
				continue
			}
			if !sc.full {
				sc.ent.Path = n.key(i)
			} else if sc.ent = n.entry(i, sc.chunks); sc.ent.Chunks != nil {
				sc.chunks = sc.ent.Chunks
			}
			more, err := fn(&sc.ent)
			if err != nil || !more {
				return false, err
			}
		}
		return true, nil
	}
	aheadAt, covered := 0, 0
	for i := childFor(n, from); i < n.count(); i++ {
		if to != "" && n.key(i) >= to {
			return false, nil
		}
		if sc.ahead && i >= aheadAt {
			if aheadAt, covered, err = sc.childrenAhead(ctx, e, n, i, from, to); err != nil {
				return false, err
			}
		}
		sc.covered = i < covered
		more, err := sc.node(ctx, e, n.ref(i), from, to, fn)
		if err != nil || !more {
			return more, err
		}
	}
	return true, nil
}

// totals returns the number of files and the JSON bytes of the tree at root.
func (e *Engine) totals(ctx context.Context, root Ref) (files, bytes int64, err error) {
	if root.IsZero() {
		return 0, 0, nil
	}
	n, err := e.node(ctx, root)
	if err != nil {
		return 0, 0, err
	}
	files, bytes = n.totals()
	return files, bytes, nil
}
