package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/internal/jsonsize"
)

// Fault is a problem a check found in the objects of one commit: which
// object, and what is wrong with it.
type Fault struct {
	Object  string // "root", "node 12.3", "chunk 12.4", "file notes/a.md", ...
	Problem string
}

// Checker checks the trees of commits, reading every node, chunk list and
// chunk they reach. It reads each object once: a subtree that commits
// share is checked at the first that reaches it, and its faults are
// reported again for each later one. Use an engine of its own (caches
// empty), so that what is checked is what storage holds.
type Checker struct {
	e     *Engine
	seen  map[Ref][]Fault // checked subtrees and objects, with their faults
	nodes map[Ref]nodeSum // checked nodes that decoded
	// files are the faults of the leaf entries already checked, by their
	// encoding (an entry copied unchanged into a new leaf, its refs all
	// absolute, is the same file: checked once).
	files map[string][]Fault
}

// nodeSum is what a parent checks of a child node already read.
type nodeSum struct {
	first        string
	files, bytes int64
}

// NewChecker returns a checker reading through e.
func NewChecker(e *Engine) *Checker {
	return &Checker{e: e, seen: map[Ref][]Fault{}, nodes: map[Ref]nodeSum{}, files: map[string][]Fault{}}
}

// Objects returns how many distinct objects the checker has read.
func (k *Checker) Objects() int { return len(k.seen) }

// Commit checks the tree of c and returns its faults. An error is a
// failure to read (a closed store, a cancelled context), not a fault.
func (k *Checker) Commit(ctx context.Context, c backend.Commit) ([]Fault, error) {
	root, err := decodeRoot(c.Root, c.ID)
	if err != nil {
		return []Fault{{Object: "root", Problem: "does not decode"}}, nil
	}
	if root.IsZero() {
		return nil, nil
	}
	faults, _, _, err := k.node(ctx, root)
	return faults, err
}

// fault turns a read error into a fault of obj, or returns it when it is
// not about the stored data.
func fault(obj string, err error) ([]Fault, error) {
	switch {
	case errors.Is(err, ErrCollected):
		return []Fault{{Object: obj, Problem: "its pack is missing"}}, nil
	case errors.Is(err, errCorrupt):
		return []Fault{{Object: obj, Problem: err.Error()}}, nil
	}
	return nil, err
}

// node checks the subtree at r, and returns its faults and what its
// parent checks of it (ok false when it did not decode).
func (k *Checker) node(ctx context.Context, r Ref) (faults []Fault, sum nodeSum, ok bool, err error) {
	obj := "node " + r.String()
	if faults, seen := k.seen[r]; seen {
		sum, ok := k.nodes[r]
		return faults, sum, ok, nil
	}
	n, err := k.e.node(ctx, r)
	if err != nil {
		faults, err := fault(obj, err)
		if err == nil {
			k.seen[r] = faults
		}
		return faults, nodeSum{}, false, err
	}
	add := func(problem string, args ...any) {
		faults = append(faults, Fault{Object: obj, Problem: fmt.Sprintf(problem, args...)})
	}

	for i := 1; i < n.count(); i++ {
		if n.key(i-1) >= n.key(i) {
			add("items %q and %q are out of order", n.key(i-1), n.key(i))
		}
	}
	if n.leaf {
		for i := range n.count() {
			item := n.item(i)
			self := n.offs[i]&selfRef != 0
			if fs, ok := k.files[item]; ok && !self {
				faults = append(faults, fs...)
				continue
			}
			ent := n.entry(i, nil)
			fs, err := k.file(ctx, &ent)
			if err != nil {
				return nil, nodeSum{}, false, err
			}
			if !self {
				k.files[strings.Clone(item)] = fs
			}
			faults = append(faults, fs...)
		}
	} else {
		for i := range n.count() {
			c := n.child(i)
			fs, cn, ok, err := k.node(ctx, c.ref)
			if err != nil {
				return nil, nodeSum{}, false, err
			}
			faults = append(faults, fs...)
			if ok && cn.first != c.first {
				add("says %s begins with %q, it begins with %q", c.ref, c.first, cn.first)
			}
			if ok && (cn.files != c.files || cn.bytes != c.bytes) {
				add("counts %d files and %d bytes under %s, which holds %d files and %d bytes", c.files, c.bytes, c.ref, cn.files, cn.bytes)
			}
		}
	}
	sum = nodeSum{first: n.key(0), files: n.files, bytes: n.bytes}
	k.seen[r] = faults
	k.nodes[r] = sum
	return faults, sum, true, nil
}

// file checks an entry's chunk list and chunks: each exists, is a chunk,
// and together they are as long as the entry says.
func (k *Checker) file(ctx context.Context, ent *Entry) ([]Fault, error) {
	obj := "file " + ent.Path
	if !ent.List.IsZero() {
		if faults, ok := k.seen[ent.List]; ok && len(faults) > 0 {
			return faults, nil
		}
	}
	cs, err := k.e.chunks(ctx, ent)
	if err != nil {
		faults, err := fault(obj+", chunk list "+ent.List.String(), err)
		if err == nil && !ent.List.IsZero() {
			k.seen[ent.List] = faults
		}
		return faults, err
	}
	if !ent.List.IsZero() {
		k.seen[ent.List] = nil
	}
	var faults []Fault
	var size int64
	for _, c := range cs {
		size += c.Len
		if f, ok := k.seen[c.Ref]; ok {
			faults = append(faults, f...)
			continue
		}
		data, err := k.e.chunk(ctx, c.Ref)
		var f []Fault
		switch {
		case err != nil:
			if f, err = fault(obj+", chunk "+c.Ref.String(), err); err != nil {
				return nil, err
			}
		case int64(len(data)) != c.Len:
			f = []Fault{{Object: obj + ", chunk " + c.Ref.String(), Problem: fmt.Sprintf("holds %d bytes, the file says %d", len(data), c.Len)}}
		}
		k.seen[c.Ref] = f
		faults = append(faults, f...)
	}
	if size != ent.Size {
		faults = append(faults, Fault{Object: obj, Problem: fmt.Sprintf("is %d bytes, its chunks hold %d", ent.Size, size)})
	}
	if len(faults) > 0 {
		return faults, nil
	}
	// What the entry says of its content: lines, final newline, JSON size.
	content, err := k.e.Content(ctx, ent)
	if err != nil {
		return fault(obj, err)
	}
	lines, endsNL := countLines(content)
	if lines != ent.Lines || endsNL != ent.EndsNL {
		faults = append(faults, Fault{Object: obj, Problem: fmt.Sprintf("counts %d lines (final newline %v), its content has %d (%v)", ent.Lines, ent.EndsNL, lines, endsNL)})
	}
	if n := int64(jsonsize.Entry(ent.Path, content)); n != ent.JSONBytes {
		faults = append(faults, Fault{Object: obj, Problem: fmt.Sprintf("counts %d JSON bytes, its path and content are %d", ent.JSONBytes, n)})
	}
	return faults, nil
}
