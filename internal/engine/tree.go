package engine

import (
	"context"
	"encoding/binary"
	"sort"
)

// Tree updates are copy-on-write: applying a sorted batch of changes
// rewrites only the nodes on the paths from the root to the changed leaves,
// O(log n) nodes per change, and shares every other subtree with the
// previous version. Nodes split when their encoding passes maxLeafBytes or
// maxInternalBytes;
// an internal node left with one child is replaced by that child.
// Leaves are small because every write rewrites one (and the garbage of the
// rewritten copy is what the memory backend's writes cost most); internal
// nodes are larger, so the tree stays shallow. Measured with W1 on memory:
// a write's p50 24 µs with 1 KiB leaves against 31–34 µs with 4 KiB ones;
// W3's bytes per checkpoint 10.3 KiB against 10.7 KiB.
const (
	maxLeafBytes     = 1024
	maxInternalBytes = 4096
)

// change is one path's new entry, or its deletion (ent == nil).
type change struct {
	path string
	ent  *Entry
}

// build collects the objects and nodes made for one commit.
type build struct {
	pb    packBuilder
	nodes []builtNode
	// replaced are the nodes of the base tree that the new one rewrote:
	// once the commit is stored, they leave the node cache (stored).
	replaced []Ref
}

type builtNode struct {
	idx uint32
	n   *node
}

func (bd *build) addBuilt(idx uint32, n *node) {
	if bd.nodes == nil {
		bd.nodes = make([]builtNode, 0, 4) // a leaf, its parents
	}
	bd.nodes = append(bd.nodes, builtNode{idx, n})
}

func (e *Engine) applyTree(ctx context.Context, root Ref, changes []change, bd *build) (Ref, error) {
	if len(changes) == 0 {
		return root, nil
	}
	var kids []child
	if root.IsZero() {
		segs := make([]seg, 0, len(changes))
		var bytes int64
		for _, c := range changes {
			if c.ent != nil {
				segs = append(segs, seg{ent: c.ent})
				bytes += c.ent.JSONBytes
			}
		}
		kids = bd.nodesOf(true, segs, int64(len(segs)), bytes)
	} else {
		var err error
		if kids, err = e.applyRef(ctx, root, changes, bd); err != nil {
			return Ref{}, err
		}
	}
	for len(kids) > 1 {
		var files, bytes int64
		for _, k := range kids {
			files, bytes = files+k.files, bytes+k.bytes
		}
		kids = bd.nodesOf(false, []seg{{kids: kids}}, files, bytes)
	}
	if len(kids) == 0 {
		return Ref{}, nil
	}
	return kids[0].ref, nil
}

// applyRef applies sorted changes to the subtree at r and returns what it
// became: no node (emptied), one, or several (split).
func (e *Engine) applyRef(ctx context.Context, r Ref, changes []change, bd *build) ([]child, error) {
	n, err := e.node(ctx, r)
	if err != nil {
		return nil, err
	}
	bd.replaced = append(bd.replaced, r)
	// The new node is the old one's items, runs of them unchanged, with the
	// changed ones replaced.
	var buf [8]seg
	segs := buf[:0]
	files, bytes := n.files, n.bytes
	count, next := n.count(), 0
	if n.leaf {
		for _, c := range changes {
			i := next + sort.Search(count-next, func(k int) bool { return n.key(next+k) >= c.path })
			if i > next {
				segs = append(segs, seg{n: n, a: next, b: i})
			}
			if i < count && n.key(i) == c.path {
				f, b := n.itemTotals(i)
				files, bytes = files-f, bytes-b
				i++
			}
			if c.ent != nil {
				segs = append(segs, seg{ent: c.ent})
				files, bytes = files+1, bytes+c.ent.JSONBytes
			}
			next = i
		}
	} else {
		for i := 0; i < len(changes); {
			ci := childFor(n, changes[i].path)
			j := len(changes)
			if ci+1 < count {
				bound := n.key(ci + 1)
				for j = i + 1; j < len(changes) && changes[j].path < bound; j++ {
				}
			}
			old := n.child(ci)
			sub, err := e.applyRef(ctx, old.ref, changes[i:j], bd)
			if err != nil {
				return nil, err
			}
			if ci > next {
				segs = append(segs, seg{n: n, a: next, b: ci})
			}
			files, bytes = files-old.files, bytes-old.bytes
			for _, k := range sub {
				files, bytes = files+k.files, bytes+k.bytes
			}
			if len(sub) > 0 {
				segs = append(segs, seg{kids: sub})
			}
			next, i = ci+1, j
		}
	}
	if next < count {
		segs = append(segs, seg{n: n, a: next, b: count})
	}
	return bd.nodesOf(n.leaf, segs, files, bytes), nil
}

