package memory

import (
	"cmp"
	"context"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/satchel-dev/satchel/backend"
)

// Documents are kept per (store, scope) partition: a map by key, the keys
// in order (for list and key-ordered pages, which then seek instead of
// scanning), and for each indexed field a map from value to keys (for
// queries with = or IN on it). Queries evaluate DocQuery.Match and Compare
// over the candidates: the semantics stay those of internal/collection.
type docStore struct {
	mu      sync.RWMutex
	parts   map[partKey]*docPart
	indexes map[string][]string // store → indexed field paths
}

type partKey struct{ store, scope string }

type docPart struct {
	docs map[string]*memDoc
	keys keyList
	idx  []*fieldIndex // one per indexed field
}

type memDoc struct {
	cur  backend.Doc // cur.Map is the document
	doc  map[string]any
	hist []backend.Doc // newest first
}

// KeepsDocMaps says that the memory backend keeps documents as maps.
func (b *Backend) KeepsDocMaps() {}

func (d *memDoc) expired(now time.Time) bool {
	return !d.cur.Expires.IsZero() && !d.cur.Expires.After(now)
}

// docsNow returns the clock, or errClosed.
func (b *Backend) docsNow() (time.Time, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		return time.Time{}, errClosed
	}
	return b.now(), nil
}

func (s *docStore) part(store, scope string, create bool) *docPart {
	p := s.parts[partKey{store, scope}]
	if p == nil && create {
		if s.parts == nil {
			s.parts = map[partKey]*docPart{}
		}
		p = &docPart{docs: map[string]*memDoc{}}
		for _, f := range s.indexes[store] {
			p.addIndex(f)
		}
		s.parts[partKey{store, scope}] = p
	}
	return p
}

// current is d's current version as a read returns it (nil d: none).
func current(key string, d *memDoc, now time.Time) backend.Doc {
	if d == nil {
		return backend.Doc{Key: key}
	}
	c := d.cur
	c.Expired = d.expired(now)
	return c
}

func (b *Backend) ReplaceDoc(ctx context.Context, r backend.DocReplace) (backend.Doc, error) {
	defer b.changed.Notify("")
	now, err := b.docsNow()
	if err != nil {
		return backend.Doc{}, err
	}
	s := &b.docs
	s.mu.Lock()
	defer s.mu.Unlock()
	return b.replaceDoc(s, r, now)
}

// ReplaceDocs applies each replacement as ReplaceDoc does, in order, all
// under one hold of the lock: readers see all of them or none
// (backend.DocBatcher).
func (b *Backend) ReplaceDocs(ctx context.Context, rs []backend.DocReplace) ([]backend.DocResult, error) {
	defer b.changed.Notify("")
	now, err := b.docsNow()
	if err != nil {
		return nil, err
	}
	s := &b.docs
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]backend.DocResult, len(rs))
	for i, r := range rs {
		out[i].Doc, out[i].Err = b.replaceDoc(s, r, now)
	}
	return out, nil
}

// replaceDoc is one replacement, the per-document step of ReplaceDoc and
// ReplaceDocs, under s.mu (s is b.docs; b counts a new document against
// its scope's quota).
func (b *Backend) replaceDoc(s *docStore, r backend.DocReplace, now time.Time) (backend.Doc, error) {
	p := s.part(r.Store, r.Scope, true)
	old := p.docs[r.Key]
	if old == nil && r.Expect != 0 || old != nil && (old.cur.Version != r.Expect || r.Live && old.expired(now)) {
		return current(r.Key, old, now), backend.ErrDocChanged
	}
	if old == nil {
		if err := b.docsAdd(r.Scope, 1); err != nil {
			return backend.Doc{}, err
		}
	}
	if ch := r.Change; ch != nil && !b.logDoc(ch, r.DocID, r.Version, now) {
		if old == nil {
			_ = b.docsAdd(r.Scope, -1) // nothing is written: take the count back
		}
		return backend.Doc{Key: r.Key}, backend.ErrKeyUsed
	}
	cur := backend.Doc{Key: r.Key, Version: r.Version, Updated: now, Map: r.Doc, JSON: r.JSON}
	if r.TTL > 0 {
		cur.Expires = now.Add(r.TTL)
	}
	var hist []backend.Doc // newest first
	if old != nil && r.Keep > 0 {
		keep := func(h backend.Doc) bool { return h.Version < r.Version && h.Version >= r.Version-int64(r.Keep) }
		hist = make([]backend.Doc, 0, min(r.Keep, len(old.hist)+1))
		if prev := old.cur; r.Archive && keep(prev) {
			prev.Expires, prev.Expired = time.Time{}, false
			hist = append(hist, prev)
		}
		for _, h := range old.hist {
			if keep(h) && len(hist) < r.Keep {
				hist = append(hist, h)
			}
		}
	}
	d := old
	if d != nil {
		// The same *memDoc stays in the key lists: readers copy what
		// they return, under the read lock, and maps are never changed.
		p.unindex(r.Key, d)
	} else {
		d = &memDoc{}
		p.docs[r.Key] = d
		p.keys.insert(r.Key, d)
	}
	d.cur, d.doc, d.hist = cur, r.Doc, hist
	p.indexDoc(r.Key, d)
	return cur, nil
}

