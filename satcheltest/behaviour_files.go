package satcheltest

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/satchel-dev/satchel"
)

func (s *suite) pathRules(t *testing.T, _ *satchel.Store, ws *satchel.Workspace) {
	cases := []struct{ path, reason string }{
		{"", "must not be empty"},
		{strings.Repeat("a", 1025), "longer than 1024 bytes"},
		{"/etc/passwd", "must be relative (no leading /)"},
		{"a\x00b", "contains a control character"},
		{"a\x7fb", "contains a control character"},
		{"a\nb", "contains a control character"},
		{"a\xffb", "is not valid UTF-8"},
		{"a\\b", "contains a backslash"},
		{"a//b", "contains an empty segment"},
		{"a/", "contains an empty segment"},
		{"a/./b", "contains a . or .. segment"},
		{"../x", "contains a . or .. segment"},
		{"a/..", "contains a . or .. segment"},
		{"a/b.", "has a segment ending in a dot or a space"},
		{"a /b", "has a segment ending in a dot or a space"},
		{"CON", "uses the reserved device name CON"},
		{"dir/nul.txt", "uses the reserved device name nul"},
		{"Com1.tar.gz", "uses the reserved device name Com1"},
		{"lpt9", "uses the reserved device name lpt9"},
		// order: the first failing rule is reported
		{"/a\\b", "must be relative (no leading /)"},
		{"a\\b//c", "contains a backslash"},
		{"a//../b", "contains an empty segment"},
	}
	for _, c := range cases {
		want := fmt.Sprintf("invalid path %q: %s", c.path, c.reason)
		refused(t, "write "+c.path, ws.Write(bg, c.path, "x"), satchel.ErrInvalidPath, want)
		_, err := ws.Read(bg, c.path)
		refused(t, "read "+c.path, err, satchel.ErrInvalidPath, want)
		_, err = ws.Exists(bg, c.path)
		refused(t, "exists "+c.path, err, satchel.ErrInvalidPath, want)
		refused(t, "delete "+c.path, ws.Delete(bg, c.path), satchel.ErrInvalidPath, want)
		if !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("invalid path error does not match fs.ErrInvalid")
		}
	}
	for _, ok := range []string{"a1", "a/b/c.md", "console", "com10", "a.b/c", ".hidden", "x/.env", "日本/語.md", strings.Repeat("a", 1024)} {
		must(t, "write "+ok, ws.Write(bg, ok, "x"))
	}
	got, err := ws.Glob(bg, "**")
	must(t, "glob", err)
	equal(t, "files written", len(got), 9)
}

func (s *suite) pathCheckedFirst(t *testing.T, _ *satchel.Store, ws *satchel.Workspace) {
	// An invalid path is refused before anything is read: not "not found".
	_, err := ws.StrReplace(bg, "../x", "", "y", false)
	refused(t, "str_replace", err, satchel.ErrInvalidPath, `invalid path "../x": contains a . or .. segment`)
	// An empty anchor is refused before the file is read.
	_, err = ws.StrReplace(bg, "missing.md", "", "y", false)
	refused(t, "empty anchor on missing file", err, satchel.ErrInvalidArgument, "anchor must not be empty")
	h, _ := ws.History(bg, 0, 0)
	equal(t, "commits after refusals", len(h), 0)
}

