package memory

import (
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
// over the candidates: the semantics stay those of internal/docs.
type docStore struct {
	mu      sync.RWMutex
	parts   map[partKey]*docPart
	indexes map[string][]string // store → indexed field paths
}

type partKey struct{ store, scope string }

type docPart struct {
	docs map[string]*memDoc
	keys keyList
	idx  map[string]map[any]*keyList // field → value → keys
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

func (b *Backend) PutDoc(ctx context.Context, put backend.DocPut) (backend.Doc, error) {
	now, err := b.docsNow()
	if err != nil {
		return backend.Doc{}, err
	}
	s := &b.docs
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.part(put.Store, put.Scope, true)
	cur := backend.Doc{Key: put.Key, Version: 1, Updated: now, Map: put.Doc}
	if put.TTL > 0 {
		cur.Expires = now.Add(put.TTL)
	}
	var hist []backend.Doc
	old := p.docs[put.Key]
	if old != nil && !old.expired(now) {
		cur.Version = old.cur.Version + 1
		if n := min(put.Versions, len(old.hist)+1); n > 0 {
			hist = make([]backend.Doc, n)
			prev := old.cur
			prev.Expires = time.Time{}
			hist[0] = prev
			copy(hist[1:], old.hist)
		}
	}
	d := old
	if d != nil {
		// The same *memDoc stays in the key lists: readers copy what
		// they return, under the read lock, and maps are never changed.
		p.unindex(put.Key, d)
	} else {
		d = &memDoc{}
		p.docs[put.Key] = d
		p.keys.insert(put.Key, d)
	}
	d.cur, d.doc, d.hist = cur, put.Doc, hist
	p.index(put.Key, d)
	return cur, nil
}

func (b *Backend) GetDoc(ctx context.Context, id backend.DocID, history, includeExpired bool) (backend.Doc, []backend.Doc, bool, error) {
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
	if d == nil || (!includeExpired && d.expired(now)) {
		return backend.Doc{}, nil, false, nil
	}
	var h []backend.Doc
	if history {
		h = slices.Clone(d.hist)
	}
	return d.cur, h, true, nil
}

func (b *Backend) RemoveDoc(ctx context.Context, id backend.DocID) (bool, error) {
	now, err := b.docsNow()
	if err != nil {
		return false, err
	}
	s := &b.docs
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.part(id.Store, id.Scope, false)
	if p == nil {
		return false, nil
	}
	d := p.docs[id.Key]
	if d == nil {
		return false, nil
	}
	p.remove(id.Key, d)
	return !d.expired(now), nil
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
	for _, p := range s.parts {
		for k, d := range p.docs {
			if d.expired(now) {
				p.remove(k, d)
				n++
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
		for f := range p.idx {
			if !slices.Contains(fields, f) {
				delete(p.idx, f)
			}
		}
		for _, f := range fields {
			if _, ok := p.idx[f]; !ok {
				p.addIndex(f)
			}
		}
	}
	return nil
}

// addIndex builds the index of field over the partition's documents.
func (p *docPart) addIndex(field string) {
	if p.idx == nil {
		p.idx = map[string]map[any]*keyList{}
	}
	m := map[any]*keyList{}
	p.idx[field] = m
	for k, d := range p.docs {
		addKey(m, indexValue(d.doc, field), k, d)
	}
}

func addKey(m map[any]*keyList, v any, key string, d *memDoc) {
	l := m[v]
	if l == nil {
		l = &keyList{}
		m[v] = l
	}
	l.insert(key, d)
}

func (p *docPart) index(key string, d *memDoc) {
	for f, m := range p.idx {
		addKey(m, indexValue(d.doc, f), key, d)
	}
}

func (p *docPart) unindex(key string, d *memDoc) {
	for f, m := range p.idx {
		v := indexValue(d.doc, f)
		if l := m[v]; l != nil {
			l.remove(key)
			if l.n == 0 {
				delete(m, v)
			}
		}
	}
}

// composite stands for an array or object value in an index: no equality
// hint names one.
type composite struct{}

// indexValue is the value at a dotted path in the form DocEq uses: a
// string, a float64, a bool, or nil for null and absent (also under a null
// or absent object).
func indexValue(doc map[string]any, path string) any {
	var v any = doc
	for seg := range strings.SplitSeq(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[seg]
	}
	switch x := v.(type) {
	case nil, string, bool:
		return x
	case float64:
		return x + 0 // -0 and 0 are one key
	case json.Number:
		if f, err := strconv.ParseFloat(string(x), 64); err == nil && !math.IsInf(f, 0) {
			return f + 0
		}
		return composite{}
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case int32:
		return float64(x)
	case float32:
		return float64(x)
	case uint, uint64, uint32, int16, int8, uint16, uint8:
		if f, err := strconv.ParseFloat(numberString(x), 64); err == nil {
			return f
		}
	}
	return composite{}
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
		m, ok := p.idx[eq.Field]
		if !ok {
			continue
		}
		n := 0
		var ls []*keyList
		for _, v := range eq.Values {
			if l := m[normalizeHint(v)]; l != nil && !slices.Contains(ls, l) {
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

func normalizeHint(v any) any {
	if f, ok := v.(float64); ok {
		return f + 0
	}
	return v
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
// lookup in the map by key.
type keyList struct {
	chunks [][]keyDoc
	n      int
}

// keyDoc is a key with its document. pre holds the key's first bytes, so
// that most comparisons of a search read no key text (a string elsewhere
// in memory, which costs a cache miss).
type keyDoc struct {
	pre uint64
	k   string
	d   *memDoc
}

const keyChunk = 128

// keyPrefix is the first 8 bytes of k, big-endian, zero-padded: when two
// prefixes differ, they compare as the keys do; when they are equal, the
// keys must be compared.
func keyPrefix(k string) uint64 {
	var p uint64
	for i := range min(len(k), 8) {
		p |= uint64(k[i]) << (56 - 8*i)
	}
	return p
}

// cmpKey compares e's key with key, whose prefix is pre.
func cmpKey(e *keyDoc, pre uint64, key string) int {
	switch {
	case e.pre < pre:
		return -1
	case e.pre > pre:
		return 1
	}
	return strings.Compare(e.k, key)
}

// search returns the position of key in the chunk c, or where it belongs,
// and whether it is there.
func search(c []keyDoc, pre uint64, key string) (int, bool) {
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
func (l *keyList) find(pre uint64, key string) int {
	lo, hi := 0, len(l.chunks)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		c := l.chunks[m]
		if cmpKey(&c[len(c)-1], pre, key) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return min(lo, len(l.chunks)-1)
}

// insert adds key with its document, or replaces the document of key.
func (l *keyList) insert(key string, d *memDoc) {
	pre := keyPrefix(key)
	if len(l.chunks) == 0 {
		l.chunks = [][]keyDoc{{{pre, key, d}}}
		l.n = 1
		return
	}
	ci := l.find(pre, key)
	c := l.chunks[ci]
	i, found := search(c, pre, key)
	if found {
		c[i].d = d
		return
	}
	c = slices.Insert(c, i, keyDoc{pre, key, d})
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
	if len(l.chunks) == 0 {
		return
	}
	pre := keyPrefix(key)
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
	if !desc {
		ci, i := 0, 0
		if after != "" && len(l.chunks) > 0 {
			pre := keyPrefix(after)
			ci = l.find(pre, after)
			var found bool
			i, found = search(l.chunks[ci], pre, after)
			if found {
				i++
			}
		}
		for ; ci < len(l.chunks); ci, i = ci+1, 0 {
			for _, e := range l.chunks[ci][i:] {
				if !fn(e.k, e.d) {
					return
				}
			}
		}
		return
	}
	ci := len(l.chunks) - 1
	if ci < 0 {
		return
	}
	i := len(l.chunks[ci]) - 1
	if after != "" {
		pre := keyPrefix(after)
		ci = l.find(pre, after)
		j, _ := search(l.chunks[ci], pre, after)
		i = j - 1 // the keys before after
	}
	for ci >= 0 {
		c := l.chunks[ci]
		for ; i >= 0; i-- {
			if !fn(c[i].k, c[i].d) {
				return
			}
		}
		if ci--; ci >= 0 {
			i = len(l.chunks[ci]) - 1
		}
	}
}

var _ backend.DocMaps = (*Backend)(nil)
