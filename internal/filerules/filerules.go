// Package filerules holds the path rules of agents and tokens: an ordered
// list of [GLOB, ACCESS] pairs. The first pair whose glob matches a path
// decides its access; a path no pair matches has none. Globs use the glob
// grammar of package vpath (DESIGN §2.3).
package filerules

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/satchel-dev/satchel/internal/errs"
	"github.com/satchel-dev/satchel/internal/vpath"
)

// Access is what a caller may do with a path, from least to most.
type Access int

// The three accesses, ordered: the stricter of two is the smaller.
const (
	// None hides the path: it reads as missing and no listing names it.
	None Access = iota
	// Read lets the path be read, not changed.
	Read
	// RW lets the path be read and changed.
	RW
)

var accessNames = [...]string{None: "none", Read: "read", RW: "rw"}

// String returns "none", "read" or "rw".
func (a Access) String() string {
	if a < None || a > RW {
		return "Access(" + strconv.Itoa(int(a)) + ")"
	}
	return accessNames[a]
}

// ParseAccess reads "none", "read" or "rw".
func ParseAccess(s string) (Access, bool) {
	for a, n := range accessNames {
		if s == n {
			return Access(a), true
		}
	}
	return None, false
}

// Rule is one [GLOB, ACCESS] pair.
type Rule struct {
	Glob   string
	Access Access
	g      *vpath.Glob // compiled Glob (nil: not compiled yet)
	all    bool        // Glob is "**": it matches every path

	// Quick refusals, before the glob's own match: every path it
	// matches starts with pre (or is pre without its final "/") and ends
	// with post.
	pre, post string
}

// NewRule compiles one pair. A bad glob is refused with kind
// errs.ErrInvalidPattern (vpath.Compile's message).
func NewRule(glob string, a Access) (Rule, error) {
	if a < None || a > RW {
		return Rule{}, errs.New(errs.ErrInvalidArgument, "unknown access %d", int(a))
	}
	g, err := vpath.Compile(glob)
	if err != nil {
		return Rule{}, err
	}
	r := Rule{Glob: glob, Access: a, g: g, all: glob == "**"}
	segs := strings.Split(glob, "/")
	for _, s := range segs[:len(segs)-1] {
		if strings.IndexByte(s, '*') >= 0 {
			break
		}
		r.pre += s + "/"
	}
	last := segs[len(segs)-1]
	r.post = last[strings.LastIndexByte(last, '*')+1:]
	return r, nil
}

// Match reports whether the rule's glob matches path. A rule made without
// NewRule is compiled on each call; a glob that does not compile matches
// nothing.
func (r *Rule) Match(path string) bool {
	if r.all {
		return true
	}
	if r.g == nil {
		c, err := NewRule(r.Glob, r.Access)
		if err != nil {
			return false
		}
		return c.Match(path)
	}
	if n := len(r.post); n > 0 && (len(path) < n || path[len(path)-1] != r.post[n-1] || path[len(path)-n:] != r.post) {
		return false // the last byte first: most paths fail on it
	}
	if r.pre != "" && !strings.HasPrefix(path, r.pre) && path != r.pre[:len(r.pre)-1] {
		return false
	}
	return r.g.Match(path)
}

// Rules is an ordered list of pairs. A nil Rules is "no rules": every path
// rw (Of answers RW). A non-nil Rules with no pair hides every path.
type Rules []Rule

// Of returns the access the rules give path: the first matching pair's,
// None when no pair matches, RW when r is nil.
func (r Rules) Of(path string) Access {
	if r == nil {
		return RW
	}
	for i := range r {
		if r[i].Match(path) {
			return r[i].Access
		}
	}
	return None
}

// HidesNothing reports whether every path gets at least Read: no pair is
// None before a "**" pair that grants Read or RW. It errs on the side of
// false (a None pair whose glob matches nothing still counts).
func (r Rules) HidesNothing() bool {
	if r == nil {
		return true
	}
	for i := range r {
		if r[i].Access == None {
			return false
		}
		if r[i].Glob == "**" {
			return true
		}
	}
	return false
}