func (b *Backend) GetDoc(ctx context.Context, id backend.DocID, history bool) (backend.Doc, []backend.Doc, bool, error) {
	now, err := b.docsNow()
	if err != nil {
		return backend.Doc{}, nil, false, err
	}
	s := &b.docs
	s.mu.RLock()
	defer s.mu.RUnlock()
	p := s.part(id.Store, id.Scope, false)
	if p == nil {
		return backend.Doc{}, nil, false, nil
	}
	d := p.docs[id.Key]
	if d == nil {
		return backend.Doc{}, nil, false, nil
	}
	var h []backend.Doc
	if history {
		h = slices.Clone(d.hist)
	}
	return current(id.Key, d, now), h, true, nil
}

func (b *Backend) DeleteDoc(ctx context.Context, id backend.DocID) (backend.Doc, bool, error) {
	defer b.changed.Notify("")
	return b.deleteDoc(id, nil)
}

// logDoc claims ch's key and logs ch, or reports that its key is live.
func (b *Backend) logDoc(ch *backend.DocChange, id backend.DocID, version int64, now time.Time) bool {
	b.keysMu.Lock()
	defer b.keysMu.Unlock()
	if k := ch.Key; k != nil {
		if _, ok := b.keys.live(k.Scope, k.Thread, k.Key, now); ok {
			return false
		}
		b.keys.claim(k, 0, version, now)
	}
	if version >= 0 {
		b.keys.log(ch, id, version, now)
	}
	return true
}

func (b *Backend) deleteDoc(id backend.DocID, ch *backend.DocChange) (backend.Doc, bool, error) {
	now, err := b.docsNow()
	if err != nil {
		return backend.Doc{}, false, err
	}
	s := &b.docs
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.part(id.Store, id.Scope, false)
	var d *memDoc
	if p != nil {
		d = p.docs[id.Key]
	}
	if ch != nil {
		version := int64(-1) // nothing deleted: claim the key, log nothing
		if d != nil {
			version = d.cur.Version
		}
		if !b.logDoc(ch, id, version, now) {
			return backend.Doc{Key: id.Key}, false, backend.ErrKeyUsed
		}
	}
	if d == nil {
		return backend.Doc{}, false, nil
	}
	p.remove(id.Key, d)
	_ = b.docsAdd(id.Scope, -1)
	return current(id.Key, d, now), true, nil
}

func (p *docPart) remove(key string, d *memDoc) {
	p.unindex(key, d)
	delete(p.docs, key)
	p.keys.remove(key)
}

func (b *Backend) SweepExpired(ctx context.Context) (int64, error) {
	now, err := b.docsNow()
	if err != nil {
		return 0, err
	}
	s := &b.docs
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	for pk, p := range s.parts {
		for k, d := range p.docs {
			if d.expired(now) {
				p.remove(k, d)
				n++
				_ = b.docsAdd(pk.scope, -1)
			}
		}
	}
	return n, nil
}

