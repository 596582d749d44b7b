package filerules

import (
	"errors"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel/internal/errs"
)

func TestOf(t *testing.T) {
	r, err := Parse("secrets/**=none, notes/**=rw,**=read")
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]Access{
		"secrets/k": None, "secrets": None, "notes/a.md": RW, "notes/d/b.md": RW, "a.md": Read, "notesx/a": Read,
	} {
		if got := r.Of(path); got != want {
			t.Errorf("Of(%q) = %v, want %v", path, got, want)
		}
	}
	if got := Rules(nil).Of("x"); got != RW {
		t.Errorf("nil rules: %v, want rw", got)
	}
	if got := (Rules{}).Of("x"); got != None {
		t.Errorf("empty rules: %v, want none", got)
	}
	only, _ := Parse("notes/**=rw")
	if got := only.Of("a.md"); got != None {
		t.Errorf("unmatched path: %v, want none", got)
	}
	if r.String() != "secrets/**=none,notes/**=rw,**=read" {
		t.Errorf("String = %q", r.String())
	}
}

func TestParseErrors(t *testing.T) {
	for in, want := range map[string]string{
		"notes/**=rx": `invalid file rules "notes/**=rx": pair 1 "notes/**=rx": unknown access "rx" (want rw, read or none)`,
		"a=rw,b":      `invalid file rules "a=rw,b": pair 2 "b": want GLOB=ACCESS`,
		"a?=rw":       `invalid file rules "a?=rw": pair 1 "a?=rw": invalid pattern "a?": ? is not supported (only * and ** are)`,
		"":            `invalid file rules "": no GLOB=ACCESS pair`,
	} {
		_, err := Parse(in)
		if err == nil || err.Error() != want || !errors.Is(err, errs.ErrInvalidArgument) {
			t.Errorf("Parse(%q) = %v, want %s", in, err, want)
		}
	}
	for in, want := range map[string]string{
		`[["a","rw"],["b"]]`: "file rules [1]: must be a [GLOB, ACCESS] pair of two strings",
		`[["a","x"]]`:        `file rules [0]: unknown access "x" (want rw, read or none)`,
		`{}`:                 "file rules must be an array",
	} {
		_, err := ParseJSON([]byte(in))
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("ParseJSON(%s) = %v, want %s", in, err, want)
		}
	}
}

func TestJSONRoundTrip(t *testing.T) {
	r, _ := Parse("secrets/**=none,**=read")
	b, err := r.MarshalJSON()
	if err != nil || string(b) != `[["secrets/**","none"],["**","read"]]` {
		t.Fatalf("MarshalJSON = %s, %v", b, err)
	}
	var back Rules
	if err := back.UnmarshalJSON(b); err != nil || back.String() != r.String() || back.Of("secrets/x") != None {
		t.Fatalf("UnmarshalJSON = %v, %v", back, err)
	}
}

func TestShadowed(t *testing.T) {
	for in, want := range map[string]string{
		"**=read,notes/**=rw":                 "1<0",
		"notes/**=rw,notes/a.md=read":         "1<0",
		"notes/*.md=rw,notes/a.md=none":       "1<0",
		"*/*.md=rw,notes/*.md=none":           "1<0",
		"notes/a.md=rw,notes/**=read,**=none": "",
		"*.md=rw,**/*.md=none":                "",
		"a/**=rw,a=none":                      "1<0",
		"a/**/b=rw,a/b=read,a/x/y/b=read":     "1<0 2<0",
	} {
		r, err := Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range r.Shadowed() {
			got = append(got, strings.Join([]string{string(rune('0' + s.Index)), string(rune('0' + s.By))}, "<"))
		}
		if strings.Join(got, " ") != want {
			t.Errorf("Shadowed(%q) = %v, want %q", in, got, want)
		}
	}
}

func TestHidesNothing(t *testing.T) {
	for in, want := range map[string]bool{
		"notes/**=rw,**=read": true, "**=read": true, "secrets/**=none,**=read": false, "notes/**=rw": false, "**=none": false,
	} {
		r, _ := Parse(in)
		if r.HidesNothing() != want {
			t.Errorf("HidesNothing(%q) = %v", in, !want)
		}
	}
}

// refMatch is a brute-force glob matcher: segment by segment, "**" any
// number of segments, "*" any run of characters within a segment.
func refMatch(glob, path string) bool {
	return refSegs(strings.Split(glob, "/"), strings.Split(path, "/"))
}

func refSegs(g, p []string) bool {
	if len(g) == 0 {
		return len(p) == 0
	}
	if g[0] == "**" {
		for k := 0; k <= len(p); k++ {
			if refSegs(g[1:], p[k:]) {
				return true
			}
		}
		return false
	}
	return len(p) > 0 && refName(g[0], p[0]) && refSegs(g[1:], p[1:])
}

