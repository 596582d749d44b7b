package vpath

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel/internal/errs"
)

func TestCompileRefusals(t *testing.T) {
	tests := []struct {
		pattern, reason string
	}{
		{"", "must not be empty"},
		{strings.Repeat("*", 1025), "longer than 1024 bytes"},
		{"/a/*", "must be relative (no leading /)"},
		{"/a\\*", "must be relative (no leading /)"},
		{"a\x00*", "contains a control character"},
		{"a\x7f", "contains a control character"},
		{"*\n", "contains a control character"},
		{"*\xff", "is not valid UTF-8"},
		{"a\\*", "pattern does not support backslash escapes"},
		{"a\\?", "pattern does not support backslash escapes"},
		{"a//*", "contains an empty segment"},
		{"a/*/", "contains an empty segment"},
		{"a//?", "contains an empty segment"},
		{"***", "*** is not supported (use ** for any number of segments)"},
		{"a/***/b", "*** is not supported (use ** for any number of segments)"},
		{"a****", "*** is not supported (use ** for any number of segments)"},
		{"a**/***", "*** is not supported (use ** for any number of segments)"},
		{"**.md", "** must be a whole path segment"},
		{"a/b**", "** must be a whole path segment"},
		{"a/**b/c", "** must be a whole path segment"},
		{"*a**", "** must be a whole path segment"},
		{"**/x**/?", "** must be a whole path segment"},
		{"a?.md", "? is not supported (only * and ** are)"},
		{"?/[a]", "? is not supported (only * and ** are)"},
		{"[ab].md", "character classes [...] are not supported (only * and ** are)"},
		{"a]", "character classes [...] are not supported (only * and ** are)"},
		{"[a]/{b}", "character classes [...] are not supported (only * and ** are)"},
		{"*.{md,txt}", "brace expansion {...} is not supported (only * and ** are)"},
		{"a}", "brace expansion {...} is not supported (only * and ** are)"},
	}
	for _, tt := range tests {
		g, err := Compile(tt.pattern)
		want := fmt.Sprintf("invalid pattern %q: %s", tt.pattern, tt.reason)
		if err == nil || err.Error() != want || !errors.Is(err, errs.ErrInvalidPattern) {
			t.Errorf("Compile(%q) = %v, %v; want error %q", tt.pattern, g, err, want)
		}
	}
}

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern string
		yes, no []string
	}{
		{"a.md", []string{"a.md"}, []string{"b.md", "x/a.md", "a.mdx", "a"}},
		{"a/b.md", []string{"a/b.md"}, []string{"a/b", "b.md", "a/c/b.md"}},
		{"*", []string{"a", "a.md", ".hidden"}, []string{"a/b"}},
		{"*.md", []string{"a.md", ".md", "x.y.md"}, []string{"a/b.md", "a.mdx", "md"}},
		{"a*", []string{"a", "ab", "a.md"}, []string{"ba", "a/b"}},
		{"*a", []string{"a", "ba"}, []string{"ab"}},
		{"a*a", []string{"aa", "aba", "aaa"}, []string{"a", "ab"}},
		{"*a*b*c*", []string{"abc", "xaxbxcx", "cbaabc"}, []string{"acb", "cba", "ab/c"}},
		{"notes/d07/*.md", []string{"notes/d07/n1.md", "notes/d07/.md"},
			[]string{"notes/d07/x/n1.md", "notes/d07.md", "notes/d070/n1.md", "notes/d07/n1.txt"}},
		{"notes/*/*.md", []string{"notes/a/b.md"}, []string{"notes/b.md", "notes/a/b/c.md"}},
		{"**", []string{"a", "a/b", "a/b/c"}, nil},
		{"**/*.md", []string{"a.md", "x/a.md", "x/y/z/a.md"}, []string{"a.txt", "x/a.md/y"}},
		{"notes/**/*.md", []string{"notes/a.md", "notes/x/a.md", "notes/x/y/a.md"},
			[]string{"a.md", "notesx/a.md", "other/notes/a.md", "notes/a.txt"}},
		{"a/**", []string{"a", "a/b", "a/b/c"}, []string{"b", "ab", "ab/c"}},
		{"a/**/b", []string{"a/b", "a/x/b", "a/x/y/b"}, []string{"a/b/c", "b", "a/xb"}},
		{"**/b/**", []string{"b", "b/c", "a/b", "a/b/c", "x/y/b/z/w"}, []string{"ab", "a/bc/d"}},
		{"**/**", []string{"a", "a/b"}, nil},
		{"a/**/**/b", []string{"a/b", "a/x/b", "a/x/y/b"}, []string{"a", "b"}},
		{"**/a/*/b", []string{"a/x/b", "q/a/x/b", "a/a/x/b"}, []string{"a/b", "a/x/y/b"}},
		{"*/**/*", []string{"a/b", "a/b/c"}, []string{"a"}},
		{"ü*/日*", []string{"über/日本"}, []string{"uber/日本"}},
	}
	for _, tt := range tests {
		g, err := Compile(tt.pattern)
		if err != nil {
			t.Fatalf("Compile(%q): %v", tt.pattern, err)
		}
		if g.String() != tt.pattern {
			t.Errorf("String() = %q, want %q", g.String(), tt.pattern)
		}
		for _, p := range tt.yes {
			if !g.Match(p) {
				t.Errorf("%q.Match(%q) = false, want true", tt.pattern, p)
			}
			if !strings.HasPrefix(p, g.Prefix()) {
				t.Errorf("%q matches %q, which lacks its prefix %q", tt.pattern, p, g.Prefix())
			}
		}
		for _, p := range tt.no {
			if g.Match(p) {
				t.Errorf("%q.Match(%q) = true, want false", tt.pattern, p)
			}
		}
	}
}

