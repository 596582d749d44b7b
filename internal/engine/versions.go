package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/satchel-dev/satchel/backend"
)

// Policy is a retention policy (DESIGN §2.6). A zero field is unset.
type Policy struct {
	MaxAge         time.Duration
	MaxCommits     int
	MaxCheckpoints int
}

// IsZero reports whether no rule is set.
func (p Policy) IsZero() bool { return p.MaxAge == 0 && p.MaxCommits == 0 && p.MaxCheckpoints == 0 }

// Retain drops from a thread's log the commits that every rule set in p
// allows dropping: older than MaxAge, not among the last MaxCommits, and,
// for a checkpoint, not among the newest MaxCheckpoints checkpoints
// (checkpoints are kept when MaxCheckpoints is unset). The head is never
// dropped; with no rule set nothing is. It returns how many were dropped.
func (e *Engine) Retain(ctx context.Context, thread int64, p Policy) (int, error) {
	if p.IsZero() {
		return 0, nil
	}
	log, err := e.b.Log(ctx, thread, 0, 0)
	if err != nil {
		return 0, err
	}
	cps, err := e.b.Checkpoints(ctx, thread)
	if err != nil {
		return 0, err
	}
	sort.SliceStable(cps, func(i, j int) bool { return cps[i].Seq > cps[j].Seq })
	isCheckpoint := map[int64]bool{}
	keepCheckpoint := map[int64]bool{}
	for i, cp := range cps {
		isCheckpoint[cp.Seq] = true
		if p.MaxCheckpoints == 0 || i < p.MaxCheckpoints {
			keepCheckpoint[cp.Seq] = true
		}
	}
	now, err := e.b.Now(ctx)
	if err != nil {
		return 0, err
	}
	var drop []int64
	for i, c := range log {
		if i == 0 {
			continue // the head
		}
		if p.MaxAge > 0 && now.Sub(c.Time) <= p.MaxAge {
			continue
		}
		if p.MaxCommits > 0 && i < p.MaxCommits {
			continue
		}
		if isCheckpoint[c.Seq] && keepCheckpoint[c.Seq] {
			continue
		}
		drop = append(drop, c.Seq)
	}
	if len(drop) == 0 {
		return 0, nil
	}
	return len(drop), e.b.Drop(ctx, thread, drop)
}

// GCStats reports what a collection did.
type GCStats struct {
	Retained  int // retained commits whose trees were walked
	Walked    int // tree nodes read to find what is live
	Deleted   int // packs deleted
	Rewritten int // packs rewritten without their unreachable objects
	Kept      int // packs dropped less than grace ago, left alone
}