func (b *Backend) EnsureIndexes(ctx context.Context, store string, indexes []backend.DocIndex) error {
	if _, err := b.docsNow(); err != nil {
		return err
	}
	s := &b.docs
	s.mu.Lock()
	defer s.mu.Unlock()
	var fields []string
	for _, ix := range indexes {
		if !slices.Contains(fields, ix.Field) {
			fields = append(fields, ix.Field)
		}
	}
	if s.indexes == nil {
		s.indexes = map[string][]string{}
	}
	s.indexes[store] = fields
	for k, p := range s.parts {
		if k.store != store {
			continue
		}
		p.idx = slices.DeleteFunc(p.idx, func(x *fieldIndex) bool { return !slices.Contains(fields, x.field) })
		for _, f := range fields {
			if p.index(f) == nil {
				p.addIndex(f)
			}
		}
	}
	return nil
}

// fieldIndex is the index of one field: for each value, the keys of the
// documents that hold it. Strings and numbers have maps of their own,
// which hash faster than a map of interfaces and box nothing.
type fieldIndex struct {
	field string
	path  []string // field, split at its dots
	strs  map[string]*keyList
	nums  map[float64]*keyList
	other [ixKinds]*keyList // null (and absent), true, false, composite
}

// ixKind is the kind of a value in an index.
type ixKind uint8

const (
	ixNull ixKind = iota // null, or absent (also under a null or absent object)
	ixTrue
	ixFalse
	ixComposite // an array or an object: no equality hint names one
	ixString
	ixNumber
	ixKinds = ixString // the kinds held in fieldIndex.other
)

// ixValue is a value as an index holds it, in the form DocEq uses.
type ixValue struct {
	kind ixKind
	s    string
	f    float64
}

// index returns the index of field, or nil.
func (p *docPart) index(field string) *fieldIndex {
	for _, x := range p.idx {
		if x.field == field {
			return x
		}
	}
	return nil
}

// addIndex builds the index of field over the partition's documents.
func (p *docPart) addIndex(field string) {
	x := &fieldIndex{field: field, path: strings.Split(field, "."), strs: map[string]*keyList{}, nums: map[float64]*keyList{}}
	p.idx = append(p.idx, x)
	for k, d := range p.docs {
		x.add(indexValue(d.doc, x.path), k, d)
	}
}

// list returns the keys of v, creating the list with create.
func (x *fieldIndex) list(v ixValue, create bool) *keyList {
	var l *keyList
	switch v.kind {
	case ixString:
		if l = x.strs[v.s]; l == nil && create {
			l = &keyList{}
			x.strs[v.s] = l
		}
	case ixNumber:
		if l = x.nums[v.f]; l == nil && create {
			l = &keyList{}
			x.nums[v.f] = l
		}
	default:
		if l = x.other[v.kind]; l == nil && create {
			l = &keyList{}
			x.other[v.kind] = l
		}
	}
	return l
}

func (x *fieldIndex) add(v ixValue, key string, d *memDoc) {
	x.list(v, true).insert(key, d)
}

func (x *fieldIndex) remove(v ixValue, key string) {
	l := x.list(v, false)
	if l == nil {
		return
	}
	l.remove(key)
	if l.n > 0 {
		return
	}
	switch v.kind {
	case ixString:
		delete(x.strs, v.s)
	case ixNumber:
		delete(x.nums, v.f)
	default:
		x.other[v.kind] = nil
	}
}

func (p *docPart) indexDoc(key string, d *memDoc) {
	for _, x := range p.idx {
		x.add(indexValue(d.doc, x.path), key, d)
	}
}

func (p *docPart) unindex(key string, d *memDoc) {
	for _, x := range p.idx {
		x.remove(indexValue(d.doc, x.path), key)
	}
}