// seg is a run of a new node's items: the items [a, b) of an existing
// node n, new children kids, or a new entry ent.
type seg struct {
	n    *node
	a, b int
	kids []child
	ent  *Entry
}

func (s *seg) len() int {
	switch {
	case s.n != nil:
		return s.b - s.a
	case s.ent != nil:
		return 1
	}
	return len(s.kids)
}

// Item sizes, for splitting: about their encoded size plus an overhead,
// as nodes were sized when they were kept decoded.
const (
	childOverhead = 14
	entryOverhead = 6
)

// itemSize returns the size of the run's item i (0 <= i < len()).
func (s *seg) itemSize(leaf bool, i int) int {
	switch {
	case s.n != nil:
		size := int(s.n.offs[s.a+i+1]&^selfRef - s.n.offs[s.a+i]&^selfRef)
		if leaf {
			return size + entryOverhead
		}
		return size + childOverhead
	case s.ent != nil:
		return entrySize(s.ent)
	}
	return childSize(&s.kids[i])
}

// size returns the run's size, for splitting.
func (s *seg) size(leaf bool) int {
	if s.n == nil {
		t := 0
		for i := range s.len() {
			t += s.itemSize(leaf, i)
		}
		return t
	}
	overhead := childOverhead
	if leaf {
		overhead = entryOverhead
	}
	return int(s.n.offs[s.b]&^selfRef-s.n.offs[s.a]&^selfRef) + overhead*(s.b-s.a)
}

// childSize is a new child's size for splitting: about its encoded size
// plus childOverhead.
func childSize(c *child) int { return len(c.first) + 24 }

// nodesOf makes the nodes holding the items of segs, whose totals are
// files and bytes: one node, or several of at most maxLeafBytes or
// maxInternalBytes. An internal node of one child is replaced by the
// child.
func (bd *build) nodesOf(leaf bool, segs []seg, files, bytes int64) []child {
	count, size := 0, 0
	for i := range segs {
		count += segs[i].len()
		size += segs[i].size(leaf)
	}
	limit := maxInternalBytes
	if leaf {
		limit = maxLeafBytes
	}
	switch {
	case count == 0:
		return nil
	case count == 1 && !leaf:
		if s := segs[0]; s.n != nil {
			return []child{s.n.child(s.a)}
		}
		return segs[0].kids
	case size <= limit:
		return []child{bd.encode(leaf, segs, count, files, bytes)}
	}
	// Split into runs of similar size.
	type at struct{ seg, i int }
	items := make([]at, 0, count)
	for si := range segs {
		for i := range segs[si].len() {
			items = append(items, at{si, i})
		}
	}
	var out []child
	var gbuf [4][2]int
	for _, g := range groups(gbuf[:0], count, limit, func(k int) int {
		return segs[items[k].seg].itemSize(leaf, items[k].i)
	}) {
		var sub []seg
		var files, bytes int64
		for k := g[0]; k < g[1]; {
			s := segs[items[k].seg]
			from := items[k].i
			end := min(s.len()-from, g[1]-k) + from // this run's part in the group
			switch {
			case s.n != nil:
				s.a, s.b = s.a+from, s.a+end
				for i := s.a; i < s.b; i++ {
					f, b := s.n.itemTotals(i)
					files, bytes = files+f, bytes+b
				}
			case s.ent != nil:
				files, bytes = files+1, bytes+s.ent.JSONBytes
			default:
				s.kids = s.kids[from:end]
				for _, c := range s.kids {
					files, bytes = files+c.files, bytes+c.bytes
				}
			}
			sub = append(sub, s)
			k += end - from
		}
		out = append(out, bd.encode(leaf, sub, g[1]-g[0], files, bytes))
	}
	return out
}

