package engine

import (
	"context"
	"slices"
	"sort"
)

// Read-ahead: a walk that reads the content of many files (grep, export)
// would read each file's pack on its own, one query and, on a server, one
// round trip each. When the backend reads many packs in one query
// (backend.PacksReader), the walk names the packs the next files and
// nodes need and reads those the cache lacks in one call, then reads the
// files from the cache as before. What a walk returns does not change: a
// pack the read-ahead missed (collected, corrupt, evicted, past the bound)
// is read on its own when it is needed, and fails there as it always did
// (docs/decisions/0088-batched-pack-reads.md).

// The bounds of one read-ahead call: how many packs it names, and how many
// bytes the backend reads at once (less through a cache under 16 MiB:
// see read). They bound what a walk that stops
// early (a grep's limit or budget) reads for nothing, and what a call
// holds in memory besides the cache.
const (
	aheadPacks = 64
	aheadBytes = 1 << 20
)

// readAhead collects the packs of one window of a walk: those the next
// items (entries of a leaf, children of an internal node) need that the
// cache lacks, with the first item that needs each.
type readAhead struct {
	ids []int64
	at  []int
}

// add names pack id for item i; it returns false once the window holds
// aheadPacks packs.
func (ra *readAhead) add(e *Engine, id int64, i int) bool {
	if len(ra.ids) == aheadPacks {
		return false
	}
	if id <= 0 || slices.Contains(ra.ids, id) {
		return true
	}
	if _, ok := e.packs.get(id); ok {
		return true
	}
	ra.ids = append(ra.ids, id)
	ra.at = append(ra.at, i)
	return len(ra.ids) < aheadPacks
}

// read reads the window's packs into the cache in one backend call, and
// empties the window. It returns the first item whose pack the backend
// left unread for its bound (end otherwise), where the next window starts.
func (ra *readAhead) read(ctx context.Context, e *Engine, end int) (int, error) {
	if len(ra.ids) == 0 {
		return end, nil
	}
	// A window takes at most a sixteenth of the cache, or through a small
	// cache it would evict packs the walk still needs (its own, the
	// nodes above it) before the walk reads them.
	packs, rest, err := e.packsReader.Packs(ctx, ra.ids, min(aheadBytes, e.packs.max/16))
	if err != nil {
		return 0, err
	}
	for id, data := range packs {
		// A pack that does not parse is left for the walk to read on its
		// own, and to fail there as it would have.
		if v, err := parsePack(id, data); err == nil {
			e.packs.put(id, v, int64(len(data))+64)
		}
	}
	for _, id := range rest {
		if k := slices.Index(ra.ids, id); k >= 0 {
			end = min(end, ra.at[k])
		}
	}
	ra.ids, ra.at = ra.ids[:0], ra.at[:0]
	return end, nil
}

// childrenAhead reads ahead for children i, i+1, ... of internal node n
// (up to the first whose key is at or past to): the packs of those
// neither cache holds, then, for the children that are leaves, the packs
// of the content of the entries the walk wants, across leaves, so that a
// call names up to aheadPacks packs however few files a leaf holds. It
// returns the child the next window starts at, past i, and the child
// whose leaf the walk must read ahead itself (entriesAhead): the leaves
// before it were covered whole.
func (sc *scanner) childrenAhead(ctx context.Context, e *Engine, n *node, i int, from, to string) (next, covered int, err error) {
	j := i
	for ; j < n.count() && (to == "" || j == i || n.key(j) < to); j++ {
		r := n.ref(j)
		if key, ok := nodeKey(r); ok {
			if _, ok := e.nodes.get(key); ok {
				continue
			}
		}
		if !sc.ra.add(e, r.Pack, j) {
			j++
			break
		}
	}
	next, err = sc.ra.read(ctx, e, j)
	if err != nil {
		return 0, 0, err
	}
	next = max(next, i+1)
	k := 0 // the entry of the walk, from its next one
	c := i
children:
	for ; c < next; c++ {
		r := n.ref(c)
		key, ok := nodeKey(r)
		if !ok {
			break
		}
		leaf, ok := e.nodes.get(key)
		if !ok {
			if _, ok := e.packs.get(r.Pack); !ok {
				break // left unread for its bound: the walk reads it
			}
			if leaf, err = e.node(ctx, r); err != nil {
				break // the walk meets the error where it always did
			}
		}
		if !leaf.leaf {
			break
		}
		for x := sort.Search(leaf.count(), func(x int) bool { return leaf.key(x) >= from }); x < leaf.count() && (to == "" || leaf.key(x) < to); x++ {
			w := sc.peek(k, leaf.key(x))
			k++
			if w && !sc.addEntry(e, leaf, x, c) {
				break children
			}
		}
	}
	covered, err = sc.ra.read(ctx, e, c)
	if err != nil {
		return 0, 0, err
	}
	return max(min(next, covered), i+1), covered, nil
}

// entriesAhead reads ahead the packs of the content of the entries i,
// i+1, ... of leaf n (up to the first at or past to) that the walk wants.
// It returns the entry the next window starts at, past i.
func (sc *scanner) entriesAhead(ctx context.Context, e *Engine, n *node, i int, to string) (int, error) {
	j, k := i, 0
	for ; j < n.count() && (to == "" || n.key(j) < to); j++ {
		w := sc.peek(k, n.key(j))
		k++
		if w && !sc.addEntry(e, n, j, j) {
			j++
			break
		}
	}
	end, err := sc.ra.read(ctx, e, j)
	return max(end, i+1), err
}

// addEntry names the packs of the content of entry x of leaf n, for item
// i; it returns false once the window is full.
func (sc *scanner) addEntry(e *Engine, n *node, x, i int) bool {
	ent := n.entry(x, sc.aheadChunks)
	if !ent.List.IsZero() {
		return sc.ra.add(e, ent.List.Pack, i)
	}
	sc.aheadChunks = ent.Chunks
	for _, c := range ent.Chunks {
		if !sc.ra.add(e, c.Ref.Pack, i) {
			return false
		}
	}
	return true
}

// The walk asks want of each entry in its range once, in order: wants
// for the entry the walk is at, peek for the k-th entry from it, which
// the read-ahead asks. Answers peek got wait in sc.decided for the walk.

// wants reports whether the walk wants its next entry, at path.
func (sc *scanner) wants(path string) bool {
	if sc.want == nil {
		return true
	}
	if len(sc.decided) > 0 {
		w := sc.decided[0]
		sc.decided = sc.decided[1:]
		return w
	}
	return sc.want(path)
}

// peek reports whether the walk wants the k-th entry from its next one,
// at path, for k = 0, 1, ... in order.
func (sc *scanner) peek(k int, path string) bool {
	if sc.want == nil {
		return true
	}
	if k < len(sc.decided) {
		return sc.decided[k]
	}
	sc.decided = append(sc.decided, sc.want(path))
	return sc.decided[k]
}