func (s *suite) directories(t *testing.T, _ *satchel.Store, ws *satchel.Workspace) {
	write(t, ws, "a/b/c.md", "c", "a/d.md", "d")
	refused(t, "write over a directory", ws.Write(bg, "a/b", "x"), satchel.ErrIsDirectory, "a/b is a directory")
	refused(t, "write under a file", ws.Write(bg, "a/d.md/e", "x"), satchel.ErrExists, "cannot create a/d.md/e: a/d.md is a file")
	refused(t, "append under a file", ws.Append(bg, "a/d.md/e", "x"), satchel.ErrExists, "cannot create a/d.md/e: a/d.md is a file")
	ok, err := ws.Exists(bg, "a/b")
	must(t, "exists dir", err)
	equal(t, "exists(directory)", ok, false)
	refused(t, "delete dir", ws.Delete(bg, "a/b"), satchel.ErrIsDirectory, "a/b is a directory")
	refused(t, "move dir", ws.Move(bg, "a/b", "z"), satchel.ErrIsDirectory, "a/b is a directory")
	_, err = ws.Stat(bg, "a")
	refused(t, "stat dir", err, satchel.ErrIsDirectory, "a is a directory")
	_, err = ws.Read(bg, "a")
	refused(t, "read dir", err, satchel.ErrIsDirectory, "a is a directory")
	for _, under := range []string{"a", "a/"} {
		got, err := ws.List(bg, under, satchel.ListOptions{})
		must(t, "list", err)
		equalSlice(t, "list "+under, got, []string{"a/b/c.md", "a/d.md"})
	}
	got, err := ws.List(bg, "", satchel.ListOptions{})
	must(t, "list all", err)
	equalSlice(t, "list all", got, []string{"a/b/c.md", "a/d.md"})
	// "a" holds "a/x" but not "ab/x".
	write(t, ws, "ab/x", "x")
	got, _ = ws.List(bg, "a", satchel.ListOptions{})
	equalSlice(t, "list a (not ab)", got, []string{"a/b/c.md", "a/d.md"})
	// Once the last file under a directory goes, the path is free for a file.
	must(t, "delete", ws.Delete(bg, "a/b/c.md"))
	write(t, ws, "a/b", "now a file")
}

func (s *suite) writeReadExact(t *testing.T, _ *satchel.Store, ws *satchel.Workspace) {
	contents := []string{"", "x", "no newline", "crlf\r\nlines\r\n", "\xff\xfe binary \x00 bytes", strings.Repeat("é", 5000), strings.Repeat("line\n", 20000)}
	for i, c := range contents {
		p := fmt.Sprintf("f%d", i)
		must(t, "write", ws.Write(bg, p, c))
		got, err := ws.Read(bg, p)
		must(t, "read", err)
		if got != c {
			t.Errorf("read %s: %d bytes differ from the %d written", p, len(got), len(c))
		}
	}
	_, err := ws.Read(bg, "missing.md")
	refused(t, "read missing", err, satchel.ErrNotFound, "file not found: missing.md")
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("not found does not match fs.ErrNotExist")
	}
	must(t, "overwrite", ws.Write(bg, "f1", "y"))
	got, _ := ws.Read(bg, "f1")
	equal(t, "overwritten", got, "y")
	must(t, "append creates", ws.Append(bg, "new.log", "a"))
	must(t, "append", ws.Append(bg, "new.log", "b\n"))
	got, _ = ws.Read(bg, "new.log")
	equal(t, "appended", got, "ab\n")
	// Binary content is refused by line operations, not by write.
	_, err = ws.Read(bg, "f4", 1)
	refused(t, "bounded read of binary", err, satchel.ErrNotText, "")
}

func (s *suite) readBounds(t *testing.T, _ *satchel.Store, ws *satchel.Workspace) {
	write(t, ws, "f", "l1\nl2\r\nl3\nl4\nl5\n", "nonl", "a\nb\r", "empty", "")
	cases := []struct {
		path   string
		bounds []int
		want   string
		err    string
	}{
		{"f", []int{2, 3}, "l2\nl3", ""},
		{"f", []int{1}, "l1\nl2\nl3\nl4\nl5", ""},
		{"f", []int{4, 100}, "l4\nl5", ""}, // end clamps
		{"f", []int{6}, "", ""},            // start past the end
		{"f", []int{6, 2}, "", ""},         // start past the end wins over end < start
		{"f", []int{3, 3}, "l3", ""},
		{"f", []int{0}, "", "start must be at least 1"},
		{"f", []int{-1, 2}, "", "start must be at least 1"},
		{"f", []int{3, 2}, "", "end must not be before start"},
		{"nonl", []int{1}, "a\nb\r", ""}, // the last line keeps its \r
		{"nonl", []int{2, 2}, "b\r", ""},
		{"empty", []int{1}, "", ""},
	}
	for _, c := range cases {
		got, err := ws.Read(bg, c.path, c.bounds...)
		what := fmt.Sprintf("read %s %v", c.path, c.bounds)
		if c.err != "" {
			refused(t, what, err, satchel.ErrInvalidRange, c.err)
			continue
		}
		must(t, what, err)
		equal(t, what, got, c.want)
	}
	_, err := ws.ReadWith(bg, "f", satchel.ReadOptions{Bounds: satchel.Bounds{End: 2, HasEnd: true}})
	refused(t, "end without start", err, satchel.ErrInvalidRange, "")
	// A trailing newline adds no line.
	info, err := ws.Stat(bg, "f")
	must(t, "stat", err)
	equal(t, "lines", info.Lines, int64(5))
	info, _ = ws.Stat(bg, "nonl")
	equal(t, "lines without trailing newline", info.Lines, int64(2))
}

