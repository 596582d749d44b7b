package engine

import (
	"context"
	"maps"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/satchel-dev/satchel/internal/jsonsize"
)

// View is a read-only tree: a Snapshot at a commit, or a Tx in progress.
type View interface {
	// Get returns the entry at path.
	Get(ctx context.Context, path string) (Entry, bool, error)
	// Content returns an entry's content.
	Content(ctx context.Context, ent *Entry) (string, error)
	// Scan calls fn for each entry with from <= path < to ("" = no bound),
	// which is valid only during the call (its Path may be kept),
	// in path order, until fn returns false.
	Scan(ctx context.Context, from, to string, fn func(*Entry) (bool, error)) error
	// ScanFiles is Scan for callers that read the content of the entries
	// they are given: it calls fn only for the entries for which want
	// returns true (all when want is nil), and may read their packs, and
	// the tree's, ahead of fn, many in one call to the backend. want
	// must answer for a path alone: it may be asked more than once.
	ScanFiles(ctx context.Context, from, to string, want func(path string) bool, fn func(*Entry) (bool, error)) error
	// ScanPaths is Scan for callers that need only the paths (glob, list):
	// it decodes nothing else.
	ScanPaths(ctx context.Context, from, to string, fn func(path string) (bool, error)) error
	// Totals returns the number of files and their JSON bytes (DESIGN §2.4).
	Totals(ctx context.Context) (files, bytes int64, err error)
}

// Snapshot is the tree of one commit.
type Snapshot struct {
	e    *Engine
	root Ref
}

// Get implements View.
func (s *Snapshot) Get(ctx context.Context, path string) (Entry, bool, error) {
	return s.e.lookup(ctx, s.root, path)
}

// Content implements View.
func (s *Snapshot) Content(ctx context.Context, ent *Entry) (string, error) {
	return s.e.Content(ctx, ent)
}

// Scan implements View.
func (s *Snapshot) Scan(ctx context.Context, from, to string, fn func(*Entry) (bool, error)) error {
	return s.e.scan(ctx, s.root, from, to, true, fn)
}

// ScanFiles implements View.
func (s *Snapshot) ScanFiles(ctx context.Context, from, to string, want func(string) bool, fn func(*Entry) (bool, error)) error {
	return s.e.scanFiles(ctx, s.root, from, to, true, true, want, fn)
}

// ScanPaths implements View.
func (s *Snapshot) ScanPaths(ctx context.Context, from, to string, fn func(string) (bool, error)) error {
	return s.e.scan(ctx, s.root, from, to, false, func(ent *Entry) (bool, error) { return fn(ent.Path) })
}

// Totals implements View.
func (s *Snapshot) Totals(ctx context.Context) (int64, int64, error) {
	return s.e.totals(ctx, s.root)
}

// Root returns the snapshot's root (zero for an empty tree).
func (s *Snapshot) Root() Ref { return s.root }

// Tx is a mutation in progress over a base tree. Its changes are visible to
// its own reads; they are stored only when the Update that made it commits.
type Tx struct {
	e       *Engine
	base    Ref
	baseSeq int64                   // the sequence number of base's commit (0: none)
	now     int64                   // Unix microseconds
	pending map[string]*pendingFile // nil value: deleted
	// under counts, per directory, the pending files that exist beneath it,
	// so HasUnder does not walk every pending path (a batch of n writes
	// would be quadratic). It is made once there are more than
	// smallPending paths: below, walking them is cheaper than the map.
	under map[string]int
	files int64
	bytes int64
	// baseFiles and baseBytes are the base's totals, once counted.
	baseFiles, baseBytes int64
	counted              bool
	// changes counts the changes made by this transaction's own
	// mutation (a chained one starts with another's: chain).
	changes int
	// last is the last path looked up in the base tree, which never
	// changes: a mutation looks its path up in its checks, then again to
	// apply it.
	last struct {
		path  string
		ent   Entry
		found bool
	}
}

// pendingFile is a new version of a file: its entry (chunks not yet built)
// and its content as parts, reusing unchanged chunks of the old version.
type pendingFile struct {
	ent   Entry
	parts []part
}

type part struct {
	chunks []Chunk // reused chunks, when text == ""
	text   string  // new content
	// known is how much of text is an old last chunk (no cut in it).
	known int
}

