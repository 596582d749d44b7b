package vpath

import (
	"math/bits"
	"strings"

	"github.com/satchel-dev/satchel/internal/errs"
)

// Reasons a pattern is refused, beyond those it shares with a path, in the
// order Compile checks them.
const (
	reasonEscape     = "pattern does not support backslash escapes"
	reasonTripleStar = "*** is not supported (use ** for any number of segments)"
	reasonSharedStar = "** must be a whole path segment"
	reasonDotPattern = "contains a . or .. segment, which no path has: it could match nothing"
	reasonQuestion   = "? is not supported (only * and ** are)"
	reasonCharClass  = "character classes [...] are not supported (only * and ** are)"
	reasonBraces     = "brace expansion {...} is not supported (only * and ** are)"
)

const (
	globstar = "**"
	// maxSegments bounds a valid pattern's segments: "a/a/…/a" has the most.
	maxSegments = MaxLen/2 + 1
	// stateWords is the size of a set of matcher states (one per segment,
	// plus the accepting state) as a bitset.
	stateWords = (maxSegments + 1 + 63) / 64
)

// A Glob is a compiled glob pattern (DESIGN §2.3). It is immutable and safe
// for concurrent use.
type Glob struct {
	pattern string
	segs    []segment
	// literal: the pattern has no wildcard; it matches itself only.
	literal bool
	// globstars counts the segments that are "**".
	globstars int
	// prefix is a byte prefix of every path the pattern matches: "" or
	// leading literal segments ending with "/". skip counts its segments.
	prefix string
	skip   int
	words  int // bitset words the state set needs
}

// segment is one "/"-separated part of a pattern.
type segment struct {
	globstar bool     // the segment is "**"
	lit      string   // the segment when it has no "*"
	parts    []string // the segment split on "*", when it has one (len ≥ 2)
	minLen   int      // the bytes a matching path segment needs at least
}

// Compile parses a glob pattern. A refusal has kind errs.ErrInvalidPattern
// and the message `invalid pattern "p": reason`. Checks run in the order of
// DESIGN §2.1 for the rules a pattern shares with a path (empty, length,
// leading "/", control characters and UTF-8, backslash, empty segment), then
// the glob syntax: "***", "**" sharing a segment, "?", "[" or "]", "{" or "}".
func Compile(pattern string) (*Glob, error) {
	if reason := checkPattern(pattern); reason != "" {
		return nil, errs.New(errs.ErrInvalidPattern, "invalid pattern %q: %s", pattern, reason)
	}
	g := &Glob{pattern: pattern, literal: strings.IndexByte(pattern, '*') < 0}
	n := strings.Count(pattern, "/") + 1
	g.segs = make([]segment, 0, n)
	for rest := pattern; ; {
		s, tail, more := strings.Cut(rest, "/")
		g.segs = append(g.segs, newSegment(s))
		if !more {
			break
		}
		rest = tail
	}
	// Leading literal directory segments (the last segment is the name).
	m := 0
	for m < len(g.segs)-1 && !g.segs[m].wild() {
		m++
	}
	// When everything after them is "**", which may match zero segments, a
	// path may end with the last of them: it starts with one segment less.
	onlyGlobstars := true
	for _, s := range g.segs[m:] {
		onlyGlobstars = onlyGlobstars && s.globstar
		if s.globstar {
			g.globstars++
		}
	}
	if onlyGlobstars && m > 0 {
		m--
	}
	if m > 0 {
		end := 0
		for range m {
			end += strings.IndexByte(pattern[end:], '/') + 1
		}
		g.prefix = pattern[:end]
	}
	g.skip = m
	g.words = (len(g.segs) + 1 + 63) / 64
	return g, nil
}

// MustCompile is Compile for patterns known to be valid; it panics on a
// refusal. It is meant for tests and package-level variables.
func MustCompile(pattern string) *Glob {
	g, err := Compile(pattern)
	if err != nil {
		panic(err)
	}
	return g
}

func checkPattern(p string) string {
	switch {
	case p == "":
		return reasonEmpty
	case len(p) > MaxLen:
		return reasonTooLong
	case p[0] == '/':
		return reasonAbsolute
	}
	if reason := checkText(p); reason != "" {
		return reason
	}
	switch {
	case strings.IndexByte(p, '\\') >= 0:
		return reasonEscape
	case p[len(p)-1] == '/' || strings.Contains(p, "//"):
		return reasonEmptySegment
	case hasDotSegment(p):
		return reasonDotPattern
	case strings.Contains(p, "***"):
		return reasonTripleStar
	case sharedGlobstar(p):
		return reasonSharedStar
	case strings.IndexByte(p, '?') >= 0:
		return reasonQuestion
	case strings.IndexAny(p, "[]") >= 0:
		return reasonCharClass
	case strings.IndexAny(p, "{}") >= 0:
		return reasonBraces
	}
	return ""
}

// hasDotSegment reports whether some segment of p is "." or "..".
func hasDotSegment(p string) bool {
	for rest := p; ; {
		s, tail, more := strings.Cut(rest, "/")
		if s == "." || s == ".." {
			return true
		}
		if !more {
			return false
		}
		rest = tail
	}
}

// sharedGlobstar reports whether some segment of p holds "**" and more.
func sharedGlobstar(p string) bool {
	for rest := p; ; {
		s, tail, more := strings.Cut(rest, "/")
		if s != globstar && strings.Contains(s, globstar) {
			return true
		}
		if !more {
			return false
		}
		rest = tail
	}
}

func newSegment(s string) segment {
	if s == globstar {
		return segment{globstar: true}
	}
	if strings.IndexByte(s, '*') < 0 {
		return segment{lit: s, minLen: len(s)}
	}
	parts := strings.Split(s, "*")
	return segment{parts: parts, minLen: len(s) - len(parts) + 1}
}