func (s *suite) readNumbered(t *testing.T, _ *satchel.Store, ws *satchel.Workspace) {
	var b strings.Builder
	for i := 1; i <= 100; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	write(t, ws, "f", b.String(), "small", "a\nb\n")
	got, err := ws.ReadNumbered(bg, "f", 95, 100)
	must(t, "numbered", err)
	equal(t, "95..100", got, " 95| line 95\n 96| line 96\n 97| line 97\n 98| line 98\n 99| line 99\n100| line 100")
	got, _ = ws.ReadNumbered(bg, "f", 8, 10)
	equal(t, "8..10 (width of the last number)", got, " 8| line 8\n 9| line 9\n10| line 10")
	got, _ = ws.ReadNumbered(bg, "f", 20, 21)
	equal(t, "absolute numbers", got, "20| line 20\n21| line 21")
	got, _ = ws.ReadNumbered(bg, "small")
	equal(t, "whole file", got, "1| a\n2| b")
	got, _ = ws.ReadNumbered(bg, "f", 101)
	equal(t, "past the end", got, "")
	_, err = ws.ReadNumbered(bg, "f", 0)
	refused(t, "numbered start 0", err, satchel.ErrInvalidRange, "start must be at least 1")
}

func (s *suite) readMaxChars(t *testing.T, _ *satchel.Store, ws *satchel.Workspace) {
	write(t, ws, "f", "short\n"+strings.Repeat("é", 1000)+"\nend\n")
	r, err := ws.ReadWith(bg, "f", satchel.ReadOptions{MaxChars: 100})
	must(t, "capped read", err)
	equal(t, "capped length in characters", len([]rune(r.Text)), 100)
	equal(t, "truncated", r.Truncated, true)
	equal(t, "next line", r.NextLine, 2)
	if !strings.Contains(r.Notice, "start_line=2") {
		t.Errorf("notice %q does not say how to continue", r.Notice)
	}
	r, err = ws.ReadWith(bg, "f", satchel.ReadOptions{MaxChars: 10000})
	must(t, "uncapped read", err)
	equal(t, "not truncated", r.Truncated, false)
}

func (s *suite) strReplace(t *testing.T, _ *satchel.Store, ws *satchel.Workspace) {
	write(t, ws, "a.md", "one two two three")
	_, err := ws.StrReplace(bg, "a.md", "", "x", false)
	refused(t, "empty anchor", err, satchel.ErrInvalidArgument, "anchor must not be empty")
	_, err = ws.StrReplace(bg, "a.md", "four", "x", false)
	refused(t, "absent", err, satchel.ErrAnchorNotFound, "anchor not found in a.md")
	_, err = ws.StrReplace(bg, "a.md", "two", "x", false)
	refused(t, "ambiguous", err, satchel.ErrAmbiguousAnchor, "anchor occurs 2 times in a.md, expected exactly one")
	var se *satchel.Error
	if errors.As(err, &se) && se.Count != 2 {
		t.Errorf("ambiguous anchor count %d, want 2", se.Count)
	}
	_, err = ws.StrReplace(bg, "missing.md", "x", "y", false)
	refused(t, "missing", err, satchel.ErrNotFound, "file not found: missing.md")
	n, err := ws.StrReplace(bg, "a.md", "one", "ONE", false)
	must(t, "unique", err)
	equal(t, "replaced", n, 1)
	n, err = ws.StrReplace(bg, "a.md", "two", "2", true)
	must(t, "replace all", err)
	equal(t, "replaced all", n, 2)
	got, _ := ws.Read(bg, "a.md")
	equal(t, "content", got, "ONE 2 2 three")
	h, _ := ws.History(bg, 0, 0)
	equal(t, "commits (refusals commit nothing)", len(h), 3)
}