// Collect removes, in a scope, what no retained commit reaches: packs of
// dropped commits are deleted when nothing reachable lies in them, and
// rewritten without their unreachable objects otherwise. Packs dropped less
// than grace ago are left alone, so a reader at a commit being dropped
// finishes its read. Writers may run meanwhile: a new commit only ever
// references objects reachable from a commit that was retained when it was
// stored, and those are marked live (docs/decisions/0005-gc.md).
func (e *Engine) Collect(ctx context.Context, scope string, grace time.Duration) (GCStats, error) {
	var st GCStats
	now, err := e.b.Now(ctx)
	if err != nil {
		return st, err
	}
	snap, err := e.b.GCSnapshot(ctx, scope, now.Add(-grace))
	if err != nil {
		return st, err
	}
	st.Retained = len(snap.Retained)
	if grace > 0 {
		if st.Kept, err = e.kept(ctx, scope, now, snap.Dropped); err != nil {
			return st, err
		}
	}
	if len(snap.Dropped) == 0 {
		return st, nil
	}
	live := map[int64]map[uint32]bool{}
	for _, id := range snap.Dropped {
		live[id] = map[uint32]bool{}
	}
	// An object only ever references objects of its own pack or of older
	// ones (a commit builds on commits stored before it, and pack ids grow
	// with time), so a subtree whose root lies in a pack older than the
	// oldest dropped one holds nothing to mark: the walk skips it, and a
	// collection reads the nodes written since that pack, not the whole
	// tree of every retained commit.
	oldest := snap.Dropped[0]
	for _, id := range snap.Dropped {
		oldest = min(oldest, id)
	}
	mark := func(r Ref) {
		if m, ok := live[r.Pack]; ok {
			m[r.Idx] = true
		}
	}
	visited := map[Ref]bool{}
	var walk func(r Ref) error
	walk = func(r Ref) error {
		if r.IsZero() || r.Pack < oldest || visited[r] {
			return nil
		}
		visited[r] = true
		mark(r)
		n, err := e.node(ctx, r)
		if err != nil {
			return err
		}
		st.Walked++
		if !n.leaf {
			for i := range n.count() {
				if err := walk(n.ref(i)); err != nil {
					return err
				}
			}
			return nil
		}
		for i := range n.count() {
			ent := n.entry(i, nil)
			if !ent.List.IsZero() {
				if ent.List.Pack < oldest {
					continue // its chunks are older still
				}
				mark(ent.List)
			}
			cs, err := e.chunks(ctx, &ent)
			if err != nil {
				return err
			}
			for _, c := range cs {
				mark(c.Ref)
			}
		}
		return nil
	}
	for _, c := range snap.Retained {
		root, err := decodeRoot(c.Root, c.ID)
		if err != nil {
			return st, err
		}
		if err := walk(root); err != nil {
			return st, fmt.Errorf("gc: walking commit %d of thread %d: %w", c.Seq, c.Thread, err)
		}
	}
	var del []int64
	for _, id := range snap.Dropped {
		m := live[id]
		if len(m) == 0 {
			del = append(del, id)
			continue
		}
		v, err := e.pack(ctx, id)
		if errors.Is(err, ErrCollected) {
			continue
		}
		if err != nil {
			return st, err
		}
		if len(m) < len(v.kinds) && !allTombstones(v, m) {
			if err := e.b.RewritePack(ctx, id, v.rewrite(m)); err != nil {
				return st, err
			}
			e.packs.remove(id)
			st.Rewritten++
		}
	}
	if len(del) > 0 {
		if err := e.b.DeletePacks(ctx, del); err != nil {
			return st, err
		}
		for _, id := range del {
			e.packs.remove(id)
		}
		st.Deleted = len(del)
	}
	if v, ok := backend.As[backend.Vacuumer](e.b); ok && (st.Deleted > 0 || st.Rewritten > 0) {
		if err := v.Vacuum(ctx); err != nil {
			return st, err
		}
	}
	return st, nil
}

// kept counts the packs dropped before now that the grace leaves alone:
// those dropped but not among the packs dropped before the cutoff.
func (e *Engine) kept(ctx context.Context, scope string, now time.Time, collectable []int64) (int, error) {
	all, err := e.b.GCSnapshot(ctx, scope, now)
	if err != nil {
		return 0, err
	}
	if len(all.Dropped) <= len(collectable) {
		return 0, nil
	}
	in := make(map[int64]bool, len(collectable))
	for _, id := range collectable {
		in[id] = true
	}
	n := 0
	for _, id := range all.Dropped {
		if !in[id] {
			n++
		}
	}
	return n, nil
}

// allTombstones reports whether every object outside live is blanked already.
func allTombstones(v *packView, live map[uint32]bool) bool {
	for i, k := range v.kinds {
		if !live[uint32(i)] && k != kindTombstone {
			return false
		}
	}
	return true
}

// ChangeKind says how a path differs between two trees.
type ChangeKind int

const (
	Added ChangeKind = iota + 1
	Removed
	Modified
)

func (k ChangeKind) String() string {
	switch k {
	case Added:
		return "added"
	case Removed:
		return "removed"
	case Modified:
		return "changed"
	}
	return "?"
}

// Change is one path that differs between two trees.
type Change struct {
	Path     string
	Kind     ChangeKind
	Old, New *Entry
}

// diffItem is a subtree (ent == nil) or an entry, in key order.
type diffItem struct {
	ref Ref
	ent *Entry
}

