package ignore

import (
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		pats []string
		path string
		want bool
	}{
		{[]string{"*.log"}, "a.log", true},
		{[]string{"*.log"}, "dir/deep/a.log", true},
		{[]string{"*.log"}, "a.logx", false},
		{[]string{"/build"}, "build/x", true},
		{[]string{"/build"}, "src/build/x", false},
		{[]string{"build/"}, "build", false}, // a file named build
		{[]string{"build/"}, "src/build/x", true},
		{[]string{"doc/*.md"}, "doc/a.md", true},
		{[]string{"doc/*.md"}, "x/doc/a.md", false},
		{[]string{"doc/*.md"}, "doc/sub/a.md", false},
		{[]string{"doc/**/*.md"}, "doc/sub/deep/a.md", true},
		{[]string{"doc/**/*.md"}, "doc/a.md", true},
		{[]string{"**/node_modules"}, "a/node_modules/x.js", true},
		{[]string{"a/**"}, "a/b/c", true},
		{[]string{"*.txt", "!keep.txt"}, "keep.txt", false},
		{[]string{"*.txt", "!keep.txt"}, "drop.txt", true},
		{[]string{"dir/", "!dir/keep"}, "dir/keep", true}, // below an excluded directory
		{[]string{"# comment", ""}, "# comment", false},
		{[]string{`\#hash`}, "#hash", true},
		{[]string{`\!bang`}, "!bang", true},
		{[]string{"?.go"}, "a.go", true},
		{[]string{"[ab].go"}, "c.go", false},
		{[]string{".git"}, ".git/config", true},
		{[]string{"trailing  "}, "trailing", true},
	} {
		m, err := Compile(c.pats)
		if err != nil {
			t.Fatalf("%q: %v", c.pats, err)
		}
		if got := m.Excluded(c.path); got != c.want {
			t.Errorf("%q excludes %s = %v, want %v", c.pats, c.path, got, c.want)
		}
	}
}

func TestCompileRefuses(t *testing.T) {
	for _, p := range []string{"[", "a//b", "/", "!", strings.Repeat("a", MaxPattern+1)} {
		if _, err := Compile([]string{p}); err == nil {
			t.Errorf("%q compiled", p)
		}
	}
}

// FuzzMatch: a pattern compiles or is refused; matching never panics,
// and a pattern matches its own literal text when it has no special
// characters.
func FuzzMatch(f *testing.F) {
	for _, s := range []string{"*.log", "/a/**/b", "!x", "d/", "[a-", "**/**/**", `\#x`} {
		f.Add(s, "a/b/c.log")
	}
	f.Fuzz(func(t *testing.T, pat, p string) {
		m, err := Compile([]string{pat})
		if err != nil {
			return
		}
		m.Excluded(p)
		m.Match(p, true)
		lit := strings.TrimPrefix(pat, "/")
		if lit != "" && !strings.ContainsAny(pat, "*?[]\\!# ") && !strings.Contains(lit, "//") && !strings.HasSuffix(pat, "/") {
			if !m.Excluded(lit) {
				t.Fatalf("%q does not exclude %q", pat, lit)
			}
		}
	})
}