// indexValue is the value at a path: a string, a number (as a float64), a
// boolean, null for null and absent (also under a null or absent object),
// or composite.
func indexValue(doc map[string]any, path []string) ixValue {
	var v any = doc
	for _, seg := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return ixValue{kind: ixNull}
		}
		v = m[seg]
	}
	switch x := v.(type) {
	case nil:
		return ixValue{kind: ixNull}
	case string:
		return ixValue{kind: ixString, s: x}
	case bool:
		if x {
			return ixValue{kind: ixTrue}
		}
		return ixValue{kind: ixFalse}
	case float64:
		return number(x + 0) // -0 and 0 are one key
	case json.Number:
		if f, err := strconv.ParseFloat(string(x), 64); err == nil && !math.IsInf(f, 0) {
			return number(f + 0)
		}
	case int:
		return number(float64(x))
	case int64:
		return number(float64(x))
	case int32:
		return number(float64(x))
	case float32:
		return number(float64(x))
	case uint, uint64, uint32, int16, int8, uint16, uint8:
		if f, err := strconv.ParseFloat(numberString(x), 64); err == nil {
			return number(f)
		}
	}
	return ixValue{kind: ixComposite}
}

func number(f float64) ixValue { return ixValue{kind: ixNumber, f: f} }

// hintValue is an equality hint's value (a DocEq value: a string, a
// float64, a bool or nil) as an index holds it; ok is false for any other
// value, which names no document.
func hintValue(v any) (ixValue, bool) {
	switch x := v.(type) {
	case nil:
		return ixValue{kind: ixNull}, true
	case string:
		return ixValue{kind: ixString, s: x}, true
	case float64:
		return number(x + 0), true
	case bool:
		if x {
			return ixValue{kind: ixTrue}, true
		}
		return ixValue{kind: ixFalse}, true
	}
	return ixValue{}, false
}

func numberString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func (b *Backend) QueryDocs(ctx context.Context, q backend.DocQuery) ([]backend.Doc, error) {
	now, err := b.docsNow()
	if err != nil {
		return nil, err
	}
	if q.Limit <= 0 {
		return nil, nil
	}
	s := &b.docs
	s.mu.RLock()
	defer s.mu.RUnlock()
	p := s.part(q.Store, q.Scope, false)
	if p == nil {
		return nil, nil
	}
	visible := func(d *memDoc) bool { return q.IncludeExpired || !d.expired(now) }

	// Candidates from an index: the lists of keys of the equality hint
	// that names the fewest documents.
	var lists []*keyList
	best := -1
	for _, eq := range q.Eq {
		x := p.index(eq.Field)
		if x == nil {
			continue
		}
		n := 0
		var ls []*keyList
		for _, v := range eq.Values {
			hv, ok := hintValue(v)
			if !ok {
				continue
			}
			if l := x.list(hv, false); l != nil && !slices.Contains(ls, l) {
				ls = append(ls, l)
				n += l.n
			}
		}
		if best < 0 || n < best {
			best, lists = n, ls
		}
	}

	if best >= 0 && q.KeyOrder != 0 {
		// The order is the key order: the page is among the first Limit
		// matches of each list.
		var out []backend.Doc
		for _, l := range lists {
			found := 0
			l.scan(q.After, q.KeyOrder < 0, func(k string, d *memDoc) bool {
				if visible(d) && q.Match(k, d.doc) {
					out = append(out, d.cur)
					found++
				}
				return found < q.Limit
			})
		}
		slices.SortFunc(out, func(a, b backend.Doc) int { return strings.Compare(a.Key, b.Key) * q.KeyOrder })
		return out[:min(len(out), q.Limit)], nil
	}
	top := topK{limit: q.Limit, cmp: q.Compare}
	switch {
	case best >= 0:
		for _, l := range lists {
			l.scan("", false, func(k string, d *memDoc) bool {
				if visible(d) && q.Match(k, d.doc) {
					top.add(k, d)
				}
				return true
			})
		}
	case q.KeyOrder != 0:
		// The order is the key order: the first Limit matches from the
		// cursor on are the page.
		var out []backend.Doc
		p.keys.scan(q.After, q.KeyOrder < 0, func(k string, d *memDoc) bool {
			if visible(d) && q.Match(k, d.doc) {
				out = append(out, d.cur)
			}
			return len(out) < q.Limit
		})
		return out, nil
	default:
		for k, d := range p.docs {
			if visible(d) && q.Match(k, d.doc) {
				top.add(k, d)
			}
		}
	}
	out := make([]backend.Doc, len(top.items))
	for i, it := range top.items {
		out[i] = it.d.cur
	}
	return out, nil
}