func (p *pendingFile) content(ctx context.Context, e *Engine) (string, error) {
	if len(p.parts) == 1 && p.parts[0].chunks == nil {
		return p.parts[0].text, nil
	}
	var b strings.Builder
	b.Grow(int(p.ent.Size))
	for _, pt := range p.parts {
		b.WriteString(pt.text)
		for _, c := range pt.chunks {
			s, err := e.chunk(ctx, c.Ref)
			if err != nil {
				return "", err
			}
			b.WriteString(s)
		}
	}
	return b.String(), nil
}

// Get implements View.
func (tx *Tx) Get(ctx context.Context, path string) (Entry, bool, error) {
	if p, ok := tx.pending[path]; ok {
		if p == nil {
			return Entry{}, false, nil
		}
		return p.ent, true, nil
	}
	if path == tx.last.path && path != "" {
		return tx.last.ent, tx.last.found, nil
	}
	ent, found, err := tx.e.lookup(ctx, tx.base, path)
	if err == nil {
		tx.last.path, tx.last.ent, tx.last.found = path, ent, found
	}
	return ent, found, err
}

// Content implements View.
func (tx *Tx) Content(ctx context.Context, ent *Entry) (string, error) {
	if p, ok := tx.pending[ent.Path]; ok && p != nil && ent.Chunks == nil && ent.List.IsZero() {
		return p.content(ctx, tx.e)
	}
	return tx.e.Content(ctx, ent)
}

// Scan implements View, merging the pending changes into the base.
func (tx *Tx) Scan(ctx context.Context, from, to string, fn func(*Entry) (bool, error)) error {
	return tx.scan(ctx, from, to, true, fn)
}

// ScanFiles implements View.
func (tx *Tx) ScanFiles(ctx context.Context, from, to string, want func(string) bool, fn func(*Entry) (bool, error)) error {
	return tx.scanFiles(ctx, from, to, true, true, want, fn)
}

// ScanPaths implements View.
func (tx *Tx) ScanPaths(ctx context.Context, from, to string, fn func(string) (bool, error)) error {
	return tx.scan(ctx, from, to, false, func(ent *Entry) (bool, error) { return fn(ent.Path) })
}

// scan is Scan; when full is false, the entries of the base tree hold
// only their paths.
func (tx *Tx) scan(ctx context.Context, from, to string, full bool, fn func(*Entry) (bool, error)) error {
	return tx.scanFiles(ctx, from, to, full, false, nil, fn)
}

// scanFiles is scan that passes fn only the entries want accepts, and
// reads the base tree's packs ahead when files is set (Engine.scanFiles).
// A deleted path (a nil pending entry) hides its base entry whatever want
// says of it.
func (tx *Tx) scanFiles(ctx context.Context, from, to string, full, files bool, want func(string) bool, fn func(*Entry) (bool, error)) error {
	var keys []string
	for k, p := range tx.pending {
		if k >= from && (to == "" || k < to) && (p == nil || want == nil || want(k)) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return tx.e.scanFiles(ctx, tx.base, from, to, full, files, want, fn)
	}
	sort.Strings(keys)
	stopped := false
	emitUpTo := func(path string, inclusive bool) (bool, error) {
		for len(keys) > 0 && (keys[0] < path || inclusive && keys[0] == path) {
			k := keys[0]
			keys = keys[1:]
			if p := tx.pending[k]; p != nil {
				ent := p.ent
				more, err := fn(&ent)
				if err != nil || !more {
					stopped = true
					return false, err
				}
			}
		}
		return true, nil
	}
	err := tx.e.scanFiles(ctx, tx.base, from, to, full, files, want, func(ent *Entry) (bool, error) {
		if more, err := emitUpTo(ent.Path, false); !more {
			return false, err
		}
		if _, ok := tx.pending[ent.Path]; ok {
			return emitUpTo(ent.Path, true)
		}
		more, err := fn(ent)
		if !more {
			stopped = true
		}
		return more, err
	})
	if err != nil || stopped {
		return err
	}
	for _, k := range keys {
		if p := tx.pending[k]; p != nil {
			ent := p.ent
			if more, err := fn(&ent); err != nil || !more {
				return err
			}
		}
	}
	return nil
}

// Totals implements View.
func (tx *Tx) Totals(ctx context.Context) (int64, int64, error) {
	if err := tx.count(ctx); err != nil {
		return 0, 0, err
	}
	return tx.files, tx.bytes, nil
}

func (tx *Tx) count(ctx context.Context) error {
	if tx.counted {
		return nil
	}
	f, b, err := tx.e.totals(ctx, tx.base)
	if err != nil {
		return err
	}
	tx.files, tx.bytes, tx.counted = f, b, true
	tx.baseFiles, tx.baseBytes = f, b
	return nil
}

