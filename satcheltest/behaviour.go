// Package satcheltest is satchel's conformance suite: run it on a backend
// to prove that satchel behaves on it exactly as DESIGN.md says. It is
// exported (like testing/fstest) so that the authors of a backend of their
// own can prove theirs:
//
//	func TestConformance(t *testing.T) {
//		satcheltest.Run(t, func(t *testing.T) backend.Backend { return mybackend.New() })
//	}
//
// Run it from an external test package (package mybackend_test): the suite
// imports package satchel, which links satchel's own backends.
package satcheltest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/backendtest"
	"github.com/satchel-dev/satchel/internal/backendof"
)

// Run runs the whole conformance suite: the backend contract
// (backendtest.RunContract)
// and every behaviour of DESIGN.md through the satchel API on top of the
// backend (RunBehaviour, RunDocuments, RunQuotas). Then, for each
// optional capability of the contract that the backend offers and satchel
// has a fallback for, it runs the suite again with that capability
// hidden (Hide), in subtests named No<Capability>, side by side: the
// results must not differ. A backend is done when it passes.
func Run(t *testing.T, open func(t *testing.T) backend.Backend) {
	runWhole(t, open)
	runHidden(t, open)
}

// runWhole runs every part of the suite once.
func runWhole(t *testing.T, open func(t *testing.T) backend.Backend) {
	t.Run("Contract", func(t *testing.T) { backendtest.RunContract(t, open) })
	t.Run("Behaviour", func(t *testing.T) { RunBehaviour(t, open) })
	t.Run("Documents", func(t *testing.T) { RunDocuments(t, open) })
	t.Run("Quotas", func(t *testing.T) { RunQuotas(t, open) })
}

// RunBehaviour checks every file behaviour of DESIGN §2 (paths, lines,
// operations, bounds, fanout, versions) through the satchel API on a store
// over a fresh backend from open for each subtest.
func RunBehaviour(t *testing.T, open func(t *testing.T) backend.Backend) {
	s := &suite{open: open}
	tests := []struct {
		name string
		fn   func(t *testing.T, st *satchel.Store, ws *satchel.Workspace)
	}{
		{"PathRules", s.pathRules},
		{"PathCheckedBeforeAnything", s.pathCheckedFirst},
		{"Directories", s.directories},
		{"WriteReadExact", s.writeReadExact},
		{"ReadBounds", s.readBounds},
		{"ReadNumbered", s.readNumbered},
		{"ReadMaxChars", s.readMaxChars},
		{"StrReplace", s.strReplace},
		{"Glob", s.glob},
		{"GlobRefusals", s.globRefusals},
		{"List", s.list},
		{"Grep", s.grep},
		{"ExistsDeleteMoveStat", s.existsDeleteMoveStat},
		{"Preconditions", s.preconditions},
		{"Bounds", s.bounds},
		{"BoundsConcurrent", s.boundsConcurrent},
		{"ConcurrentAppends", s.concurrentAppends},
		{"Batch", s.batch},
		{"Fanout", s.fanout},
		{"Versions", s.versions},
		{"ForkAndRestore", s.forkAndRestore},
		{"Retention", s.retention},
		{"GC", s.gc},
		{"ThreadsAndScopes", s.threadsAndScopes},
		{"LargeFiles", s.largeFiles},
		{"TwoStoresOneDatabase", s.twoStores},
		{"ScopesUsage", s.scopesUsage},
		{"Purge", s.purge},
		{"Archive", s.archive},
		{"DefaultRetention", s.defaultRetention},
		{"DeleteThreadStorage", s.deleteThreadStorage},
		{"IdempotencyKeys", s.idempotencyKeys},
		{"IdempotencyKeysPerThread", s.idempotencyKeysPerThread},
		{"StaleWrites", s.staleWrites},
		{"StaleWarn", s.staleWarn},
		{"StaleRace", s.staleRace},
		{"StaleFanout", s.staleFanout},
		{"StaleAppends", s.staleAppends},
		{"ThreadRefs", s.threadRefs},
		{"Merge", s.merge},
		{"MergeRacing", s.mergeRacing},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each behaviour has a backend of its own
			st := satchel.New(s.open(t))
			t.Cleanup(func() { st.Close() })
			ws, err := st.Workspace(context.Background(), "default", "main")
			if err != nil {
				t.Fatal(err)
			}
			tc.fn(t, st, ws)
		})
	}
}