// Diff lists the paths that differ between two snapshots, in path order. It
// walks only the subtrees that the two trees do not share.
func (e *Engine) Diff(ctx context.Context, a, b *Snapshot) ([]Change, error) {
	return e.diff(ctx, a, b, false)
}

// diff is Diff; with exact, a file whose content is the same but whose
// modified time differs is Modified too.
func (e *Engine) diff(ctx context.Context, a, b *Snapshot, exact bool) ([]Change, error) {
	if a.root == b.root {
		return nil, nil
	}
	var as, bs []diffItem
	if !a.root.IsZero() {
		as = []diffItem{{ref: a.root}}
	}
	if !b.root.IsZero() {
		bs = []diffItem{{ref: b.root}}
	}
	for {
		inB := map[Ref]bool{}
		for _, it := range bs {
			if it.ent == nil {
				inB[it.ref] = true
			}
		}
		shared := map[Ref]bool{}
		for _, it := range as {
			if it.ent == nil && inB[it.ref] {
				shared[it.ref] = true
			}
		}
		as, bs = dropShared(as, shared), dropShared(bs, shared)
		if !hasSubtree(as) && !hasSubtree(bs) {
			break
		}
		var err error
		if as, err = e.expand(ctx, as); err != nil {
			return nil, err
		}
		if bs, err = e.expand(ctx, bs); err != nil {
			return nil, err
		}
	}
	var out []Change
	i, j := 0, 0
	for i < len(as) || j < len(bs) {
		switch {
		case j == len(bs) || i < len(as) && as[i].ent.Path < bs[j].ent.Path:
			out = append(out, Change{Path: as[i].ent.Path, Kind: Removed, Old: as[i].ent})
			i++
		case i == len(as) || bs[j].ent.Path < as[i].ent.Path:
			out = append(out, Change{Path: bs[j].ent.Path, Kind: Added, New: bs[j].ent})
			j++
		default:
			same, err := e.sameContent(ctx, as[i].ent, bs[j].ent)
			if err != nil {
				return nil, err
			}
			if !same || exact && as[i].ent.ModTime != bs[j].ent.ModTime {
				out = append(out, Change{Path: as[i].ent.Path, Kind: Modified, Old: as[i].ent, New: bs[j].ent})
			}
			i++
			j++
		}
	}
	return out, nil
}

func dropShared(items []diffItem, shared map[Ref]bool) []diffItem {
	if len(shared) == 0 {
		return items
	}
	out := items[:0:0]
	for _, it := range items {
		if it.ent == nil && shared[it.ref] {
			continue
		}
		out = append(out, it)
	}
	return out
}

func hasSubtree(items []diffItem) bool {
	for _, it := range items {
		if it.ent == nil {
			return true
		}
	}
	return false
}

func (e *Engine) expand(ctx context.Context, items []diffItem) ([]diffItem, error) {
	var out []diffItem
	for _, it := range items {
		if it.ent != nil {
			out = append(out, it)
			continue
		}
		n, err := e.node(ctx, it.ref)
		if err != nil {
			return nil, err
		}
		if n.leaf {
			for i := range n.count() {
				ent := n.entry(i, nil)
				out = append(out, diffItem{ent: &ent})
			}
			continue
		}
		for i := range n.count() {
			out = append(out, diffItem{ref: n.ref(i)})
		}
	}
	return out, nil
}

func (e *Engine) sameContent(ctx context.Context, a, b *Entry) (bool, error) {
	if a.Size != b.Size {
		return false, nil
	}
	if a.List == b.List && !a.List.IsZero() {
		return true, nil
	}
	if a.List.IsZero() && b.List.IsZero() && len(a.Chunks) == len(b.Chunks) {
		same := true
		for i := range a.Chunks {
			if a.Chunks[i] != b.Chunks[i] {
				same = false
				break
			}
		}
		if same {
			return true, nil
		}
	}
	ca, err := e.Content(ctx, a)
	if err != nil {
		return false, err
	}
	cb, err := e.Content(ctx, b)
	if err != nil {
		return false, err
	}
	return ca == cb, nil
}