func (s *suite) glob(t *testing.T, _ *satchel.Store, ws *satchel.Workspace) {
	write(t, ws, "notes/d07/a.md", "", "notes/d07/b.txt", "", "notes/d08/c.md", "", "notes/x.md", "", "top.md", "", "notes/d07/deep/e.md", "")
	cases := map[string][]string{
		"*.md":            {"top.md"},
		"notes/d07/*.md":  {"notes/d07/a.md"},
		"notes/**/*.md":   {"notes/d07/a.md", "notes/d07/deep/e.md", "notes/d08/c.md", "notes/x.md"},
		"**/*.md":         {"notes/d07/a.md", "notes/d07/deep/e.md", "notes/d08/c.md", "notes/x.md", "top.md"},
		"notes/*/*.md":    {"notes/d07/a.md", "notes/d08/c.md"},
		"notes/d0*/*":     {"notes/d07/a.md", "notes/d07/b.txt", "notes/d08/c.md"},
		"top.md":          {"top.md"},
		"missing.md":      {},
		"notes/**/e.md":   {"notes/d07/deep/e.md"},
		"**":              {"notes/d07/a.md", "notes/d07/b.txt", "notes/d07/deep/e.md", "notes/d08/c.md", "notes/x.md", "top.md"},
		"notes/d07/*":     {"notes/d07/a.md", "notes/d07/b.txt"},
		"*/d07/*.*":       {"notes/d07/a.md", "notes/d07/b.txt"},
		"notes/d07/de*/*": {"notes/d07/deep/e.md"},
	}
	for pattern, want := range cases {
		got, err := ws.Glob(bg, pattern)
		must(t, "glob "+pattern, err)
		equalSlice(t, "glob "+pattern, got, want)
	}
}

func (s *suite) globRefusals(t *testing.T, _ *satchel.Store, ws *satchel.Workspace) {
	cases := map[string]string{
		"":                        "must not be empty",
		strings.Repeat("a", 1025): "longer than 1024 bytes",
		"a\x01":                   "contains a control character",
		"a\\*":                    "pattern does not support backslash escapes",
		"***":                     "*** is not supported (use ** for any number of segments)",
		"a**/b":                   "** must be a whole path segment",
		"a?":                      "? is not supported (only * and ** are)",
		"[ab]":                    "character classes [...] are not supported (only * and ** are)",
		"{a,b}":                   "brace expansion {...} is not supported (only * and ** are)",
	}
	for pattern, reason := range cases {
		_, err := ws.Glob(bg, pattern)
		refused(t, "glob "+pattern, err, satchel.ErrInvalidPattern, fmt.Sprintf("invalid pattern %q: %s", pattern, reason))
	}
}

func (s *suite) list(t *testing.T, _ *satchel.Store, ws *satchel.Workspace) {
	write(t, ws, "d/a", "", "d/b", "", "d/c", "", "d/e/f", "", "x", "")
	got, err := ws.List(bg, "d", satchel.ListOptions{Limit: 2})
	must(t, "list", err)
	equalSlice(t, "limit", got, []string{"d/a", "d/b"})
	// accept is applied before limit: a refused file takes no place.
	got, _ = ws.List(bg, "d", satchel.ListOptions{Limit: 2, Accept: func(p string) bool { return p != "d/a" }})
	equalSlice(t, "accept before limit", got, []string{"d/b", "d/c"})
	got, _ = ws.List(bg, "d", satchel.ListOptions{Limit: 2, After: "d/b"})
	equalSlice(t, "after", got, []string{"d/c", "d/e/f"})
	got, _ = ws.List(bg, "", satchel.ListOptions{After: "d/e/f"})
	equalSlice(t, "after, whole workspace", got, []string{"x"})
	files, bytes, err := ws.Usage(bg)
	must(t, "usage", err)
	equal(t, "usage files", files, int64(5))
	equal(t, "usage bytes", bytes, int64(5*2+len(`"d/a""d/b""d/c""d/e/f""x"`)))
	got, _ = ws.List(bg, "nothing", satchel.ListOptions{})
	equalSlice(t, "empty dir", got, []string{})
	_, err = ws.List(bg, "../d", satchel.ListOptions{})
	refused(t, "invalid under", err, satchel.ErrInvalidPath, `invalid path "../d": contains a . or .. segment`)
}

