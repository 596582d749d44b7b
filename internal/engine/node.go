package engine

import (
	"encoding/binary"
	"fmt"
)

// Entry is a file in a tree: its path, what stat reports, and where its
// content lives. The content hash is not stored: stat and preconditions hash
// the content when asked (4 µs for 7 KiB), which keeps every write and every
// leaf smaller (docs/decisions/0003-tree-and-packs.md).
type Entry struct {
	Path string
	// Size is the content's length in bytes.
	Size int64
	// Lines is the number of lines (DESIGN §2.2).
	Lines int64
	// EndsNL reports whether the content ends with "\n".
	EndsNL bool
	// ModTime is when the file was last written, in Unix microseconds (an
	// integer keeps entries small and free of pointers).
	ModTime int64
	// JSONBytes is the path plus the content, each counted as a JSON string
	// (DESIGN §2.4).
	JSONBytes int64
	// Chunks are the content's chunks in order, or nil when List is set.
	Chunks []Chunk
	// List, when not zero, is a chunk-list object holding Chunks (large files).
	List Ref
}

// Chunk is one piece of a file's content.
type Chunk struct {
	Ref Ref
	Len int64
}

const (
	flagEndsNL = 1
	flagList   = 2
)

// maxInlineChunks is how many chunk references a leaf entry holds before
// they move to a chunk-list object of their own.
const maxInlineChunks = 16

func appendChunks(b []byte, cs []Chunk) []byte {
	b = binary.AppendUvarint(b, uint64(len(cs)))
	for _, c := range cs {
		b = appendRef(b, c.Ref)
		b = binary.AppendUvarint(b, uint64(c.Len))
	}
	return b
}

// decodeChunks decodes a chunk list into dst's storage (a new slice when
// dst is nil). The result is never nil: a stored entry without content has
// an empty list, a pending one (Tx) a nil one.
func decodeChunks(r *reader, pack int64, dst []Chunk) []Chunk {
	n := r.uvarint()
	if r.err != nil || n > uint64(len(r.s)) {
		r.err = errCorrupt
		return nil
	}
	cs := dst[:0]
	if cs == nil || uint64(cap(cs)) < n {
		cs = make([]Chunk, 0, max(n, uint64(cap(dst))))
	}
	for range n {
		ref := r.ref(pack)
		cs = append(cs, Chunk{Ref: ref, Len: int64(r.uvarint())})
	}
	return cs
}

func appendEntry(b []byte, e *Entry) []byte {
	b = appendStr(b, e.Path)
	b = binary.AppendUvarint(b, uint64(e.Size))
	b = binary.AppendUvarint(b, uint64(e.Lines))
	var flags byte
	if e.EndsNL {
		flags |= flagEndsNL
	}
	if !e.List.IsZero() {
		flags |= flagList
	}
	b = append(b, flags)
	b = binary.AppendVarint(b, e.ModTime)
	b = binary.AppendUvarint(b, uint64(e.JSONBytes))
	if !e.List.IsZero() {
		b = appendRef(b, e.List)
	} else {
		b = appendChunks(b, e.Chunks)
	}
	return b
}

// decodeEntry decodes an entry, its chunk list into chunks' storage (see
// decodeChunks).
func decodeEntry(r *reader, pack int64, chunks []Chunk) Entry {
	var e Entry
	e.Path = r.str()
	e.Size = int64(r.uvarint())
	e.Lines = int64(r.uvarint())
	flags := r.byte1()
	e.EndsNL = flags&flagEndsNL != 0
	e.ModTime = r.varint()
	e.JSONBytes = int64(r.uvarint())
	if flags&flagList != 0 {
		e.List = r.ref(pack)
	} else {
		e.Chunks = decodeChunks(r, pack, chunks)
	}
	return e
}

// skipEntry reads past an entry, returning its JSON bytes and whether it
// refers to its own pack (a ref written with Pack 0).
func skipEntry(r *reader) (jsonBytes int64, self bool) {
	r.str()
	r.uvarint()
	r.uvarint()
	flags := r.byte1()
	r.varint()
	jsonBytes = int64(r.uvarint())
	if flags&flagList != 0 {
		self = r.uvarint() == 0
		r.uvarint()
		return jsonBytes, self
	}
	n := r.uvarint()
	for i := uint64(0); i < n && r.err == nil; i++ {
		if r.uvarint() == 0 {
			self = true
		}
		r.uvarint()
		r.uvarint()
	}
	return jsonBytes, self
}