func (s *segment) wild() bool { return s.globstar || s.parts != nil }

// match reports whether the path segment name matches s, which is not "**".
// With stars it anchors the first and last literal parts and finds each
// middle part leftmost-first: with "*" the only wildcard, the leftmost
// occurrence is never worse than a later one, so no backtracking is needed,
// and the cost is at most O(len(s) × len(name)).
func (s *segment) match(name string) bool {
	if s.parts == nil {
		return name == s.lit
	}
	if len(name) < s.minLen {
		return false
	}
	first, last := s.parts[0], s.parts[len(s.parts)-1]
	if !strings.HasPrefix(name, first) || !strings.HasSuffix(name, last) {
		return false
	}
	mid := name[len(first) : len(name)-len(last)]
	for _, p := range s.parts[1 : len(s.parts)-1] {
		i := strings.Index(mid, p)
		if i < 0 {
			return false
		}
		mid = mid[i+len(p):]
	}
	return true
}

// String returns the pattern as it was compiled.
func (g *Glob) String() string { return g.pattern }

// Literal returns the pattern and true when it has no wildcard, so that it
// matches exactly one path, itself.
func (g *Glob) Literal() (string, bool) { return g.pattern, g.literal }

// Prefix returns a prefix of every path the glob matches, so that a caller
// can scan only that range of sorted paths and Match each: the longest run
// of the pattern's leading literal directory segments, each followed by "/"
// ("notes/d07/*.md" gives "notes/d07/", "notes/**/*.md" gives "notes/",
// "*.md" gives "", "a/b.md" gives "a/"). Since "**" may match zero segments,
// "a/b/**" matches "a/b" itself, so its prefix is "a/".
func (g *Glob) Prefix() string { return g.prefix }

// Match reports whether path matches the glob. It does not allocate.
func (g *Glob) Match(path string) bool {
	if g.literal {
		return path == g.pattern
	}
	if !strings.HasPrefix(path, g.prefix) {
		return false
	}
	rest := path[len(g.prefix):]
	segs := g.segs[g.skip:]
	switch g.globstars {
	case 0:
		// One path segment per pattern segment, in lockstep.
		for i := range segs {
			name, tail, more := strings.Cut(rest, "/")
			if more == (i == len(segs)-1) || !segs[i].match(name) {
				return false
			}
			rest = tail
		}
		return true
	case 1:
		return matchOneGlobstar(segs, rest)
	}
	return g.matchStates(segs, rest)
}

// matchOneGlobstar matches a pattern with exactly one "**": the segments
// before it match the first path segments, those after it the last ones,
// and "**" whatever lies between, provided the two ends do not overlap.
func matchOneGlobstar(segs []segment, rest string) bool {
	left := true // rest still holds at least one segment
	i := 0
	for ; !segs[i].globstar; i++ {
		if !left {
			return false
		}
		name, tail, more := strings.Cut(rest, "/")
		if !segs[i].match(name) {
			return false
		}
		rest, left = tail, more
	}
	for j := len(segs) - 1; j > i; j-- {
		if !left {
			return false
		}
		name := rest
		if k := strings.LastIndexByte(rest, '/'); k >= 0 {
			name, rest = rest[k+1:], rest[:k]
		} else {
			left = false
		}
		if !segs[j].match(name) {
			return false
		}
	}
	return true
}

// matchStates simulates the pattern as a nondeterministic automaton whose
// state i means "segs[i:] must match the rest of the path"; a "**" state
// keeps itself on every path segment and also passes on to the next state
// without consuming one. One pass over the path, each segment tried
// against each live state once: O(len(pattern) × len(path)).
func (g *Glob) matchStates(segs []segment, rest string) bool {
	var cur, next [stateWords]uint64
	k := len(segs) // the accepting state
	cur[0] = 1
	closure(segs, &cur)
	for {
		name, tail, more := strings.Cut(rest, "/")
		clear(next[:g.words])
		live := false
		for w := range g.words {
			for word := cur[w]; word != 0; word &= word - 1 {
				i := w*64 + bits.TrailingZeros64(word)
				if i == k {
					continue
				}
				switch {
				case segs[i].globstar:
					next[i/64] |= 1 << (i % 64)
					live = true
				case segs[i].match(name):
					next[(i+1)/64] |= 1 << ((i + 1) % 64)
					live = true
				}
			}
		}
		if !live {
			return false
		}
		closure(segs, &next)
		cur = next
		if !more {
			break
		}
		rest = tail
	}
	return cur[k/64]&(1<<(k%64)) != 0
}

// closure adds, for each live "**" state, the state after it ("**" matching
// zero segments). Ascending order carries runs of "**" through.
func closure(segs []segment, set *[stateWords]uint64) {
	for i := range segs {
		if segs[i].globstar && set[i/64]&(1<<(i%64)) != 0 {
			set[(i+1)/64] |= 1 << ((i + 1) % 64)
		}
	}
}

// IncludeMatch applies grep's include filter (like ripgrep's --glob): a
// pattern without "/" is matched against the file's name, one with "/"
// against its path relative to under (a directory as [Dir] returns it). A
// path outside under does not match.
func IncludeMatch(include *Glob, under, path string) bool {
	if strings.IndexByte(include.pattern, '/') < 0 {
		return include.Match(path[strings.LastIndexByte(path, '/')+1:])
	}
	if under == "" {
		return include.Match(path)
	}
	under = strings.TrimSuffix(under, "/")
	if !Within(under, path) {
		return false
	}
	return include.Match(path[len(under)+1:])
}