// topK keeps the first limit documents in cmp's order.
type topK struct {
	limit int
	cmp   func(string, map[string]any, string, map[string]any) int
	items []topItem
}

type topItem struct {
	k string
	d *memDoc
}

func (t *topK) add(k string, d *memDoc) {
	n := len(t.items)
	if n == t.limit && t.cmp(k, d.doc, t.items[n-1].k, t.items[n-1].d.doc) >= 0 {
		return
	}
	i, _ := slices.BinarySearchFunc(t.items, k, func(it topItem, _ string) int {
		return t.cmp(it.k, it.d.doc, k, d.doc)
	})
	if n == t.limit {
		t.items = t.items[:n-1]
	}
	t.items = slices.Insert(t.items, i, topItem{k, d})
}

// keyList is a sorted set of keys, each with its document, in chunks of
// at most 2×keyChunk, so that an insert moves at most one chunk and a seek
// is two binary searches. Scans read the documents from it, without a
// lookup in the map by key. A list of one key (an index's value that one
// document holds, such as a number) holds it in one, with no chunk: the
// list is then a single allocation.
type keyList struct {
	chunks [][]keyDoc // none while n <= 1
	one    [1]keyDoc  // the key while there are no chunks and n is 1
	n      int
}

// view returns the chunks, or when the key is in one, a chunk of it in
// buf.
func (l *keyList) view(buf *[1][]keyDoc) [][]keyDoc {
	if len(l.chunks) == 0 && l.n == 1 {
		buf[0] = l.one[:]
		return buf[:]
	}
	return l.chunks
}

// keyDoc is a key with its document. pre holds the key's first bytes, so
// that most comparisons of a search read no key text (a string elsewhere
// in memory, which costs a cache miss), and none when both keys are at
// most 16 bytes long.
type keyDoc struct {
	pre prefix
	k   string
	d   *memDoc
}

const keyChunk = 128

// prefix is the first 16 bytes of a key, big-endian, zero-padded: when two
// prefixes differ, they compare as the keys do.
type prefix struct{ hi, lo uint64 }

func keyPrefix(k string) prefix {
	return prefix{be64(k), be64(k[min(len(k), 8):])}
}

// be64 is the first 8 bytes of s, big-endian, zero-padded.
func be64(s string) uint64 {
	if len(s) >= 8 {
		return uint64(s[0])<<56 | uint64(s[1])<<48 | uint64(s[2])<<40 | uint64(s[3])<<32 |
			uint64(s[4])<<24 | uint64(s[5])<<16 | uint64(s[6])<<8 | uint64(s[7])
	}
	var p uint64
	for i := range len(s) {
		p |= uint64(s[i]) << (56 - 8*i)
	}
	return p
}

// cmpKey compares e's key with key, whose prefix is pre.
func cmpKey(e *keyDoc, pre prefix, key string) int {
	switch {
	case e.pre.hi != pre.hi:
		return cmp.Compare(e.pre.hi, pre.hi)
	case e.pre.lo != pre.lo:
		return cmp.Compare(e.pre.lo, pre.lo)
	case len(e.k) <= 16 && len(key) <= 16:
		// The prefixes are the keys, padded with zero bytes: the longer
		// key is the shorter one followed by zero bytes.
		return cmp.Compare(len(e.k), len(key))
	}
	return strings.Compare(e.k, key)
}

// search returns the position of key in the chunk c, or where it belongs,
// and whether it is there.
func search(c []keyDoc, pre prefix, key string) (int, bool) {
	lo, hi := 0, len(c)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if cmpKey(&c[m], pre, key) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(c) && c[lo].pre == pre && c[lo].k == key
}

// find returns the chunk that holds key or where it belongs: the first
// whose last key is not before it, else the last.
func (l *keyList) find(pre prefix, key string) int { return find(l.chunks, pre, key) }

func find(chunks [][]keyDoc, pre prefix, key string) int {
	lo, hi := 0, len(chunks)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		c := chunks[m]
		if cmpKey(&c[len(c)-1], pre, key) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return min(lo, len(chunks)-1)
}