// WritesNothing reports whether no path gets RW.
func (r Rules) WritesNothing() bool {
	if r == nil {
		return false
	}
	for i := range r {
		if r[i].Access == RW {
			return false
		}
		if r[i].Glob == "**" {
			return true
		}
	}
	return true
}

// String returns the rules in their flag form, "notes/**=rw,**=read" ("" for
// nil).
func (r Rules) String() string {
	var b strings.Builder
	for i, p := range r {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(p.Glob)
		b.WriteByte('=')
		b.WriteString(p.Access.String())
	}
	return b.String()
}

// Parse reads the flag form: GLOB=ACCESS pairs separated by commas, such
// as "notes/**=rw,**=read" (a glob cannot hold a comma in this form; the
// JSON form has no such limit). Every problem is refused with kind
// errs.ErrInvalidArgument naming the pair: `invalid file rules
// "notes/**=rx": pair 1 "notes/**=rx": unknown access "rx" (want rw, read
// or none)`.
func Parse(s string) (Rules, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errs.New(errs.ErrInvalidArgument, "invalid file rules %q: no GLOB=ACCESS pair", s)
	}
	parts := strings.Split(s, ",")
	out := make(Rules, 0, len(parts))
	for i, p := range parts {
		p = strings.TrimSpace(p)
		fail := func(format string, args ...any) error {
			return errs.New(errs.ErrInvalidArgument, "invalid file rules %q: pair %d %q: %s", s, i+1, p, fmt.Sprintf(format, args...))
		}
		k := strings.LastIndexByte(p, '=')
		if k < 0 {
			return nil, fail("want GLOB=ACCESS")
		}
		glob, acc := p[:k], p[k+1:]
		r, err := Pair(glob, acc)
		if err != nil {
			return nil, fail("%s", reason(err))
		}
		out = append(out, r)
	}
	return out, nil
}

// Pair compiles one pair given as text: a glob and "rw", "read" or "none".
func Pair(glob, access string) (Rule, error) {
	a, ok := ParseAccess(access)
	if !ok {
		return Rule{}, errs.New(errs.ErrInvalidArgument, "unknown access %q (want rw, read or none)", access)
	}
	return NewRule(glob, a)
}

// reason is an error's message without its kind.
func reason(err error) string {
	if e, ok := err.(*errs.Error); ok {
		return e.Msg
	}
	return err.Error()
}

// ParseJSON reads the JSON form: an array of [GLOB, ACCESS] arrays, such
// as [["secrets/**", "none"], ["**", "read"]].
func ParseJSON(data []byte) (Rules, error) {
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, errs.New(errs.ErrInvalidArgument, "file rules must be an array of [GLOB, ACCESS] pairs: %v", err)
	}
	out := make(Rules, 0, len(raw))
	for i, m := range raw {
		var pair []string
		if err := json.Unmarshal(m, &pair); err != nil || len(pair) != 2 {
			return nil, errs.New(errs.ErrInvalidArgument, "file rules [%d]: must be a [GLOB, ACCESS] pair of two strings", i)
		}
		r, err := Pair(pair[0], pair[1])
		if err != nil {
			return nil, errs.New(errs.ErrInvalidArgument, "file rules [%d]: %s", i, reason(err))
		}
		out = append(out, r)
	}
	return out, nil
}

// MarshalJSON writes the JSON form.
func (r Rules) MarshalJSON() ([]byte, error) {
	if r == nil {
		return []byte("null"), nil
	}
	pairs := make([][2]string, len(r))
	for i, p := range r {
		pairs[i] = [2]string{p.Glob, p.Access.String()}
	}
	return json.Marshal(pairs)
}

// UnmarshalJSON reads the JSON form (null: no rules).
func (r *Rules) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		*r = nil
		return nil
	}
	rs, err := ParseJSON(data)
	if err != nil {
		return err
	}
	*r = rs
	return nil
}

// Shadow says that pair Index (0-based) can never decide a path: pair By,
// earlier, matches every path it matches.
type Shadow struct{ Index, By int }