// set records a new version of path and updates the totals.
func (tx *Tx) set(ctx context.Context, p *pendingFile, old *Entry) error {
	if err := tx.count(ctx); err != nil {
		return err
	}
	if old != nil {
		tx.bytes -= old.JSONBytes
	} else {
		tx.files++
	}
	tx.bytes += p.ent.JSONBytes
	tx.setPending(p.ent.Path, p)
	return nil
}

// setPending records path's new state (nil: deleted), keeping under.
func (tx *Tx) setPending(path string, p *pendingFile) {
	if tx.pending == nil {
		tx.pending = map[string]*pendingFile{}
	}
	was := tx.pending[path] != nil
	tx.pending[path] = p
	tx.changes++
	if tx.under == nil {
		if len(tx.pending) <= smallPending {
			return
		}
		tx.under = map[string]int{}
		for k, q := range tx.pending {
			if q != nil {
				tx.addUnder(k, 1)
			}
		}
		return
	}
	if was == (p != nil) {
		return
	}
	d := 1
	if was {
		d = -1
	}
	tx.addUnder(path, d)
}

// smallPending is how many changed paths a Tx walks instead of keeping
// under (most mutations change one).
const smallPending = 8

// addUnder adds d to the count of every directory above path.
func (tx *Tx) addUnder(path string, d int) {
	for i := strings.IndexByte(path, '/'); i >= 0; {
		tx.under[path[:i]] += d
		j := strings.IndexByte(path[i+1:], '/')
		if j < 0 {
			break
		}
		i += 1 + j
	}
}

// HasUnder reports whether any file lies beneath directory dir.
func (tx *Tx) HasUnder(ctx context.Context, dir string) (bool, error) {
	if tx.under != nil {
		if tx.under[dir] > 0 {
			return true, nil
		}
	} else {
		for k, p := range tx.pending {
			if p != nil && len(k) > len(dir) && k[len(dir)] == '/' && strings.HasPrefix(k, dir) {
				return true, nil
			}
		}
	}
	found := false
	err := tx.e.scan(ctx, tx.base, dir+"/", dir+"0", false, func(ent *Entry) (bool, error) {
		if p, ok := tx.pending[ent.Path]; ok && p == nil {
			return true, nil // deleted in this transaction
		}
		found = true
		return false, nil
	})
	return found, err
}

// countLines returns content's number of lines (DESIGN §2.2) and whether
// it ends with "\n".
func countLines(content string) (lines int64, endsNL bool) {
	endsNL = len(content) > 0 && content[len(content)-1] == '\n'
	lines = int64(strings.Count(content, "\n"))
	if len(content) > 0 && !endsNL {
		lines++
	}
	return lines, endsNL
}

func (tx *Tx) entry(path, content string) Entry {
	lines, endsNL := countLines(content)
	return Entry{
		Path:      path,
		Size:      int64(len(content)),
		Lines:     lines,
		EndsNL:    endsNL,
		ModTime:   tx.now,
		JSONBytes: int64(jsonsize.Entry(path, content)),
	}
}

// Put writes content at path. When a large file is replaced, the chunks it
// shares with the old version (a common prefix and suffix) are reused.
func (tx *Tx) Put(ctx context.Context, path, content string) error {
	old, had, err := tx.Get(ctx, path)
	if err != nil {
		return err
	}
	p := &pendingFile{ent: tx.entry(path, content), parts: []part{{text: content}}}
	if had && len(content) > singleChunkMax && old.Size > singleChunkMax {
		if p.parts, err = tx.reuse(ctx, &old, content); err != nil {
			return err
		}
	}
	var oldp *Entry
	if had {
		oldp = &old
	}
	return tx.set(ctx, p, oldp)
}

// reuse splits content into parts that reuse the old version's chunks lying
// wholly inside the common prefix or the common suffix of old and new.
func (tx *Tx) reuse(ctx context.Context, old *Entry, content string) ([]part, error) {
	oc, err := tx.Content(ctx, old)
	if err != nil {
		return nil, err
	}
	cs, err := tx.chunksOf(ctx, old)
	if err != nil || cs == nil {
		return []part{{text: content}}, err
	}
	pre := commonPrefix(oc, content)
	suf := commonSuffix(oc[pre:], content[pre:])
	off := int64(0)
	i := 0
	for ; i < len(cs) && off+cs[i].Len <= int64(pre); i++ {
		off += cs[i].Len
	}
	midStart := off
	end := int64(len(oc))
	j := len(cs)
	for ; j > i && end-cs[j-1].Len >= int64(len(oc)-suf); j-- {
		end -= cs[j-1].Len
	}
	midEnd := int64(len(content)) - (int64(len(oc)) - end)
	parts := make([]part, 0, 3)
	if i > 0 {
		parts = append(parts, part{chunks: cs[:i:i]})
	}
	if midEnd > midStart {
		parts = append(parts, part{text: content[midStart:midEnd]})
	}
	if j < len(cs) {
		parts = append(parts, part{chunks: cs[j:]})
	}
	return parts, nil
}