type suite struct {
	open func(t *testing.T) backend.Backend
}

var bg = context.Background()

// refused checks that err is of kind and has exactly msg.
func refused(t *testing.T, what string, err error, kind error, msg string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: succeeded, want %q", what, msg)
		return
	}
	if !errors.Is(err, kind) {
		t.Errorf("%s: error %q is not of kind %v", what, err, kind)
	}
	if msg != "" && err.Error() != msg {
		t.Errorf("%s: error %q, want %q", what, err, msg)
	}
}

func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func write(t *testing.T, ws *satchel.Workspace, files ...string) {
	t.Helper()
	for i := 0; i+1 < len(files); i += 2 {
		must(t, "write "+files[i], ws.Write(bg, files[i], files[i+1]))
	}
}

func equal[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s: got %#v, want %#v", what, got, want)
	}
}

func equalSlice(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\x00") != strings.Join(want, "\x00") || len(got) != len(want) {
		t.Errorf("%s: got %q, want %q", what, got, want)
	}
}

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

func (s *suite) bounds(t *testing.T, st *satchel.Store, _ *satchel.Workspace) {
	// Bytes are paths and contents as JSON strings: "a" is 3, "x\"y" is 6.
	must(t, "limits", st.SetLimits(bg, "default", "b", satchel.Limits{MaxBytes: 20, MaxFiles: 2, MaxFileBytes: 8}))
	ws, err := st.Workspace(bg, "default", "b")
	must(t, "workspace", err)
	must(t, "fits", ws.Write(bg, "a", "x\"y")) // 3 + 6 = 9
	err = ws.Write(bg, "b", "0123456789")
	refused(t, "per-file", err, satchel.ErrLimitExceeded, "limit exceeded: b would be 10 B, over the per-file limit of 8 B")
	must(t, "small file", ws.Write(bg, "b", "\n\n")) // 3 + 6: 18 in all
	refused(t, "maxFiles", ws.Write(bg, "c", ""), satchel.ErrLimitExceeded, "limit exceeded: the workspace would hold 3 files, over maxFiles 2")
	must(t, "exactly maxBytes", ws.Write(bg, "b", "\n\n\n")) // 3 + 8: 20 in all
	refused(t, "maxBytes", ws.Write(bg, "b", "\n\n\n\n"), satchel.ErrLimitExceeded, "limit exceeded: the workspace would hold 22 B, over maxBytes 20 B")
	refused(t, "maxBytes by append", ws.Append(bg, "b", "x"), satchel.ErrLimitExceeded, "limit exceeded: the workspace would hold 21 B, over maxBytes 20 B")
	got, _ := ws.Read(bg, "b")
	equal(t, "refused whole", got, "\n\n\n")
	must(t, "invalid UTF-8 counts as \\ufffd", ws.Write(bg, "b", "\xff")) // 3 + 8: 20
	refused(t, "rename grows the path", ws.Move(bg, "b", "bb"), satchel.ErrLimitExceeded, "limit exceeded: the workspace would hold 21 B, over maxBytes 20 B")
	// Other threads keep the defaults.
	other, _ := st.Workspace(bg, "default", "other")
	ol, err := other.Limits(bg)
	must(t, "limits", err)
	equal(t, "default maxFiles", ol.MaxFiles, int64(satchel.DefaultMaxFiles))
}

