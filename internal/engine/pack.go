package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"
)

// A pack holds the objects one commit created: file chunks, tree nodes and
// chunk lists. It is stored as one row with its commit, so a commit touches
// few database pages (DESIGN §1.1.1). Objects are addressed by Ref: the pack
// (the commit's ID) and the object's index in it. Inside a pack, a reference
// to an object of the same pack is written with Pack 0, since the pack's ID
// is only known once the backend stored it.
//
// Layout: 'P' 1 | uvarint n | n × (kind byte, uvarint len) | object bytes.

// Object kinds.
const (
	kindTombstone byte = 0 // an object the garbage collector blanked
	kindChunk     byte = 1 // raw file bytes
	kindLeaf      byte = 2 // tree leaf: sorted file entries
	kindInternal  byte = 3 // tree internal node: sorted children
	kindChunkList byte = 4 // the chunk list of a large file
)

// Ref locates an object: the pack (commit ID) and the index in it. The zero
// Ref means "none" (an empty tree). Objects not yet stored (being built for a
// commit) have Pack pendingPack; they are written as Pack 0, "this pack".
type Ref struct {
	Pack int64
	Idx  uint32
}

// IsZero reports whether r is the zero Ref.
func (r Ref) IsZero() bool { return r.Pack == 0 && r.Idx == 0 }

func (r Ref) String() string { return fmt.Sprintf("%d.%d", r.Pack, r.Idx) }

// resolve turns a pack-relative reference into an absolute one.
func (r Ref) resolve(pack int64) Ref {
	if r.Pack == 0 {
		r.Pack = pack
	}
	return r
}

const pendingPack = -1

var errCorrupt = errors.New("engine: corrupt object")

// packBuilder collects the new objects of one commit.
type packBuilder struct {
	kinds []byte
	objs  []string
	size  int
}

// add appends an object and returns its pending Ref.
func (b *packBuilder) add(kind byte, data []byte) Ref {
	return b.addString(kind, unsafe.String(unsafe.SliceData(data), len(data)))
}

// addString is add for data already held as a string (file content): no copy.
func (b *packBuilder) addString(kind byte, data string) Ref {
	if b.objs == nil {
		// A write makes about four objects: its chunk, a leaf, an internal
		// node and the root.
		b.kinds, b.objs = make([]byte, 0, 8), make([]string, 0, 8)
	}
	b.kinds = append(b.kinds, kind)
	b.objs = append(b.objs, data)
	b.size += len(data)
	return Ref{Pack: pendingPack, Idx: uint32(len(b.objs) - 1)}
}

func (b *packBuilder) empty() bool { return len(b.objs) == 0 }

// header encodes the pack's header: everything before the objects.
func (b *packBuilder) header() []byte {
	out := make([]byte, 0, 2+binary.MaxVarintLen64+len(b.objs)*(1+binary.MaxVarintLen32))
	out = append(out, 'P', 1)
	out = binary.AppendUvarint(out, uint64(len(b.objs)))
	for i, o := range b.objs {
		out = append(out, b.kinds[i])
		out = binary.AppendUvarint(out, uint64(len(o)))
	}
	return out
}

// bytes encodes the pack.
func (b *packBuilder) bytes() []byte {
	if len(b.objs) == 0 {
		return nil
	}
	h := b.header()
	out := make([]byte, 0, len(h)+b.size)
	out = append(out, h...)
	for _, o := range b.objs {
		out = append(out, o...)
	}
	return out
}

// parts returns the pack as strings whose concatenation is bytes(): the
// header, then each object as it was added (uncopied).
func (b *packBuilder) parts() []string {
	if len(b.objs) == 0 {
		return nil
	}
	h := b.header()
	out := make([]string, 0, 1+len(b.objs))
	out = append(out, unsafe.String(unsafe.SliceData(h), len(h)))
	return append(out, b.objs...)
}

// view returns the built pack as stored under id, sharing its objects.
func (b *packBuilder) view(id int64) *packView {
	return &packView{id: id, kinds: b.kinds, objs: b.objs}
}

// packView is a pack's objects, split out of its bytes (or as built).
type packView struct {
	id    int64
	kinds []byte
	objs  []string
}

func parsePack(id int64, data string) (*packView, error) {
	if data == "" {
		return &packView{id: id}, nil
	}
	kinds, lens, p, err := parseHeader(id, data)
	if err != nil {
		return nil, err
	}
	v := &packView{id: id, kinds: kinds, objs: make([]string, len(kinds))}
	for i, l := range lens {
		if l > uint64(len(data)-p) {
			return nil, fmt.Errorf("%w: pack %d truncated", errCorrupt, id)
		}
		v.objs[i] = data[p : p+int(l)]
		p += int(l)
	}
	return v, nil
}

// parsePackParts is parsePack for a pack kept as parts: the header, then
// each object (PartsAppender), which the view shares.
func parsePackParts(id int64, parts []string) (*packView, error) {
	kinds, lens, p, err := parseHeader(id, parts[0])
	if err != nil {
		return nil, err
	}
	objs := parts[1:]
	if p != len(parts[0]) || len(kinds) != len(objs) {
		return nil, fmt.Errorf("%w: pack %d has %d objects in %d parts", errCorrupt, id, len(kinds), len(objs))
	}
	for i, l := range lens {
		if l != uint64(len(objs[i])) {
			return nil, fmt.Errorf("%w: pack %d object %d", errCorrupt, id, i)
		}
	}
	return &packView{id: id, kinds: kinds, objs: objs}, nil
}

