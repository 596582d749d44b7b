// Package ignore matches slash-separated relative paths against
// .gitignore-style patterns, for the --exclude of satchel fs import.
//
// A pattern is a .gitignore line: "*" matches within a segment, "?" one
// character, "[...]" a class (as path.Match), "**" as a whole segment zero
// or more segments; a pattern with a "/" before its end is anchored to
// the root (a leading "/" only anchors), one without matches at any depth;
// a trailing "/" matches directories only; a leading "!" re-includes what
// an earlier pattern excluded, except below an excluded directory; "\"
// escapes a leading "!" or "#"; blank lines and "#" comments are ignored.
// The last pattern that matches decides.
package ignore

import (
	"fmt"
	"path"
	"strings"
)

// Matcher holds compiled patterns.
type Matcher struct{ rules []rule }

type rule struct {
	neg, dirOnly bool
	segs         []string
}

// MaxPattern bounds a pattern's length.
const MaxPattern = 4096

// Compile compiles patterns, refusing one that is malformed.
func Compile(patterns []string) (*Matcher, error) {
	m := &Matcher{}
	for _, p := range patterns {
		r, ok, err := compile(p)
		if err != nil {
			return nil, fmt.Errorf("invalid exclude pattern %q: %v", p, err)
		}
		if ok {
			m.rules = append(m.rules, r)
		}
	}
	return m, nil
}

func compile(p string) (rule, bool, error) {
	var r rule
	if len(p) > MaxPattern {
		return r, false, fmt.Errorf("longer than %d bytes", MaxPattern)
	}
	p = strings.TrimRight(p, " ")
	if p == "" || p[0] == '#' {
		return r, false, nil
	}
	if p[0] == '!' {
		r.neg, p = true, p[1:]
	} else if p[0] == '\\' && len(p) > 1 && (p[1] == '!' || p[1] == '#') {
		p = p[1:]
	}
	if strings.HasSuffix(p, "/") {
		r.dirOnly, p = true, strings.TrimRight(p, "/")
	}
	if p == "" {
		return r, false, fmt.Errorf("matches nothing")
	}
	anchored := strings.Contains(p, "/")
	p = strings.TrimPrefix(p, "/")
	if p == "" {
		return r, false, fmt.Errorf("matches nothing")
	}
	r.segs = strings.Split(p, "/")
	for _, s := range r.segs {
		if s == "" {
			return r, false, fmt.Errorf("has an empty segment")
		}
		if s == "**" {
			continue
		}
		if _, err := path.Match(s, ""); err != nil {
			return r, false, err
		}
	}
	if !anchored {
		r.segs = append([]string{"**"}, r.segs...)
	}
	return r, true, nil
}

// Match reports whether the patterns exclude path itself (a directory
// when dir), without looking at its parents.
func (m *Matcher) Match(p string, dir bool) bool {
	if m == nil {
		return false
	}
	segs := strings.Split(p, "/")
	excluded := false
	for _, r := range m.rules {
		if r.dirOnly && !dir {
			continue
		}
		if matchSegs(r.segs, segs) {
			excluded = !r.neg
		}
	}
	return excluded
}

// Excluded reports whether the file at p is excluded: a directory above
// it is, or it is.
func (m *Matcher) Excluded(p string) bool {
	if m == nil || len(m.rules) == 0 {
		return false
	}
	for i := 0; i < len(p); i++ {
		if p[i] == '/' && m.Match(p[:i], true) {
			return true
		}
	}
	return m.Match(p, false)
}

// matchSegs matches path segments against pattern segments, where "**"
// matches any number of segments: dynamic programming over both, so the
// time is O(len(pat) × len(segs)) whatever the pattern.
func matchSegs(pat, segs []string) bool {
	// cur[j]: pat[:i] matches segs[:j].
	cur := make([]bool, len(segs)+1)
	next := make([]bool, len(segs)+1)
	cur[0] = true
	for _, ps := range pat {
		for j := range next {
			next[j] = false
		}
		if ps == "**" {
			seen := false
			for j := 0; j <= len(segs); j++ {
				seen = seen || cur[j]
				next[j] = seen
			}
		} else {
			for j := 1; j <= len(segs); j++ {
				if cur[j-1] {
					ok, _ := path.Match(ps, segs[j-1])
					next[j] = ok
				}
			}
		}
		cur, next = next, cur
	}
	return cur[len(segs)]
}