func (s *suite) grep(t *testing.T, _ *satchel.Store, ws *satchel.Workspace) {
	write(t, ws,
		"src/a.go", "package a\n// TODO one\nfunc A() {}\r\n// TODO two\r\n",
		"src/b.md", "TODO in markdown\n",
		"src/sub/c.go", "x\nTODO deep",
		"other/d.go", "TODO elsewhere\n")
	r, err := ws.Grep(bg, "TODO", "src", satchel.GrepOptions{})
	must(t, "grep", err)
	want := []satchel.Match{
		{Path: "src/a.go", Line: 2, Text: "// TODO one"},
		{Path: "src/a.go", Line: 4, Text: "// TODO two"},
		{Path: "src/b.md", Line: 1, Text: "TODO in markdown"},
		{Path: "src/sub/c.go", Line: 2, Text: "TODO deep"},
	}
	if fmt.Sprint(r.Matches) != fmt.Sprint(want) {
		t.Errorf("grep: got %v, want %v", r.Matches, want)
	}
	// include without "/" matches names, with "/" paths relative to under.
	r, _ = ws.Grep(bg, "TODO", "src", satchel.GrepOptions{Include: "*.go"})
	equal(t, "include by name", fmt.Sprint(r.Matches), fmt.Sprint([]satchel.Match{want[0], want[1], want[3]}))
	r, _ = ws.Grep(bg, "TODO", "src", satchel.GrepOptions{Include: "sub/*.go"})
	equal(t, "include by relative path", len(r.Matches), 1)
	r, _ = ws.Grep(bg, "TODO", "", satchel.GrepOptions{Include: "*.go", Limit: 1, Accept: func(p string) bool { return p != "other/d.go" }})
	equal(t, "accept and limit", fmt.Sprint(r.Matches), "[{src/a.go 2 // TODO one}]")
	equal(t, "truncated by limit", r.Truncated, true)
	r, _ = ws.Grep(bg, `^func \w+\(\) \{\}$`, "", satchel.GrepOptions{})
	equal(t, "anchors per line, \\r stripped", len(r.Matches), 1)
	_, err = ws.Grep(bg, "a(", "", satchel.GrepOptions{})
	refused(t, "bad regex", err, satchel.ErrInvalidPattern, "")
	_, err = ws.Grep(bg, strings.Repeat("a", satchel.MaxRegexBytes+1), "", satchel.GrepOptions{})
	refused(t, "long regex", err, satchel.ErrInvalidPattern, "")
}