func refName(g, n string) bool {
	if g == "" {
		return n == ""
	}
	if g[0] == '*' {
		for k := 0; k <= len(n); k++ {
			if refName(g[1:], n[k:]) {
				return true
			}
		}
		return false
	}
	return n != "" && n[0] == g[0] && refName(g[1:], n[1:])
}

// refOf is the first-match rule, written plainly.
func refOf(pairs [][2]string, path string) Access {
	for _, p := range pairs {
		if refMatch(p[0], path) {
			a, _ := ParseAccess(p[1])
			return a
		}
	}
	return None
}

// FuzzRules checks the evaluator against the brute-force reference, and
// that Shadowed never calls a live pair dead.
func FuzzRules(f *testing.F) {
	f.Add("secrets/**=none,notes/**=rw,**=read", "notes/a.md")
	f.Add("*.md=rw,**/*.md=read", "a/b.md")
	f.Add("a/**/b=rw,a/b=none,**=read", "a/b")
	f.Add("a*b*c/**=read,**=none", "abxc/d")
	f.Add("**/x=rw", "x")
	f.Fuzz(func(t *testing.T, spec, path string) {
		r, err := Parse(spec)
		if err != nil {
			return
		}
		if strings.Count(spec, "**") > 6 || len(path) > 64 || strings.Count(path, "/") > 8 {
			return // keep the reference's backtracking small
		}
		pairs := make([][2]string, len(r))
		for i, p := range r {
			pairs[i] = [2]string{p.Glob, p.Access.String()}
		}
		valid := path != "" && !strings.HasPrefix(path, "/") && !strings.HasSuffix(path, "/") && !strings.Contains(path, "//")
		if !valid {
			return
		}
		if got, want := r.Of(path), refOf(pairs, path); got != want {
			t.Fatalf("%q: Of(%q) = %v, reference %v", spec, path, got, want)
		}
		for _, s := range r.Shadowed() {
			if refMatch(r[s.Index].Glob, path) && !refMatch(r[s.By].Glob, path) {
				t.Fatalf("%q: pair %d called dead (by %d) but alone matches %q", spec, s.Index, s.By, path)
			}
		}
		if r.HidesNothing() && r.Of(path) == None {
			t.Fatalf("%q: HidesNothing but %q is hidden", spec, path)
		}
	})
}

func TestForDir(t *testing.T) {
	r, _ := Parse("secrets/**=none,private/**=none,*.lock=read,tmp/**/*.bak=read,**/.env=none,notes/*.md=read,**=rw")
	d := r.ForDir("notes/d01")
	if len(d.Maybe) != 1 || d.Maybe[0].Glob != "**/.env" || d.Rest != RW {
		t.Errorf("ForDir(notes/d01) = %+v", d)
	}
	d = r.ForDir("secrets/x")
	if len(d.Maybe) != 0 || d.Rest != None {
		t.Errorf("ForDir(secrets/x) = %+v", d)
	}
	d = r.ForDir("notes")
	if len(d.Maybe) != 2 || d.Rest != RW {
		t.Errorf("ForDir(notes) = %+v", d)
	}
}

// FuzzForDir checks the rules of a directory against the rules
// themselves for a file under it.
func FuzzForDir(f *testing.F) {
	f.Add("secrets/**=none,notes/*.md=read,**/.env=none,**=rw", "notes/a.md")
	f.Add("a/*/b/**=read,a/x*=none,*=rw", "a/xy/b/c")
	f.Add("**/x/*=rw,a/**=none", "a/x/y")
	f.Fuzz(func(t *testing.T, spec, path string) {
		r, err := Parse(spec)
		if err != nil || len(path) > 64 || strings.Count(path, "/") > 8 || strings.Count(spec, "**") > 6 {
			return
		}
		if path == "" || strings.HasPrefix(path, "/") || strings.HasSuffix(path, "/") || strings.Contains(path, "//") {
			return
		}
		for i := 0; i < len(path); i++ {
			if path[i] != '/' {
				continue
			}
			d := r.ForDir(path[:i])
			if got, want := d.Of(path), r.Of(path); got != want {
				t.Fatalf("%q: ForDir(%q).Of(%q) = %v, Of = %v", spec, path[:i], path, got, want)
			}
		}
		root := r.ForDir("")
		if got, want := root.Of(path), r.Of(path); got != want {
			t.Fatalf("%q: ForDir(\"\").Of(%q) = %v, Of = %v", spec, path, got, want)
		}
	})
}