// chunksOf returns the chunks of a stored entry, or nil for a pending one.
func (tx *Tx) chunksOf(ctx context.Context, ent *Entry) ([]Chunk, error) {
	if ent.Chunks == nil && ent.List.IsZero() {
		return nil, nil
	}
	return tx.e.chunks(ctx, ent)
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i+8 <= n && a[i:i+8] == b[i:i+8] {
		i += 8
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

func commonSuffix(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	return i
}

// Append adds text to the end of path (creating it). Only the last chunk of
// a large file is rewritten.
func (tx *Tx) Append(ctx context.Context, path, text string) error {
	old, had, err := tx.Get(ctx, path)
	if err != nil {
		return err
	}
	if !had {
		return tx.set(ctx, &pendingFile{ent: tx.entry(path, text), parts: []part{{text: text}}}, nil)
	}
	var prefix []part
	var tail string // the old content that is rewritten with text
	known := 0      // how much of tail is an old last chunk (no cut in it)
	if p := tx.pending[path]; p != nil && len(p.parts) > 0 && p.parts[len(p.parts)-1].text != "" {
		// A file this transaction changed: its last new part grows, as
		// a stored file's last chunk does (a chained mutation appending
		// to the file its parent appended to).
		last := p.parts[len(p.parts)-1]
		prefix = slices.Clip(p.parts[:len(p.parts)-1])
		tail, known = last.text, last.known
	} else {
		cs, err := tx.chunksOf(ctx, &old)
		if err != nil {
			return err
		}
		if len(cs) > 1 {
			prefix = make([]part, 1, 2) // and the last part
			prefix[0].chunks = cs[: len(cs)-1 : len(cs)-1]
			if tail, err = tx.e.chunk(ctx, cs[len(cs)-1].Ref); err != nil {
				return err
			}
			known = len(tail) // a last chunk of a cut file: no cut inside it
		} else if tail, err = tx.Content(ctx, &old); err != nil {
			return err
		}
		if len(tail) > 0 && len(cs) <= 1 && int(old.Size)+len(text) > singleChunkMax {
			// A small file outgrowing one chunk is cut from its start.
			prefix = nil
		}
	}
	ent := old
	ent.Chunks, ent.List = nil, Ref{}
	ent.Size = old.Size + int64(len(text))
	newlines := old.Lines + int64(strings.Count(text, "\n"))
	if old.Size > 0 && !old.EndsNL {
		newlines--
	}
	if len(text) > 0 {
		ent.EndsNL = text[len(text)-1] == '\n'
	}
	ent.Lines = newlines
	if ent.Size > 0 && !ent.EndsNL {
		ent.Lines++
	}
	ent.ModTime = tx.now
	// JSON length is additive except across an incomplete UTF-8 sequence at
	// the old end, which text may complete: recount those few bytes.
	k := incompleteTail(tail)
	ent.JSONBytes = old.JSONBytes - int64(jsonsize.String(tail[len(tail)-k:])-2) +
		int64(jsonsize.String(tail[len(tail)-k:]+text)-2)
	parts := append(prefix, part{text: tx.e.tails.join(tail, text), known: known})
	return tx.set(ctx, &pendingFile{ent: ent, parts: parts}, &old)
}

// incompleteTail returns how many bytes at the end of s begin a UTF-8
// sequence that is not complete.
func incompleteTail(s string) int {
	for k := 1; k <= 3 && k <= len(s); k++ {
		c := s[len(s)-k]
		if utf8.RuneStart(c) {
			if c >= 0xC0 && !utf8.FullRuneInString(s[len(s)-k:]) {
				return k
			}
			return 0
		}
	}
	return 0
}

// Delete removes path (nothing when it is missing).
func (tx *Tx) Delete(ctx context.Context, path string) error {
	old, had, err := tx.Get(ctx, path)
	if err != nil || !had {
		return err
	}
	if err := tx.count(ctx); err != nil {
		return err
	}
	tx.files--
	tx.bytes -= old.JSONBytes
	tx.setPending(path, nil)
	return nil
}

// Rename moves the file at from to to, sharing its content (the caller
// checks that from exists and to may be replaced).
func (tx *Tx) Rename(ctx context.Context, from, to string) error {
	old, had, err := tx.Get(ctx, from)
	if err != nil || !had {
		return err
	}
	ent := old
	ent.Path = to
	ent.JSONBytes = old.JSONBytes - int64(jsonsize.String(from)) + int64(jsonsize.String(to))
	var p *pendingFile
	if q, ok := tx.pending[from]; ok && q != nil {
		p = &pendingFile{ent: ent, parts: q.parts}
	} else {
		cs, err := tx.e.chunks(ctx, &old)
		if err != nil {
			return err
		}
		parts := []part{{}}
		if len(cs) > 0 {
			parts[0].chunks = cs
		}
		p = &pendingFile{ent: ent, parts: parts}
	}
	p.ent.Chunks, p.ent.List = nil, Ref{}
	if err := tx.Delete(ctx, from); err != nil {
		return err
	}
	dst, hadDst, err := tx.Get(ctx, to)
	if err != nil {
		return err
	}
	var dp *Entry
	if hadDst {
		dp = &dst
	}
	return tx.set(ctx, p, dp)
}

// BaseSeq returns the sequence number of the commit the transaction
// builds on (0 on an empty thread): its commit's will be one more.
func (tx *Tx) BaseSeq() int64 { return tx.baseSeq }

// Changed reports whether the transaction's mutation changed anything.
func (tx *Tx) Changed() bool { return tx.changes > 0 }

// chain returns a transaction over tx's base that starts with tx's
// changes: the next mutation of the thread, built while tx's commit is on
// its way to the backend. Its commit carries tx's changes again, in its
// own pack, since it cannot name the objects of a pack not yet stored
// (decision 0092). Pending files are never modified once set, so they are
// shared.
func (tx *Tx) chain(now int64) *Tx {
	c := &Tx{
		e: tx.e, base: tx.base, now: now,
		pending: maps.Clone(tx.pending), under: maps.Clone(tx.under),
		files: tx.files, bytes: tx.bytes, baseFiles: tx.baseFiles, baseBytes: tx.baseBytes,
		counted: tx.counted, last: tx.last,
	}
	return c
}

// pendingText is the new text the transaction holds: what a commit
// chained to it stores again.
func (tx *Tx) pendingText() int {
	n := 0
	for _, p := range tx.pending {
		if p != nil {
			for _, pt := range p.parts {
				n += len(pt.text)
			}
		}
	}
	return n
}

// inheritedText is the new text of the changes tx took over from from, the
// transaction it was chained to (chain), and left as they were: what its
// commit stores again.
func (tx *Tx) inheritedText(from *Tx) int {
	n := 0
	for path, p := range tx.pending {
		if p != nil && from.pending[path] == p {
			for _, pt := range p.parts {
				n += len(pt.text)
			}
		}
	}
	return n
}

// Paths returns the paths the transaction changed, sorted.
func (tx *Tx) Paths() []string {
	out := make([]string, 0, len(tx.pending))
	for k := range tx.pending {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// reusedChunks counts the old chunks parts reuse.
func reusedChunks(parts []part) int {
	n := 0
	for _, pt := range parts {
		n += len(pt.chunks)
	}
	return n
}

// build turns the pending files into chunks and tree nodes.
func (tx *Tx) build(ctx context.Context, bd *build) (Ref, error) {
	paths := tx.Paths()
	changes := make([]change, len(paths))
	for i, path := range paths {
		changes[i].path = path
		p := tx.pending[path]
		if p == nil {
			continue
		}
		ent := p.ent
		var cs []Chunk // nil for an empty file
		if n := reusedChunks(p.parts); n > 0 {
			cs = make([]Chunk, 0, n+1)
		}
		for _, pt := range p.parts {
			cs = append(cs, pt.chunks...)
			if pt.text == "" {
				continue
			}
			start := 0
			for _, end := range cuts(pt.text, pt.known) {
				ref := bd.pb.addString(kindChunk, pt.text[start:end])
				cs = append(cs, Chunk{Ref: ref, Len: int64(end - start)})
				start = end
			}
		}
		if len(cs) > maxInlineChunks {
			ent.List = bd.pb.add(kindChunkList, appendChunks(make([]byte, 0, 1+len(cs)*12), cs))
			ent.Chunks = nil
		} else {
			ent.Chunks, ent.List = cs, Ref{}
		}
		changes[i].ent = &ent
	}
	return tx.e.applyTree(ctx, tx.base, changes, bd)
}