// encode encodes one node of the count items of segs, whose totals are
// files and bytes, copying the runs of existing items as they are encoded,
// and adds it to the pack.
func (bd *build) encode(leaf bool, segs []seg, count int, files, bytes int64) child {
	size := binary.MaxVarintLen64
	for i := range segs {
		switch s := &segs[i]; {
		case s.n != nil:
			// Plus room for an item rewritten with its pack's ID.
			size += int(s.n.offs[s.b]&^selfRef-s.n.offs[s.a]&^selfRef) + 2*binary.MaxVarintLen64
		case s.ent != nil:
			size += len(s.ent.Path) + 6*binary.MaxVarintLen64 + len(s.ent.Chunks)*3*binary.MaxVarintLen64
		default:
			for _, k := range s.kids {
				size += len(k.first) + 6*binary.MaxVarintLen64
			}
		}
	}
	b := binary.AppendUvarint(make([]byte, 0, size), uint64(count))
	offs := make([]uint32, 0, count+1)
	for si := range segs {
		switch s := &segs[si]; {
		case s.n != nil:
			b, offs = copyItems(b, offs, s.n, s.a, s.b)
		case s.ent != nil:
			off := uint32(len(b))
			if pendingRefs(s.ent) {
				off |= selfRef
			}
			offs = append(offs, off)
			b = appendEntry(b, s.ent)
		default:
			for i := range s.kids {
				k := &s.kids[i]
				off := uint32(len(b))
				if k.ref.Pack == pendingPack {
					off |= selfRef
				}
				offs = append(offs, off)
				b = appendChild(b, k)
			}
		}
	}
	offs = append(offs, uint32(len(b)))
	kind := kindInternal
	if leaf {
		kind = kindLeaf
	}
	ref := bd.pb.add(kind, b)
	nd := &node{leaf: leaf, data: bd.pb.objs[ref.Idx], offs: offs, pack: pendingPack, files: files, bytes: bytes}
	bd.addBuilt(ref.Idx, nd)
	return child{first: nd.key(0), ref: ref, files: files, bytes: bytes}
}

// pendingRefs reports whether a new entry refers to objects of the pack
// being built.
func pendingRefs(e *Entry) bool {
	if e.List.Pack == pendingPack {
		return true
	}
	for _, c := range e.Chunks {
		if c.Ref.Pack == pendingPack {
			return true
		}
	}
	return false
}

// copyItems appends the encodings of n's items [a, b) to enc, and their
// offsets in enc to offs: their bytes as they are, in runs, except for the
// items that refer to n's own pack, written again with its ID.
func copyItems(enc []byte, offs []uint32, n *node, a, b int) ([]byte, []uint32) {
	start := a // of the run being copied
	shift := uint32(len(enc)) - n.offs[a]&^selfRef
	for i := a; i < b; i++ {
		off := n.offs[i]
		if off&selfRef == 0 {
			offs = append(offs, off+shift)
			continue
		}
		enc = append(enc, n.data[n.offs[start]&^selfRef:off&^selfRef]...)
		offs = append(offs, uint32(len(enc)))
		if n.leaf {
			ent := n.entry(i, nil)
			enc = appendEntry(enc, &ent)
		} else {
			c := n.child(i)
			enc = appendChild(enc, &c)
		}
		start = i + 1
		shift = uint32(len(enc)) - n.offs[start]&^selfRef
	}
	return append(enc, n.data[n.offs[start]&^selfRef:n.offs[b]&^selfRef]...), offs
}

// groups splits n items of the given sizes into runs of similar total size,
// each at most maxBytes when the items allow, appended to out.
func groups(out [][2]int, n, maxBytes int, size func(int) int) [][2]int {
	total := 0
	for i := 0; i < n; i++ {
		total += size(i)
	}
	if total <= maxBytes {
		return append(out, [2]int{0, n})
	}
	k := (total + maxBytes - 1) / maxBytes
	target := total / k
	start, acc := 0, 0
	for i := 0; i < n; i++ {
		acc += size(i)
		if acc >= target && len(out) < k-1 && i+1 < n {
			out = append(out, [2]int{start, i + 1})
			start, acc = i+1, 0
		}
	}
	return append(out, [2]int{start, n})
}

// stored caches the built nodes and the pack now that the commit's pack has
// an ID: the next operation on the thread finds its tree decoded already.
//
// The nodes the commit replaced leave the cache: they belong to the
// thread's previous tree, which only reads of older commits (and forks
// sharing them) still use, and these read them again from their packs.
// Kept, they filled the cache with superseded trees: every write puts
// the path from the root to its leaf (about 9 KB in W1), so after 64 MiB
// of writes the current tree's leaves that no write had touched since
// were evicted, and a scan (glob, grep) read their packs again from the
// backend (docs/decisions/0076-cache-drops-replaced-nodes.md).
func (e *Engine) stored(id int64, bd *build) {
	if !e.keepReplaced {
		for _, r := range bd.replaced {
			if key, ok := nodeKey(r); ok {
				e.nodes.remove(key)
			}
		}
	}
	if !bd.pb.empty() && e.partsReader == nil {
		// The objects are never modified once built: share them.
		v := bd.pb.view(id)
		e.packs.put(id, v, v.size())
	}
	for _, b := range bd.nodes {
		b.n.pack = id // its Pack 0 refs, the pending ones, resolve to it
		if key, ok := nodeKey(Ref{Pack: id, Idx: b.idx}); ok {
			e.nodes.put(key, b.n, b.n.cost())
		}
	}
}