func TestPrefixAndLiteral(t *testing.T) {
	tests := []struct {
		pattern, prefix string
		literal         bool
	}{
		{"notes/d07/*.md", "notes/d07/", false},
		{"notes/**/*.md", "notes/", false},
		{"*.md", "", false},
		{"a/b.md", "a/", true},
		{"a.md", "", true},
		{"a/b/c", "a/b/", true},
		{"a/*/c/d", "a/", false},
		{"**/x", "", false},
		{"a/b/**", "a/", false},
		{"a/b/**/**", "a/", false},
		{"a/**", "", false},
		{"a/b/**/c", "a/b/", false},
		{"a/b/**/*", "a/b/", false},
	}
	for _, tt := range tests {
		g := MustCompile(tt.pattern)
		if got := g.Prefix(); got != tt.prefix {
			t.Errorf("%q.Prefix() = %q, want %q", tt.pattern, got, tt.prefix)
		}
		lit, ok := g.Literal()
		if ok != tt.literal || (ok && lit != tt.pattern) {
			t.Errorf("%q.Literal() = %q, %v; want %v", tt.pattern, lit, ok, tt.literal)
		}
	}
}

func TestIncludeMatch(t *testing.T) {
	tests := []struct {
		include, under, path string
		want                 bool
	}{
		{"*.go", "", "a/b/c.go", true},
		{"*.go", "a", "a/b/c.go", true},
		{"*.go", "", "c.go", true},
		{"*.go", "", "a/c.go.txt", false},
		{"c.go", "", "x/c.go", true},
		{"b/*.go", "a", "a/b/c.go", true},
		{"b/*.go", "", "a/b/c.go", false},
		{"a/b/*.go", "", "a/b/c.go", true},
		{"**/c.go", "a", "a/b/c.go", true},
		{"**/c.go", "a", "x/b/c.go", false},
		{"b/*.go", "a/", "a/b/c.go", true},
		{"b/**", "a", "a/b/x/y", true},
		{"**", "a", "a/b/x/y", true},
	}
	for _, tt := range tests {
		if got := IncludeMatch(MustCompile(tt.include), tt.under, tt.path); got != tt.want {
			t.Errorf("IncludeMatch(%q, %q, %q) = %v, want %v", tt.include, tt.under, tt.path, got, tt.want)
		}
	}
}

// TestPathological runs patterns that make a backtracking matcher take
// exponential time; here each is one pass over the path.
func TestPathological(t *testing.T) {
	seg := strings.Repeat("a", 1000)
	segs := strings.TrimSuffix(strings.Repeat("a/", 500), "/")
	tests := []struct {
		pattern, path string
	}{
		{"*a*a*a*a*a*a*a*b", seg},
		{"*a*a*a*a*a*a*a*b*", seg},
		{"*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*ab*a", seg},
		{"**/**/**/**/**/**/**/**/**/**/b", segs},
		{strings.Repeat("**/a/", 100) + "b", segs},
		{strings.Repeat("**/*a*/", 80) + "b", segs},
	}
	for _, tt := range tests {
		g := MustCompile(tt.pattern)
		for range 100 {
			if g.Match(tt.path) {
				t.Fatalf("%q matched", tt.pattern)
			}
		}
	}
}

func TestMatchAllocs(t *testing.T) {
	for _, p := range []string{"notes/**/*.md", "notes/d07/*.md", "a/b.md", "**/*a*b*/**/c"} {
		g := MustCompile(p)
		if n := testing.AllocsPerRun(100, func() { g.Match("notes/d07/x/ab/y/n0042.md") }); n != 0 {
			t.Errorf("%q.Match allocates %v times", p, n)
		}
	}
}

