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

// node is a decoded tree node. A leaf holds entries sorted by path; an
// internal node holds children sorted by their first path, each with the
// totals of its subtree so bounds are checked at the root in O(1).
type node struct {
	leaf     bool
	entries  []Entry
	children []child
	// encSize is the node's encoded size, for splitting.
	encSize int
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
	for _, c := range n.children {
		files += c.files
		bytes += c.bytes
	}
	return files, bytes
}

func (n *node) firstKey() string {
	if n.leaf {
		return n.entries[0].Path
	}
	return n.children[0].first
}

func encodeLeaf(b []byte, entries []Entry) []byte {
	b = binary.AppendUvarint(b, uint64(len(entries)))
	for i := range entries {
		b = appendEntry(b, &entries[i])
	}
	return b
}

func encodeInternal(b []byte, children []child) []byte {
	b = binary.AppendUvarint(b, uint64(len(children)))
	for _, c := range children {
		b = appendStr(b, c.first)
		b = appendRef(b, c.ref)
		b = binary.AppendUvarint(b, uint64(c.files))
		b = binary.AppendUvarint(b, uint64(c.bytes))
	}
	return b
}

func decodeNode(kind byte, data string, pack int64) (*node, error) {
	r := reader{s: data}
	n := &node{encSize: len(data)}
	count := r.uvarint()
	if r.err == nil && count > uint64(len(data)) {
		r.err = errCorrupt
	}
	switch kind {
	case kindLeaf:
		n.leaf = true
		n.entries = make([]Entry, 0, count)
		for i := uint64(0); i < count && r.err == nil; i++ {
			n.entries = append(n.entries, decodeEntry(&r, pack))
		}
	case kindInternal:
		n.children = make([]child, 0, count)
		for i := uint64(0); i < count && r.err == nil; i++ {
			var c child
			c.first = r.str()
			c.ref = r.ref(pack)
			c.files = int64(r.uvarint())
			c.bytes = int64(r.uvarint())
			n.children = append(n.children, c)
		}
	default:
		return nil, fmt.Errorf("%w: object of kind %d is not a tree node", errCorrupt, kind)
	}
	if r.err != nil {
		return nil, fmt.Errorf("%w: tree node in pack %d", errCorrupt, pack)
	}
	return n, nil
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

func childSize(c *child) int { return len(c.first) + 24 }
