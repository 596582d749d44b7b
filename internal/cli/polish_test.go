package cli

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
)

// TestFSReadEndsWithNewline: a read of lines ends with a newline; a whole
// file is printed byte for byte when piped, and on a terminal gets the
// final newline it lacks.
func TestFSReadEndsWithNewline(t *testing.T) {
	h := newHarness(t)
	h.ok("fs", "write", "a.md", "one\ntwo")
	equal(t, "lines", h.ok("fs", "read", "a.md", "--start", "1", "--end", "2", "--numbered"), "1| one\n2| two\n")
	equal(t, "piped", h.ok("fs", "read", "a.md"), "one\ntwo")
	tty := isTerminal
	isTerminal = func(io.Writer) bool { return true }
	defer func() { isTerminal = tty }()
	equal(t, "terminal", h.ok("fs", "read", "a.md"), "one\ntwo\n")
	h.ok("fs", "write", "b.md", "ends\n")
	equal(t, "terminal, a final newline already", h.ok("fs", "read", "b.md"), "ends\n")
}

// TestCommitColumns: checkpoint, restore and fork print a commit in log's
// columns (SEQ, TIME, CHECKPOINTS, AGENT, SUMMARY), the same line log
// shows for it.
func TestCommitColumns(t *testing.T) {
	h := newHarness(t)
	h.ok("fs", "write", "a.md", "one\n")
	cp := h.ok("checkpoint", "v1")
	equal(t, "checkpoint", cp, strings.SplitAfter(h.ok("log"), "\n")[0])
	if f := strings.Split(strings.TrimSuffix(cp, "\n"), "\t"); len(f) != 5 || f[2] != "v1" || f[3] != "-" || f[4] != "write a.md" {
		t.Errorf("checkpoint: %q", cp)
	}
	h.ok("fs", "write", "a.md", "two\n")
	rs := h.ok("restore", "v1")
	equal(t, "restore", rs, strings.SplitAfter(h.ok("log"), "\n")[0])
	fk := h.ok("fork", "try", "--from", "main@v1")
	equal(t, "fork", fk, strings.SplitAfter(h.ok("--thread", "try", "log"), "\n")[0])
}

// TestImportExportSummaries: fs import and fs export print one summary
// line (every path first with --verbose), and an import's commit says what
// it imported.
func TestImportExportSummaries(t *testing.T) {
	h := newHarness(t)
	src := t.TempDir()
	writeTree(t, src, map[string]string{"a.md": "a", "sub/b.md": "b", "c.md": "c"})
	equal(t, "import", h.ok("fs", "import", src, "--under", "docs"), "imported 3 files under docs/\n")
	if l := h.ok("log"); !strings.HasSuffix(l, "\t-\timport 3 files under docs/\n") {
		t.Errorf("the import's commit: %q", l)
	}
	h.ok("fs", "write", "one/x.md", "x")
	equal(t, "import --verbose", h.ok("fs", "import", filepath.Join(src, "sub"), "--under", "one", "--verbose"), "one/b.md\nimported 1 file under one/\n")
	dst := filepath.Join(t.TempDir(), "out")
	equal(t, "export", h.ok("fs", "export", dst), "exported 5 files to "+dst+"\n")
}

// TestExportCountsSpillAreas: satchel export counts a thread's spill area
// as a spill area, not as another thread.
func TestExportCountsSpillAreas(t *testing.T) {
	h := newHarness(t)
	h.ok("fs", "write", "a.md", "a\n")
	ws, err := h.store.Workspace(context.Background(), "default", "main")
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.SaveSpill(context.Background(), "spill/x.txt", "big\n"); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "e.satchel")
	got := h.ok("export", "-o", out)
	if !strings.HasPrefix(got, "exported 1 threads (and 1 spill area), ") {
		t.Errorf("export: %q", got)
	}
}

// TestStatShowsType: fs stat shows the content's type, and a line count
// only for text.
func TestStatShowsType(t *testing.T) {
	h := newHarness(t)
	h.ok("fs", "write", "p.png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\n\n\n")
	out := h.ok("fs", "stat", "p.png")
	if !strings.Contains(out, "\ntype: image/png\n") || strings.Contains(out, "lines:") {
		t.Errorf("stat of a PNG: %q", out)
	}
}

// TestTokenCreateAgentAndHelp: token create warns about an agent the
// project of the working directory does not define, and its help does not
// show --scope with the default it does not have.
func TestTokenCreateAgentAndHelp(t *testing.T) {
	h := newHarness(t)
	dir := seedProject(t)
	t.Chdir(dir)
	r := h.run("token", "create", "--agent", "reserch", "--scope", "acme")
	if r.Code != 0 || !strings.Contains(r.Err, "warning: the project at "+dir+" defines no agent reserch (agents: research); satchel serve --dir "+dir+" refuses this token's sessions") {
		t.Errorf("an agent the project does not define: %+v", r)
	}
	if r := h.run("token", "create", "--agent", "research", "--scope", "acme"); r.Code != 0 || strings.Contains(r.Err, "warning") {
		t.Errorf("an agent the project defines: %+v", r)
	}
	help := h.ok("token", "create", "--help")
	if strings.Contains(help, `(default "default")`) || !strings.Contains(help, "--scope string    the one scope the token can touch (required without --operator)") {
		t.Errorf("token create --help:\n%s", help)
	}
	if !strings.Contains(h.ok("fs", "--help"), `scope (tenant) of the workspace (default "default")`) {
		t.Errorf("other commands lost --scope's default")
	}
}

// TestDocHelpUsesInitStores: the examples of doc and its commands use the
// store satchel init makes (notes), and the set example passes.
func TestDocHelpUsesInitStores(t *testing.T) {
	h := newHarness(t)
	for _, args := range [][]string{{"doc"}, {"doc", "get"}, {"doc", "set"}, {"doc", "query"}, {"doc", "list"}, {"doc", "rm"}, {"doc", "import"}} {
		help := h.ok(append(args, "--help")...)
		if strings.Contains(help, "research-notes") || strings.Contains(help, "company-profiles") || !strings.Contains(help, "satchel doc ") {
			t.Errorf("%v --help names stores init does not make:\n%s", args, help)
		}
	}
	dir := filepath.Join(t.TempDir(), "p")
	h.ok("init", dir)
	help := h.ok("doc", "set", "--help")
	i := strings.Index(help, "satchel doc set notes '")
	doc := help[i+len("satchel doc set notes '"):]
	doc = doc[:strings.Index(doc, "'")]
	equal(t, "the example set", h.ok("doc", "--dir", dir, "set", "notes", doc), "acme:pricing version 1\n")
}
