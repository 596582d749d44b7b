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

func decodeChunks(r *reader, pack int64) []Chunk {
	n := r.uvarint()
	if r.err != nil || n > uint64(len(r.s)) {
		r.err = errCorrupt
		return nil
	}
	cs := make([]Chunk, n)
	for i := range cs {
		cs[i].Ref = r.ref(pack)
		cs[i].Len = int64(r.uvarint())
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

func decodeEntry(r *reader, pack int64) Entry {
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
		e.Chunks = decodeChunks(r, pack)
	}
	return e
}

// node is a decoded tree node. A leaf holds entries sorted by path. An
// internal node holds children sorted by their first path, each with the
// totals of its subtree so bounds are checked at the root in O(1); it is
// kept as its encoding plus where each child starts, so that a commit
// rewriting it copies the unchanged children's bytes in runs (one memmove
// for ~70 children) instead of decoding and re-encoding each, and the
// collector has nothing to scan in it
// (docs/decisions/0013-internal-nodes-encoded.md).
type node struct {
	leaf    bool
	entries []Entry
	// encSize is the node's encoded size.
	encSize int

	// An internal node's encoding: uvarint count, then per child its first
	// path (str), ref, files and bytes (uvarints).
	data string
	// offs[i] is where child i starts in data, with selfRef set when the
	// child's ref is written with Pack 0: an object of the node's own pack,
	// which a copy into another pack must write with the pack's ID.
	// offs[count] == len(data).
	offs []uint32
	// pack is the pack data lives in (pendingPack while being built).
	pack int64
	// files and bytes are an internal node's subtree totals.
	files, bytes int64
}

type child struct {
	first string // the smallest path in the subtree
	ref   Ref
	files int64
	bytes int64
}

func (n *node) totals() (files, bytes int64) {
	if n.leaf {
		for i := range n.entries {
			bytes += n.entries[i].JSONBytes
		}
		return int64(len(n.entries)), bytes
	}
	return n.files, n.bytes
}

// selfRef marks an offset whose child refers to its node's own pack.
const selfRef = 1 << 31

// count returns an internal node's number of children.
func (n *node) count() int { return len(n.offs) - 1 }

// first returns child i's first path (a substring of the encoding).
func (n *node) first(i int) string {
	s := n.data[n.offs[i]&^selfRef : n.offs[i+1]&^selfRef]
	l, w := uvarintStr(s)
	return s[w : w+int(l)]
}

// child decodes child i, its ref resolved.
func (n *node) child(i int) child {
	r := reader{s: n.data[n.offs[i]&^selfRef : n.offs[i+1]&^selfRef]}
	var c child
	c.first = r.str()
	c.ref = r.ref(n.pack)
	c.files = int64(r.uvarint())
	c.bytes = int64(r.uvarint())
	return c
}

// ref returns child i's ref, resolved.
func (n *node) ref(i int) Ref {
	s := n.data[n.offs[i]&^selfRef : n.offs[i+1]&^selfRef]
	l, w := uvarintStr(s)
	r := reader{s: s[w+int(l):]}
	return r.ref(n.pack)
}

func encodeLeaf(b []byte, entries []Entry) []byte {
	b = binary.AppendUvarint(b, uint64(len(entries)))
	for i := range entries {
		b = appendEntry(b, &entries[i])
	}
	return b
}

func appendChild(b []byte, c *child) []byte {
	b = appendStr(b, c.first)
	b = appendRef(b, c.ref)
	b = binary.AppendUvarint(b, uint64(c.files))
	return binary.AppendUvarint(b, uint64(c.bytes))
}

// parseInternal indexes an internal node's encoding, checking it.
func parseInternal(data string, pack int64) (*node, error) {
	if uint64(len(data)) >= selfRef {
		return nil, errCorrupt
	}
	r := reader{s: data}
	count := r.uvarint()
	if r.err != nil || count > uint64(len(data)) {
		return nil, errCorrupt
	}
	n := &node{data: data, pack: pack, encSize: len(data), offs: make([]uint32, count+1)}
	for i := range int(count) {
		n.offs[i] = uint32(len(data) - len(r.s))
		r.str()
		if p := r.uvarint(); p == 0 && r.err == nil {
			n.offs[i] |= selfRef
		}
		r.uvarint()
		n.files += int64(r.uvarint())
		n.bytes += int64(r.uvarint())
		if r.err != nil {
			return nil, errCorrupt
		}
	}
	if len(r.s) != 0 || count == 0 {
		return nil, errCorrupt
	}
	n.offs[count] = uint32(len(data))
	return n, nil
}

func decodeNode(kind byte, data string, pack int64) (*node, error) {
	switch kind {
	case kindLeaf:
		r := reader{s: data}
		count := r.uvarint()
		if r.err == nil && count > uint64(len(data)) {
			r.err = errCorrupt
		}
		n := &node{leaf: true, encSize: len(data)}
		n.entries = make([]Entry, 0, count)
		for i := uint64(0); i < count && r.err == nil; i++ {
			n.entries = append(n.entries, decodeEntry(&r, pack))
		}
		if r.err != nil {
			return nil, fmt.Errorf("%w: tree node in pack %d", errCorrupt, pack)
		}
		return n, nil
	case kindInternal:
		n, err := parseInternal(data, pack)
		if err != nil {
			return nil, fmt.Errorf("%w: tree node in pack %d", errCorrupt, pack)
		}
		return n, nil
	default:
		return nil, fmt.Errorf("%w: object of kind %d is not a tree node", errCorrupt, kind)
	}
}

// cost is what a decoded node costs the cache.
func (n *node) cost() int64 {
	if n.leaf {
		return int64(n.encSize)*2 + 64
	}
	return int64(len(n.data)+4*len(n.offs)) + 128
}

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