func (s *suite) existsDeleteMoveStat(t *testing.T, _ *satchel.Store, ws *satchel.Workspace) {
	write(t, ws, "a.md", "hello\nworld\n", "b.md", "b")
	ok, err := ws.Exists(bg, "a.md")
	must(t, "exists", err)
	equal(t, "exists file", ok, true)
	ok, _ = ws.Exists(bg, "zz.md")
	equal(t, "exists missing", ok, false)
	must(t, "delete missing is silent", ws.Delete(bg, "zz.md"))
	h, _ := ws.History(bg, 0, 0)
	n := len(h)
	refused(t, "move onto existing", ws.Move(bg, "a.md", "b.md"), satchel.ErrExists, "cannot move a.md to b.md: b.md exists (overwrite not requested)")
	refused(t, "move missing", ws.Move(bg, "zz.md", "c.md"), satchel.ErrNotFound, "file not found: zz.md")
	must(t, "move", ws.Move(bg, "a.md", "c/a.md"))
	got, _ := ws.Read(bg, "c/a.md")
	equal(t, "moved content", got, "hello\nworld\n")
	ok, _ = ws.Exists(bg, "a.md")
	equal(t, "source gone", ok, false)
	must(t, "move overwrite", ws.Move(bg, "c/a.md", "b.md", satchel.Overwrite()))
	got, _ = ws.Read(bg, "b.md")
	equal(t, "overwritten by move", got, "hello\nworld\n")
	info, err := ws.Stat(bg, "b.md")
	must(t, "stat", err)
	equal(t, "size", info.Size, int64(12))
	equal(t, "lines", info.Lines, int64(2))
	equal(t, "hash", info.Hash, satchel.Hash("hello\nworld\n"))
	if time.Since(info.ModTime) > time.Hour || info.ModTime.IsZero() {
		t.Errorf("modified time %v", info.ModTime)
	}
	_, err = ws.Stat(bg, "zz.md")
	refused(t, "stat missing", err, satchel.ErrNotFound, "file not found: zz.md")
	must(t, "delete", ws.Delete(bg, "b.md"))
	must(t, "delete again", ws.Delete(bg, "b.md"))
	h, _ = ws.History(bg, 0, 0)
	equal(t, "commits: two moves and one delete", len(h), n+3)
}

func (s *suite) preconditions(t *testing.T, _ *satchel.Store, ws *satchel.Workspace) {
	write(t, ws, "a.md", "v1")
	info, _ := ws.Stat(bg, "a.md")
	must(t, "write with the right hash", ws.Write(bg, "a.md", "v2", satchel.IfHash(info.Hash)))
	err := ws.Write(bg, "a.md", "v3", satchel.IfHash(info.Hash))
	refused(t, "stale write", err, satchel.ErrConflict, "")
	if err != nil && !strings.Contains(err.Error(), "a.md has changed") {
		t.Errorf("conflict message %q does not say the file changed", err)
	}
	_, err = ws.StrReplace(bg, "a.md", "v2", "v3", false, satchel.IfHash(info.Hash))
	refused(t, "stale edit", err, satchel.ErrConflict, "")
	refused(t, "stale delete", ws.Delete(bg, "a.md", satchel.IfHash(info.Hash)), satchel.ErrConflict, "")
	refused(t, "stale move", ws.Move(bg, "a.md", "b.md", satchel.IfHash(info.Hash)), satchel.ErrConflict, "")
	got, _ := ws.Read(bg, "a.md")
	equal(t, "unchanged by refused mutations", got, "v2")
	info, _ = ws.Stat(bg, "a.md")
	_, err = ws.StrReplace(bg, "a.md", "v2", "v3", false, satchel.IfHash(info.Hash))
	must(t, "fresh edit", err)
	refused(t, "precondition on a missing file", ws.Write(bg, "new.md", "x", satchel.IfHash(info.Hash)), satchel.ErrConflict, "")
}

func (s *suite) largeFiles(t *testing.T, _ *satchel.Store, ws *satchel.Workspace) {
	var b strings.Builder
	for i := 0; b.Len() < 3<<20; i++ {
		fmt.Fprintf(&b, "line %d of a large file, with some text to make it longer\n", i)
	}
	big := b.String()
	write(t, ws, "big.log", big)
	must(t, "append", ws.Append(bg, "big.log", "tail\n"))
	n, err := ws.StrReplace(bg, "big.log", "line 20000 of", "LINE 20000 OF", false)
	must(t, "edit", err)
	equal(t, "edited", n, 1)
	want := strings.Replace(big+"tail\n", "line 20000 of", "LINE 20000 OF", 1)
	got, _ := ws.Read(bg, "big.log")
	equal(t, "large file content", got == want, true)
	old, _ := ws.At(bg, "1")
	got, _ = old.Read(bg, "big.log")
	equal(t, "large file at commit 1", got == big, true)
	info, _ := ws.Stat(bg, "big.log")
	equal(t, "hash", info.Hash, satchel.Hash(want))
	equal(t, "lines", info.Lines, int64(strings.Count(want, "\n")))
}