// insert adds key with its document, or replaces the document of key.
func (l *keyList) insert(key string, d *memDoc) {
	pre := keyPrefix(key)
	e := keyDoc{pre, key, d}
	if len(l.chunks) == 0 {
		switch {
		case l.n == 0:
			l.one[0], l.n = e, 1
		case l.one[0].pre == pre && l.one[0].k == key:
			l.one[0].d = d
		default:
			c := make([]keyDoc, 2, 4)
			c[0], c[1] = l.one[0], e
			if cmpKey(&c[0], pre, key) > 0 {
				c[0], c[1] = c[1], c[0]
			}
			l.chunks = append(l.chunks, c)
			l.one[0], l.n = keyDoc{}, 2
		}
		return
	}
	ci := len(l.chunks) - 1
	c := l.chunks[ci]
	i := len(c)
	if cmpKey(&c[i-1], pre, key) >= 0 {
		// Not after the last key (keys often come in order: then the
		// searches are skipped).
		ci = l.find(pre, key)
		c = l.chunks[ci]
		var found bool
		if i, found = search(c, pre, key); found {
			c[i].d = d
			return
		}
	}
	c = slices.Insert(c, i, e)
	l.n++
	if len(c) > 2*keyChunk {
		// Both halves keep room to grow to a split again, so that
		// inserts move entries but do not reallocate.
		right := make([]keyDoc, len(c)-keyChunk, 2*keyChunk+1)
		copy(right, c[keyChunk:])
		clear(c[keyChunk:]) // hold no document the left half lost
		c = c[:keyChunk]
		l.chunks = slices.Insert(l.chunks, ci+1, right)
	}
	l.chunks[ci] = c
}

func (l *keyList) remove(key string) {
	pre := keyPrefix(key)
	if len(l.chunks) == 0 {
		if l.n == 1 && l.one[0].pre == pre && l.one[0].k == key {
			l.one[0], l.n = keyDoc{}, 0
		}
		return
	}
	ci := l.find(pre, key)
	c := l.chunks[ci]
	i, found := search(c, pre, key)
	if !found {
		return
	}
	c = slices.Delete(c, i, i+1)
	l.n--
	if len(c) == 0 {
		l.chunks = slices.Delete(l.chunks, ci, ci+1)
		return
	}
	l.chunks[ci] = c
}

// scan calls fn with the keys after `after` ("" for all), ascending, or
// descending (then the keys before `after`), until fn returns false.
func (l *keyList) scan(after string, desc bool, fn func(string, *memDoc) bool) {
	var buf [1][]keyDoc
	chunks := l.view(&buf)
	if !desc {
		ci, i := 0, 0
		if after != "" && len(chunks) > 0 {
			pre := keyPrefix(after)
			ci = find(chunks, pre, after)
			var found bool
			i, found = search(chunks[ci], pre, after)
			if found {
				i++
			}
		}
		for ; ci < len(chunks); ci, i = ci+1, 0 {
			for _, e := range chunks[ci][i:] {
				if !fn(e.k, e.d) {
					return
				}
			}
		}
		return
	}
	ci := len(chunks) - 1
	if ci < 0 {
		return
	}
	i := len(chunks[ci]) - 1
	if after != "" {
		pre := keyPrefix(after)
		ci = find(chunks, pre, after)
		j, _ := search(chunks[ci], pre, after)
		i = j - 1 // the keys before after
	}
	for ci >= 0 {
		c := chunks[ci]
		for ; i >= 0; i-- {
			if !fn(c[i].k, c[i].d) {
				return
			}
		}
		if ci--; ci >= 0 {
			i = len(chunks[ci]) - 1
		}
	}
}

var (
	_ backend.DocMaps    = (*Backend)(nil)
	_ backend.DocBatcher = (*Backend)(nil)
)

// docsAdd adds n to the documents counter of scope's quota, if it has
// one, refusing growth past its limit. The caller holds b.docs.mu (taken
// before b.mu, as SetQuota and CountUsage take them).
func (b *Backend) docsAdd(scope string, n int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if q := b.quotas[scope]; q != nil {
		return q.Add(backend.Usage{Documents: n})
	}
	return nil
}