// node is a tree node: a leaf's entries sorted by path, or an internal
// node's children sorted by their first path, each child with its
// subtree's totals so that bounds are checked at the root in O(1). A node
// is kept as its encoding plus where each item starts: a commit rewriting
// it copies the bytes of its unchanged items in runs instead of decoding
// and re-encoding each, and the collector has nothing to scan in it
// (docs/decisions/0013-nodes-as-encodings.md).
type node struct {
	leaf bool
	// data is the encoding: uvarint count, then the items. A leaf's item is
	// an entry (appendEntry), an internal node's a child: its first path
	// (str), ref, files and bytes (uvarints). Both begin with their key.
	data string
	// offs[i] is where item i starts in data, with selfRef set when the
	// item refers to an object of the node's own pack (written with Pack
	// 0), which a copy into another pack must write with the pack's ID.
	// offs[count] == len(data).
	offs []uint32
	// pack is the pack data lives in (pendingPack while being built).
	pack int64
	// files and bytes are the subtree's totals.
	files, bytes int64
}

type child struct {
	first string // the smallest path in the subtree
	ref   Ref
	files int64
	bytes int64
}

// selfRef marks an offset whose item refers to its node's own pack.
const selfRef = 1 << 31

func (n *node) totals() (files, bytes int64) { return n.files, n.bytes }

// count returns the node's number of items.
func (n *node) count() int { return len(n.offs) - 1 }

// item returns item i's encoding.
func (n *node) item(i int) string { return n.data[n.offs[i]&^selfRef : n.offs[i+1]&^selfRef] }

// key returns item i's path: an entry's, or a child's first (a substring
// of the encoding).
func (n *node) key(i int) string {
	s := n.item(i)
	l, w := uvarintStr(s)
	return s[w : w+int(l)]
}

// child decodes child i, its ref resolved.
func (n *node) child(i int) child {
	r := reader{s: n.item(i)}
	var c child
	c.first = r.str()
	c.ref = r.ref(n.pack)
	c.files = int64(r.uvarint())
	c.bytes = int64(r.uvarint())
	return c
}

// ref returns child i's ref, resolved.
func (n *node) ref(i int) Ref {
	s := n.item(i)
	l, w := uvarintStr(s)
	r := reader{s: s[w+int(l):]}
	return r.ref(n.pack)
}

// entry decodes entry i, its refs resolved, its chunk list into chunks'
// storage (a new slice when chunks is nil).
func (n *node) entry(i int, chunks []Chunk) Entry {
	r := reader{s: n.item(i)}
	return decodeEntry(&r, n.pack, chunks)
}

// itemTotals returns the files and JSON bytes item i counts for.
func (n *node) itemTotals(i int) (files, bytes int64) {
	r := reader{s: n.item(i)}
	if n.leaf {
		b, _ := skipEntry(&r)
		return 1, b
	}
	r.str()
	r.uvarint()
	r.uvarint()
	return int64(r.uvarint()), int64(r.uvarint())
}

func appendChild(b []byte, c *child) []byte {
	b = appendStr(b, c.first)
	b = appendRef(b, c.ref)
	b = binary.AppendUvarint(b, uint64(c.files))
	return binary.AppendUvarint(b, uint64(c.bytes))
}

// parseNode indexes a node's encoding, checking it.
func parseNode(kind byte, data string, pack int64) (*node, error) {
	if kind != kindLeaf && kind != kindInternal {
		return nil, fmt.Errorf("%w: object of kind %d is not a tree node", errCorrupt, kind)
	}
	r := reader{s: data}
	count := r.uvarint()
	if r.err != nil || count == 0 || count > uint64(len(data)) || uint64(len(data)) >= selfRef {
		return nil, fmt.Errorf("%w: tree node in pack %d", errCorrupt, pack)
	}
	n := &node{leaf: kind == kindLeaf, data: data, pack: pack, offs: make([]uint32, count+1)}
	for i := range int(count) {
		n.offs[i] = uint32(len(data) - len(r.s))
		var self bool
		if n.leaf {
			var b int64
			b, self = skipEntry(&r)
			n.files, n.bytes = n.files+1, n.bytes+b
		} else {
			r.str()
			self = r.uvarint() == 0
			r.uvarint()
			n.files += int64(r.uvarint())
			n.bytes += int64(r.uvarint())
		}
		if self {
			n.offs[i] |= selfRef
		}
		if r.err != nil {
			return nil, fmt.Errorf("%w: tree node in pack %d", errCorrupt, pack)
		}
	}
	if len(r.s) != 0 {
		return nil, fmt.Errorf("%w: tree node in pack %d", errCorrupt, pack)
	}
	n.offs[count] = uint32(len(data))
	return n, nil
}

// cost is what a node costs the cache.
func (n *node) cost() int64 { return int64(len(n.data)+4*len(n.offs)) + 128 }

// entrySize estimates an entry's encoded size, for splitting leaves.
func entrySize(e *Entry) int {
	n := len(e.Path) + 20
	if e.List.IsZero() {
		n += 8 * len(e.Chunks)
	} else {
		n += 8
	}
	return n
}