func (s *suite) boundsConcurrent(t *testing.T, st *satchel.Store, _ *satchel.Workspace) {
	must(t, "limits", st.SetLimits(bg, "default", "c", satchel.Limits{MaxFiles: 10}))
	var wg sync.WaitGroup
	var mu sync.Mutex
	okCount := 0
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ws, err := st.Workspace(bg, "default", "c")
			if err != nil {
				t.Error(err)
				return
			}
			for i := 0; i < 10; i++ {
				err := ws.Write(bg, fmt.Sprintf("g%d/f%d", g, i), "x")
				if err == nil {
					mu.Lock()
					okCount++
					mu.Unlock()
				} else if !errors.Is(err, satchel.ErrLimitExceeded) {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	ws, _ := st.Workspace(bg, "default", "c")
	files, _ := ws.Glob(bg, "**")
	equal(t, "files under a concurrent maxFiles", len(files), 10)
	equal(t, "successful writes", okCount, 10)
}

func (s *suite) concurrentAppends(t *testing.T, _ *satchel.Store, ws *satchel.Workspace) {
	const goroutines, each = 8, 40
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if err := ws.Append(bg, "log.txt", fmt.Sprintf("g%d-%d\n", g, i)); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	got, _ := ws.Read(bg, "log.txt")
	seen := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
		seen[l] = true
	}
	equal(t, "distinct lines", len(seen), goroutines*each)
	h, _ := ws.History(bg, 0, 0)
	equal(t, "one commit per append", len(h), goroutines*each)
}

func (s *suite) batch(t *testing.T, _ *satchel.Store, ws *satchel.Workspace) {
	err := ws.Batch(bg, func(ctx context.Context, b *satchel.Batch) error {
		if err := b.Write(ctx, "a.md", "one"); err != nil {
			return err
		}
		if _, err := b.StrReplace(ctx, "a.md", "one", "two", false); err != nil {
			return err
		}
		got, err := b.Read(ctx, "a.md")
		if err != nil || got != "two" {
			return fmt.Errorf("batch sees its own writes: %q %v", got, err)
		}
		return b.Append(ctx, "log", "x")
	})
	must(t, "batch", err)
	h, _ := ws.History(bg, 0, 0)
	equal(t, "one commit", len(h), 1)
	// Directories within a batch see the batch's own files.
	err = ws.Batch(bg, func(ctx context.Context, b *satchel.Batch) error {
		if err := b.Write(ctx, "dir/x", "x"); err != nil {
			return err
		}
		if err := b.Write(ctx, "dir", "y"); err == nil || err.Error() != "dir is a directory" {
			return fmt.Errorf("write over a directory made in the batch: %v", err)
		}
		if err := b.Delete(ctx, "dir/x"); err != nil {
			return err
		}
		return b.Write(ctx, "dir", "now a file")
	})
	must(t, "directories in a batch", err)
	got, _ := ws.Read(bg, "dir")
	equal(t, "file where the batch emptied a directory", got, "now a file")
	// A batch that fails commits nothing.
	err = ws.Batch(bg, func(ctx context.Context, b *satchel.Batch) error {
		if err := b.Write(ctx, "b.md", "x"); err != nil {
			return err
		}
		_, err := b.StrReplace(ctx, "a.md", "absent", "y", false)
		return err
	})
	refused(t, "failed batch", err, satchel.ErrAnchorNotFound, "anchor not found in a.md")
	ok, _ := ws.Exists(bg, "b.md")
	equal(t, "nothing half-written", ok, false)
}

func (s *suite) fanout(t *testing.T, _ *satchel.Store, ws *satchel.Workspace) {
	raceMsg := "write-write race on p.md: another arm of the same fanout already wrote it"
	// Whatever the order, a write-write race is reported to the later arm.
	for _, order := range []int{0, 1} {
		first := make(chan struct{})
		var later error
		err := ws.Fanout(bg,
			func(ctx context.Context, a *satchel.Workspace) error {
				if order == 1 {
					<-first
				}
				err := a.Write(ctx, "p.md", "arm 1")
				if order == 0 {
					close(first)
				} else {
					later = err
				}
				return err
			},
			func(ctx context.Context, a *satchel.Workspace) error {
				if order == 0 {
					<-first
				}
				err := a.Write(ctx, "p.md", "arm 2")
				if order == 1 {
					close(first)
				} else {
					later = err
				}
				return err
			})
		refused(t, "fanout race", err, satchel.ErrWriteRace, raceMsg)
		refused(t, "later arm", later, satchel.ErrWriteRace, raceMsg)
		got, _ := ws.Read(bg, "p.md")
		if want := fmt.Sprintf("arm %d", order+1); got != want {
			t.Errorf("the first arm's write stands: got %q, want %q", got, want)
		}
	}
	// Append and write of one path race too.
	first := make(chan struct{})
	err := ws.Fanout(bg,
		func(ctx context.Context, a *satchel.Workspace) error {
			defer close(first)
			return a.Append(ctx, "p.md", "x")
		},
		func(ctx context.Context, a *satchel.Workspace) error {
			<-first
			_, err := a.StrReplace(ctx, "p.md", "arm", "ARM", true)
			return err
		})
	refused(t, "append then edit", err, satchel.ErrWriteRace, raceMsg)
	// Concurrent appends are legal; an arm may rewrite its own paths; a
	// later fanout starts a fresh record.
	arms := make([]func(context.Context, *satchel.Workspace) error, 8)
	for i := range arms {
		arms[i] = func(ctx context.Context, a *satchel.Workspace) error {
			for j := 0; j < 5; j++ {
				if err := a.Append(ctx, "shared.log", fmt.Sprintf("%d.%d\n", i, j)); err != nil {
					return err
				}
			}
			own := fmt.Sprintf("own/%d.md", i)
			if err := a.Write(ctx, own, "1"); err != nil {
				return err
			}
			if err := a.Write(ctx, own, "2"); err != nil {
				return err
			}
			return a.Delete(ctx, own)
		}
	}
	must(t, "legal fanout", ws.Fanout(bg, arms...))
	got, _ := ws.Read(bg, "shared.log")
	equal(t, "appends from every arm", strings.Count(got, "\n"), 40)
	must(t, "fresh record", ws.Fanout(bg, func(ctx context.Context, a *satchel.Workspace) error { return a.Write(ctx, "p.md", "again") }))
}

func (s *suite) versions(t *testing.T, _ *satchel.Store, ws *satchel.Workspace) {
	write(t, ws, "a.md", "v1\n", "b.md", "b\n")
	c, err := ws.Checkpoint(bg, "first")
	must(t, "checkpoint", err)
	equal(t, "checkpoint names the head", c.Seq, int64(2))
	_, err = ws.Checkpoint(bg, "first")
	refused(t, "duplicate checkpoint", err, satchel.ErrExists, "checkpoint first already exists in thread main")
	for _, bad := range []string{"", "123", strings.Repeat("x", 129), "a b", "a/b"} {
		_, err = ws.Checkpoint(bg, bad)
		refused(t, "checkpoint name "+bad, err, satchel.ErrInvalidArgument, "")
	}
	must(t, "edit", ws.Write(bg, "a.md", "v2\n"))
	must(t, "delete", ws.Delete(bg, "b.md"))
	write(t, ws, "c.md", "c\n")
	_, err = ws.Checkpoint(bg, "second")
	must(t, "checkpoint 2", err)
	h, err := ws.History(bg, 0, 0)
	must(t, "history", err)
	var seqs []string
	for _, c := range h {
		seqs = append(seqs, fmt.Sprint(c.Seq))
	}
	equal(t, "history newest first", strings.Join(seqs, ","), "5,4,3,2,1")
	equal(t, "checkpoint in history", strings.Join(h[0].Checkpoints, ","), "second")
	equal(t, "op recorded", h[1].Op, "delete")
	h2, _ := ws.History(bg, 0, 2)
	equal(t, "history limit", len(h2), 2)
	for _, ref := range []string{"first", "2"} {
		old, err := ws.At(bg, ref)
		must(t, "at "+ref, err)
		got, err := old.Read(bg, "a.md")
		must(t, "read at", err)
		equal(t, "read at "+ref, got, "v1\n")
		files, _ := old.Glob(bg, "*.md")
		equalSlice(t, "glob at "+ref, files, []string{"a.md", "b.md"})
		r, _ := old.Grep(bg, "^b", "", satchel.GrepOptions{})
		equal(t, "grep at "+ref, len(r.Matches), 1)
	}
	empty, err := ws.At(bg, "0")
	must(t, "at 0", err)
	files, _ := empty.Glob(bg, "**")
	equal(t, "empty before the first commit", len(files), 0)
	_, err = ws.At(bg, "99")
	refused(t, "at unknown seq", err, satchel.ErrNotFound, "")
	_, err = ws.At(bg, "nope")
	refused(t, "at unknown checkpoint", err, satchel.ErrNotFound, "checkpoint not found: nope")
	// A mutation can name its own commit, in one transaction.
	must(t, "write with checkpoint", ws.Write(bg, "d.md", "d\n", satchel.WithCheckpoint("with-d")))
	withD, err := ws.At(bg, "with-d")
	must(t, "at with-d", err)
	equal(t, "with-d is the write's commit", withD.Commit().Seq, int64(6))
	refused(t, "taken name", ws.Write(bg, "e.md", "e", satchel.WithCheckpoint("with-d")), satchel.ErrExists, "checkpoint with-d already exists in thread main")
	ok, _ := ws.Exists(bg, "e.md")
	equal(t, "a refused checkpoint name commits nothing", ok, false)
	refused(t, "bad name", ws.Delete(bg, "d.md", satchel.WithCheckpoint("12")), satchel.ErrInvalidArgument, "")
	must(t, "delete d", ws.Delete(bg, "d.md"))
	d, err := ws.Diff(bg, "first", "second")
	must(t, "diff", err)
	equal(t, "diff", fmt.Sprint(d), "[{a.md changed} {b.md removed} {c.md added}]")
	d, _ = ws.Diff(bg, "second", "second")
	equal(t, "diff of a commit with itself", len(d), 0)
	u, err := ws.DiffFile(bg, "first", "second", "a.md")
	must(t, "diff file", err)
	if !strings.Contains(u, "-v1") || !strings.Contains(u, "+v2") {
		t.Errorf("unified diff lacks the change:\n%s", u)
	}
}

func (s *suite) forkAndRestore(t *testing.T, st *satchel.Store, ws *satchel.Workspace) {
	write(t, ws, "a.md", "v1")
	_, _ = ws.Checkpoint(bg, "cp")
	write(t, ws, "a.md", "v2")
	fk, err := ws.Fork(bg, "cp", "side")
	must(t, "fork", err)
	got, _ := fk.Read(bg, "a.md")
	equal(t, "fork sees the checkpoint", got, "v1")
	write(t, fk, "a.md", "side change")
	got, _ = ws.Read(bg, "a.md")
	equal(t, "the source is untouched", got, "v2")
	_, err = ws.Fork(bg, "cp", "side")
	refused(t, "fork onto an existing thread", err, satchel.ErrExists, "thread side already exists")
	_, err = ws.Fork(bg, "nope", "other")
	refused(t, "fork from unknown ref", err, satchel.ErrNotFound, "")
	ghost, _ := st.Workspace(bg, "default", "ghost")
	_, err = ghost.Fork(bg, "", "other")
	refused(t, "fork from a missing thread", err, satchel.ErrNotFound, "thread not found: ghost")
	c, err := ws.Restore(bg, "cp")
	must(t, "restore", err)
	equal(t, "restore is a new commit", c.Seq, int64(3))
	got, _ = ws.Read(bg, "a.md")
	equal(t, "restored", got, "v1")
	old, _ := ws.At(bg, "2")
	got, _ = old.Read(bg, "a.md")
	equal(t, "nothing lost", got, "v2")
	threads, _ := st.Threads(bg, "default")
	equal(t, "threads", len(threads), 2)
}

func (s *suite) retention(t *testing.T, _ *satchel.Store, ws *satchel.Workspace) {
	for i := 1; i <= 10; i++ {
		write(t, ws, "a.md", fmt.Sprint(i))
		if i == 3 || i == 6 {
			_, err := ws.Checkpoint(bg, fmt.Sprintf("cp%d", i))
			must(t, "checkpoint", err)
		}
	}
	for _, bad := range []struct {
		in  satchel.PolicyInput
		msg string
	}{
		{satchel.PolicyInput{MaxCommits: ptr(0)}, "maxCommits must be at least 1, was 0"},
		{satchel.PolicyInput{MaxCheckpoints: ptr(-2)}, "maxCheckpoints must be at least 1, was -2"},
		{satchel.PolicyInput{MaxAge: ptr(-time.Second)}, "maxAge must be positive, was -1s"},
		{satchel.PolicyInput{MaxAge: ptr(time.Duration(0))}, "maxAge must be positive, was 0s"},
	} {
		_, err := bad.in.Valid()
		refused(t, "policy", err, satchel.ErrInvalidArgument, bad.msg)
	}
	n, err := ws.SetRetention(bg, satchel.Policy{MaxCommits: 2})
	must(t, "retain", err)
	// Kept: 10, 9 (last two) and the checkpoints 3 and 6.
	equal(t, "dropped", n, 6)
	h, _ := ws.History(bg, 0, 0)
	var seqs []string
	for _, c := range h {
		seqs = append(seqs, fmt.Sprint(c.Seq))
	}
	equal(t, "retained", strings.Join(seqs, ","), "10,9,6,3")
	_, err = ws.At(bg, "5")
	refused(t, "dropped commit", err, satchel.ErrNotFound, "")
	n, _ = ws.SetRetention(bg, satchel.Policy{MaxCommits: 1, MaxCheckpoints: 1})
	equal(t, "dropped with maxCheckpoints", n, 2)
	h, _ = ws.History(bg, 0, 0)
	equal(t, "head and newest checkpoint", len(h), 2)
	p, _ := ws.Retention(bg)
	equal(t, "stored policy", p.MaxCommits, 1)
	// maxAge: nothing is old enough yet.
	n, _ = ws.SetRetention(bg, satchel.Policy{MaxAge: time.Hour})
	equal(t, "young commits stay", n, 0)
}

func ptr[T any](v T) *T { return &v }

func (s *suite) gc(t *testing.T, st *satchel.Store, ws *satchel.Workspace) {
	big := strings.Repeat("0123456789abcdef", 1<<12) // 64 KiB
	for i := 0; i < 20; i++ {
		write(t, ws, "big.txt", fmt.Sprintf("%d %s", i, big))
	}
	write(t, ws, "keep.md", "keep")
	_, _ = ws.Checkpoint(bg, "keep")
	fk, err := ws.Fork(bg, "keep", "fork")
	must(t, "fork", err)
	_ = fk
	_, err = ws.SetRetention(bg, satchel.Policy{MaxCommits: 1})
	must(t, "retain", err)
	stats, err := st.GC(bg, "", satchel.NoGrace)
	must(t, "gc", err)
	if stats.PacksDeleted == 0 {
		t.Errorf("gc deleted nothing after 19 commits were dropped: %+v", stats)
	}
	// Everything a retained commit reaches is still readable: the head, the
	// checkpoint and the fork that shares its tree.
	got, err := ws.Read(bg, "big.txt")
	must(t, "read head after gc", err)
	equal(t, "head after gc", got, "19 "+big)
	old, err := ws.At(bg, "keep")
	must(t, "at checkpoint after gc", err)
	got, _ = old.Read(bg, "keep.md")
	equal(t, "checkpoint after gc", got, "keep")
	got, err = fk.Read(bg, "big.txt")
	must(t, "read fork after gc", err)
	equal(t, "fork after gc", got, "19 "+big)
	// A fresh store (no cache) reads the same.
	st2 := satchel.New(backendof.Store(st))
	ws2, _ := st2.Workspace(bg, "default", "main")
	got, err = ws2.Read(bg, "big.txt")
	must(t, "uncached read after gc", err)
	equal(t, "uncached head after gc", got, "19 "+big)
	again, err := st.GC(bg, "", satchel.NoGrace)
	must(t, "second gc", err)
	equal(t, "second gc deletes nothing", again.PacksDeleted, 0)
}

func (s *suite) threadsAndScopes(t *testing.T, st *satchel.Store, ws *satchel.Workspace) {
	write(t, ws, "a.md", "main")
	other, err := st.Workspace(bg, "tenant-2", "main")
	must(t, "other scope", err)
	ok, _ := other.Exists(bg, "a.md")
	equal(t, "scopes do not share files", ok, false)
	write(t, other, "a.md", "tenant 2")
	got, _ := ws.Read(bg, "a.md")
	equal(t, "scope isolation", got, "main")
	_, err = st.Workspace(bg, "default", "123")
	refused(t, "numeric thread name", err, satchel.ErrInvalidArgument, "")
	_, err = st.Workspace(bg, "bad scope", "main")
	refused(t, "bad scope", err, satchel.ErrInvalidArgument, "")
	tw, _ := st.Workspace(bg, "default", "t2")
	write(t, tw, "x", "y")
	ts, _ := st.Threads(bg, "default")
	equal(t, "threads", len(ts), 2)
	must(t, "delete thread", st.DeleteThread(bg, "default", "t2"))
	ts, _ = st.Threads(bg, "default")
	equal(t, "threads after delete", len(ts), 1)
	refused(t, "delete missing thread", st.DeleteThread(bg, "default", "t2"), satchel.ErrNotFound, "thread not found: t2")
	tw2, _ := st.Workspace(bg, "default", "t2")
	ok, _ = tw2.Exists(bg, "x")
	equal(t, "a recreated thread starts empty", ok, false)
	_, err = st.Purge(bg, "tenant-2")
	must(t, "purge", err)
	ok, _ = other.Exists(bg, "a.md")
	equal(t, "purged", ok, false)
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

// twoStores: two Stores on one backend stand for two processes sharing a
// database. Each sees the other's commits, and neither acts on a stale
// view of the head: an edit of text only the other wrote succeeds, and a
// write after the other collected old commits succeeds.
// idempotencyKeys: a keyed append retried lands once, from another store
// over the same database too, and its key with other text is refused; a
// backend without backend.Keys refuses keys.
func (s *suite) idempotencyKeys(t *testing.T, st *satchel.Store, ws *satchel.Workspace) {
	key := satchel.IdempotencyKey("k-1")
	if _, ok := backend.As[backend.Keys](backendof.Store(st)); !ok {
		refused(t, "a key without backend.Keys", ws.Append(bg, "log", "x", key), satchel.ErrInvalidArgument, "this backend keeps no idempotency keys")
		return
	}
	must(t, "append", ws.Append(bg, "log", "one\n", key))
	other := satchel.New(backendof.Store(st), satchel.WithCacheBytes(1))
	wo, err := other.Workspace(bg, "default", "main")
	must(t, "workspace", err)
	must(t, "retry from another store", wo.Append(bg, "log", "one\n", key))
	must(t, "retry", ws.Append(bg, "log", "one\n", key))
	got, err := ws.Read(bg, "log")
	must(t, "read", err)
	if got != "one\n" {
		t.Errorf("log = %q after retries, want the text once", got)
	}
	refused(t, "other text", ws.Append(bg, "log", "two\n", key), satchel.ErrIdempotencyKeyReused, "idempotency key k-1 was already used with different arguments")
}

// idempotencyKeysPerThread: a key claimed on one thread does not exist
// for another thread of the scope (an agent bound to t3 used to make
// main's write under the same key fail as "already used with different
// arguments"); on each thread it still means one call.
func (s *suite) idempotencyKeysPerThread(t *testing.T, st *satchel.Store, ws *satchel.Workspace) {
	if _, ok := backend.As[backend.Keys](backendof.Store(st)); !ok {
		t.Skip("the backend keeps no idempotency keys")
	}
	key := satchel.IdempotencyKey("K9")
	t3, err := st.Workspace(bg, ws.Scope(), "t3")
	must(t, "workspace t3", err)
	must(t, "t3 claims K9", t3.Write(bg, "squat.md", "first", key))
	must(t, "main writes under K9", ws.Write(bg, "real.md", "mine", key))
	got, err := ws.Read(bg, "real.md")
	must(t, "read", err)
	equal(t, "main's write", got, "mine")
	must(t, "main's retry", ws.Write(bg, "real.md", "mine", key))
	refused(t, "main, other arguments", ws.Write(bg, "real.md", "other", key), satchel.ErrIdempotencyKeyReused, "idempotency key K9 was already used with different arguments")
	refused(t, "t3, other arguments", t3.Write(bg, "squat.md", "second", key), satchel.ErrIdempotencyKeyReused, "idempotency key K9 was already used with different arguments")
	if ok, _ := ws.Exists(bg, "squat.md"); ok {
		t.Error("t3's write reached main")
	}
}

func (s *suite) twoStores(t *testing.T, a *satchel.Store, wa *satchel.Workspace) {
	b := satchel.New(backendof.Store(a), satchel.WithCacheBytes(1))
	wb, err := b.Workspace(bg, "default", "main")
	must(t, "workspace b", err)
	must(t, "a writes", wa.Write(bg, "f.md", "from a\n"))
	must(t, "b appends", wb.Append(bg, "f.md", "from b\n"))
	n, err := wa.StrReplace(bg, "f.md", "from b", "edited by a", false)
	must(t, "a edits what b wrote", err)
	equal(t, "replaced", n, 1)
	got, _ := wb.Read(bg, "f.md")
	equal(t, "b reads a's edit", got, "from a\nedited by a\n")
	must(t, "b writes g", wb.Write(bg, "g.md", "g"))
	must(t, "a deletes what b wrote", wa.Delete(bg, "g.md"))
	ok, _ := wb.Exists(bg, "g.md")
	equal(t, "deleted", ok, false)
	for i := 0; i < 3; i++ {
		must(t, "b writes", wb.Write(bg, "h.md", fmt.Sprint(i)))
	}
	_, err = wb.SetRetention(bg, satchel.Policy{MaxCommits: 1})
	must(t, "retain", err)
	_, err = b.GC(bg, "", satchel.NoGrace)
	must(t, "gc", err)
	must(t, "a writes after b collected the commits a knew", wa.Write(bg, "i.md", "i"))
	got, _ = wb.Read(bg, "h.md")
	equal(t, "b's last write", got, "2")
	got, _ = wb.Read(bg, "f.md")
	equal(t, "a's edit survives", got, "from a\nedited by a\n")
}