// Shadowed lists the pairs that can never match because an earlier one
// always does (for each, the first such earlier pair). It is sound, not
// complete: a pair it lists is dead, and most dead pairs are listed.
func (r Rules) Shadowed() []Shadow {
	var out []Shadow
	for j := range r {
		for i := 0; i < j; i++ {
			if Covers(r[i].Glob, r[j].Glob) {
				out = append(out, Shadow{Index: j, By: i})
				break
			}
		}
	}
	return out
}

// Covers reports whether every path glob b matches is matched by glob a
// (both valid globs). It compares them segment by segment: "**" in a
// covers any run of b's segments, "*" any one segment but "**", and a
// segment with stars the literal segments it matches or an equal segment.
func Covers(a, b string) bool {
	as, bs := strings.Split(a, "/"), strings.Split(b, "/")
	// cov[i][j]: as[i:] covers bs[j:], filled from the ends.
	n, m := len(as), len(bs)
	cov := make([][]bool, n+1)
	for i := range cov {
		cov[i] = make([]bool, m+1)
	}
	cov[n][m] = true
	for i := n - 1; i >= 0; i-- {
		for j := m; j >= 0; j-- {
			switch {
			case as[i] == "**":
				cov[i][j] = cov[i+1][j] || (j < m && cov[i][j+1])
			case j == m || bs[j] == "**":
				cov[i][j] = false
			default:
				cov[i][j] = segCovers(as[i], bs[j]) && cov[i+1][j+1]
			}
		}
	}
	return cov[0][0]
}

// segCovers reports whether segment a matches every name segment b does.
func segCovers(a, b string) bool {
	if a == b || a == "*" {
		return true
	}
	if strings.IndexByte(a, '*') < 0 || strings.IndexByte(b, '*') >= 0 {
		return false
	}
	g, err := vpath.Compile(a)
	return err == nil && g.Match(b)
}

// Dir is the rules as they apply to the files of one directory: the
// pairs that may match some of its files and not all (Maybe, in order),
// and the access of every file none of them matches (Rest: that of the
// first pair matching every file of the directory, None when no pair
// does). A directory whose Maybe is empty gives all its files one access.
// Dirs make a scan cheap: its files come directory by directory.
type Dir struct {
	Maybe []Rule
	Rest  Access
}

// Of returns the access of path, a file of the directory.
func (d *Dir) Of(path string) Access {
	for i := range d.Maybe {
		if d.Maybe[i].Match(path) {
			return d.Maybe[i].Access
		}
	}
	return d.Rest
}

// ForDir returns the rules for the files under dir ("" for the root: its
// files and those of every directory under it, which gives every pair
// but those it proves match all).
func (r Rules) ForDir(dir string) Dir {
	if r == nil {
		return Dir{Rest: RW}
	}
	var d Dir
	for _, p := range r {
		switch p.under(dir) {
		case never:
			continue
		case always:
			d.Rest = p.Access
			return d
		}
		d.Maybe = append(d.Maybe, p)
	}
	d.Rest = None
	return d
}

type reach int

const (
	never reach = iota
	maybe
	always
)

// under says whether the rule's glob matches none, some or all of the
// paths under dir (dir/NAME, dir/A/NAME, ...). It errs towards maybe.
func (r *Rule) under(dir string) reach {
	if r.all {
		return always
	}
	if dir == "" {
		return maybe
	}
	if Covers(r.Glob, dir+"/*/**") {
		return always
	}
	gs := strings.Split(r.Glob, "/")
	ds := strings.Split(dir, "/")
	for i, g := range gs {
		if g == "**" {
			return maybe
		}
		if i >= len(ds) {
			return maybe // a pair longer than dir: it may match some files under it
		}
		if g == ds[i] || g == "*" {
			continue
		}
		if strings.IndexByte(g, '*') < 0 || !nameMatch(g, ds[i]) {
			return never
		}
	}
	return never // no "**", and no longer than dir: no file under dir has so few segments
}

// nameMatch reports whether the one-segment glob g matches the name n
// (taken literally, '*' included).
func nameMatch(g, n string) bool {
	c, err := vpath.Compile(g)
	return err == nil && c.Match(n)
}