// parseHeader parses a pack's header: each object's kind and length, and
// where the objects start.
func parseHeader(id int64, data string) (kinds []byte, lens []uint64, p int, err error) {
	if len(data) < 2 || data[0] != 'P' || data[1] != 1 {
		return nil, nil, 0, fmt.Errorf("%w: pack %d has no header", errCorrupt, id)
	}
	p = 2
	n, w := uvarintStr(data[p:])
	if w <= 0 || n > uint64(len(data)) {
		return nil, nil, 0, fmt.Errorf("%w: pack %d count", errCorrupt, id)
	}
	p += w
	kinds, lens = make([]byte, n), make([]uint64, n)
	for i := range kinds {
		if p >= len(data) {
			return nil, nil, 0, fmt.Errorf("%w: pack %d header", errCorrupt, id)
		}
		kinds[i] = data[p]
		p++
		l, w := uvarintStr(data[p:])
		if w <= 0 {
			return nil, nil, 0, fmt.Errorf("%w: pack %d length", errCorrupt, id)
		}
		p += w
		lens[i] = l
	}
	return kinds, lens, p, nil
}

func (v *packView) object(idx uint32) (byte, string, error) {
	if int(idx) >= len(v.kinds) {
		return 0, "", fmt.Errorf("%w: pack %d has no object %d", errCorrupt, v.id, idx)
	}
	return v.kinds[idx], v.objs[idx], nil
}

// size is what the view costs the cache.
func (v *packView) size() int64 {
	n := int64(64 + 17*len(v.objs))
	for _, o := range v.objs {
		n += int64(len(o))
	}
	return n
}

// rewrite returns the pack with every object not in live blanked.
func (v *packView) rewrite(live map[uint32]bool) []byte {
	var b packBuilder
	for i := range v.kinds {
		k, data, _ := v.object(uint32(i))
		if live[uint32(i)] {
			b.addString(k, data)
		} else {
			b.add(kindTombstone, nil)
		}
	}
	return b.bytes()
}

func uvarintStr(s string) (uint64, int) {
	var x uint64
	var sh uint
	for i := 0; i < len(s) && i < binary.MaxVarintLen64; i++ {
		c := s[i]
		if c < 0x80 {
			return x | uint64(c)<<sh, i + 1
		}
		x |= uint64(c&0x7f) << sh
		sh += 7
	}
	return 0, -1
}

func varintStr(s string) (int64, int) {
	ux, n := uvarintStr(s)
	x := int64(ux >> 1)
	if ux&1 != 0 {
		x = ^x
	}
	return x, n
}

// reader decodes fields from an object's bytes, remembering the first error.
type reader struct {
	s   string
	err error
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := uvarintStr(r.s)
	if n <= 0 {
		r.err = errCorrupt
		return 0
	}
	r.s = r.s[n:]
	return v
}

func (r *reader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := varintStr(r.s)
	if n <= 0 {
		r.err = errCorrupt
		return 0
	}
	r.s = r.s[n:]
	return v
}

func (r *reader) str() string {
	n := r.uvarint()
	if r.err != nil {
		return ""
	}
	if n > uint64(len(r.s)) {
		r.err = errCorrupt
		return ""
	}
	s := r.s[:n]
	r.s = r.s[n:]
	return s
}

func (r *reader) fixed(n int) string {
	if r.err != nil {
		return ""
	}
	if n > len(r.s) {
		r.err = errCorrupt
		return ""
	}
	s := r.s[:n]
	r.s = r.s[n:]
	return s
}

func (r *reader) byte1() byte {
	if r.err != nil {
		return 0
	}
	if len(r.s) == 0 {
		r.err = errCorrupt
		return 0
	}
	c := r.s[0]
	r.s = r.s[1:]
	return c
}

func (r *reader) ref(pack int64) Ref {
	p := r.uvarint()
	i := r.uvarint()
	return Ref{Pack: int64(p), Idx: uint32(i)}.resolve(pack)
}

func appendRef(b []byte, r Ref) []byte {
	if r.Pack < 0 {
		r.Pack = 0 // pending: this pack
	}
	b = binary.AppendUvarint(b, uint64(r.Pack))
	return binary.AppendUvarint(b, uint64(r.Idx))
}

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// encodeRoot encodes a root reference for a commit (empty for an empty tree).
func encodeRoot(r Ref) []byte {
	if r.IsZero() {
		return nil
	}
	return appendRef(nil, r)
}

// decodeRoot decodes a commit's root, resolving it against the commit ID.
func decodeRoot(b []byte, commitID int64) (Ref, error) {
	if len(b) == 0 {
		return Ref{}, nil
	}
	r := reader{s: string(b)}
	ref := r.ref(commitID)
	if r.err != nil {
		return Ref{}, fmt.Errorf("%w: root", errCorrupt)
	}
	return ref, nil
}