// refMatch is a plain recursive glob matcher, exponential at worst but
// memoized, to check Match against.
func refMatch(pattern, path string) bool {
	ps, ss := strings.Split(pattern, "/"), strings.Split(path, "/")
	memo := map[[2]int]bool{}
	var segs func(i, j int) bool
	segs = func(i, j int) bool {
		key := [2]int{i, j}
		if v, ok := memo[key]; ok {
			return v
		}
		var ok bool
		switch {
		case i == len(ps):
			ok = j == len(ss)
		case ps[i] == "**":
			ok = segs(i+1, j) || (j < len(ss) && segs(i, j+1))
		default:
			ok = j < len(ss) && refSegment(ps[i], ss[j]) && segs(i+1, j+1)
		}
		memo[key] = ok
		return ok
	}
	return segs(0, 0)
}

func refSegment(p, s string) bool {
	memo := map[[2]int]bool{}
	var m func(i, j int) bool
	m = func(i, j int) bool {
		key := [2]int{i, j}
		if v, ok := memo[key]; ok {
			return v
		}
		var ok bool
		switch {
		case i == len(p):
			ok = j == len(s)
		case p[i] == '*':
			ok = m(i+1, j) || (j < len(s) && m(i, j+1))
		default:
			ok = j < len(s) && p[i] == s[j] && m(i+1, j+1)
		}
		memo[key] = ok
		return ok
	}
	return m(0, 0)
}

func FuzzGlob(f *testing.F) {
	seeds := [][2]string{
		{"notes/**/*.md", "notes/a/b.md"},
		{"notes/d07/*.md", "notes/d07/x.md"},
		{"**", "a/b"},
		{"a/**", "a"},
		{"**/b/**", "a/b/c"},
		{"*a*b*", "xaybz"},
		{"a*a", "a"},
		{"*/**/*", "a/b"},
		{"a/b/**/**", "a/b"},
		{"[a]", "a"},
		{"a/*/c", "a//c"},
		{"../*", "a"},
		{"**/../*", "a/b"},
		{"a/./*", "a/b"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, path string) {
		g, err := Compile(pattern)
		if err == nil {
			for _, seg := range strings.Split(pattern, "/") {
				if seg == "." || seg == ".." {
					t.Fatalf("Compile(%q) accepted a dot segment", pattern)
				}
			}
		}
		if err != nil {
			if !errors.Is(err, errs.ErrInvalidPattern) ||
				!strings.HasPrefix(err.Error(), fmt.Sprintf("invalid pattern %q: ", pattern)) {
				t.Fatalf("Compile(%q): bad error %v", pattern, err)
			}
			return
		}
		got := g.Match(path)
		if want := refMatch(pattern, path); got != want {
			t.Fatalf("%q.Match(%q) = %v, want %v", pattern, path, got, want)
		}
		if got && !strings.HasPrefix(path, g.Prefix()) {
			t.Fatalf("%q matches %q, which lacks its prefix %q", pattern, path, g.Prefix())
		}
		if p := g.Prefix(); p != "" && !strings.HasSuffix(p, "/") {
			t.Fatalf("%q.Prefix() = %q, not ending in /", pattern, p)
		}
		if lit, ok := g.Literal(); ok && got != (path == lit) {
			t.Fatalf("literal %q.Match(%q) = %v", pattern, path, got)
		}
	})
}

func BenchmarkMatch(b *testing.B) {
	paths := make([]string, 0, 1000)
	for i := range 1000 {
		paths = append(paths, fmt.Sprintf("notes/d%02d/n%04d.md", i%100, i))
	}
	for _, p := range []string{"notes/d07/*.md", "notes/**/*.md", "**/n00*7.md", "notes/d07/n0007.md"} {
		g := MustCompile(p)
		b.Run(p, func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			for i := 0; b.Loop(); i++ {
				if g.Match(paths[i%len(paths)]) {
					n++
				}
			}
			_ = n
		})
	}
}

// `../*` and `**/../*` used to compile and silently match nothing: a dot
// segment is refused like every other impossible pattern.
func TestAttackGlobDotSegments(t *testing.T) {
	for _, p := range []string{"../*", "**/../*", "a/./b", "..", ".", "a/.."} {
		_, err := Compile(p)
		if !errors.Is(err, errs.ErrInvalidPattern) || err.Error() != fmt.Sprintf("invalid pattern %q: %s", p, reasonDotPattern) {
			t.Errorf("Compile(%q) = %v", p, err)
		}
	}
	for _, p := range []string{".hidden/*", "a/..b", "*.md"} {
		if _, err := Compile(p); err != nil {
			t.Errorf("Compile(%q) = %v", p, err)
		}
	}
}
