package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/satchel-dev/satchel"
)

func TestWriteAndRead(t *testing.T) {
	h := newHarness(t)
	equal(t, "write", h.ok("fs", "write", "notes/a.md", "one\ntwo\nthree\n"), "")
	equal(t, "read", h.ok("fs", "read", "notes/a.md"), "one\ntwo\nthree\n")

	// Standard input when the content is omitted, byte for byte.
	h.okIn("no newline", "fs", "write", "b.txt")
	equal(t, "read stdin write", h.ok("fs", "read", "b.txt"), "no newline")
	h.okIn("\r\nmore", "fs", "append", "b.txt")
	h.ok("fs", "append", "b.txt", "!")
	equal(t, "read after appends", h.ok("fs", "read", "b.txt"), "no newline\r\nmore!")
	h.okIn("", "fs", "write", "empty.txt")
	equal(t, "empty file", h.ok("fs", "read", "empty.txt"), "")
	h.okIn("fresh\n", "fs", "append", "new/file.txt")
	equal(t, "append creates", h.ok("fs", "read", "new/file.txt"), "fresh\n")

	// Bounds: 1-based, inclusive, each line ending with a newline.
	equal(t, "lines 2-3", h.ok("fs", "read", "notes/a.md", "--start", "2", "--end", "3"), "two\nthree\n")
	equal(t, "from 2", h.ok("fs", "read", "notes/a.md", "--start", "2"), "two\nthree\n")
	equal(t, "end clamps", h.ok("fs", "read", "notes/a.md", "--start", "3", "--end", "99"), "three\n")
	equal(t, "start past the end", h.ok("fs", "read", "notes/a.md", "--start", "9"), "")
	equal(t, "numbered", h.ok("fs", "read", "notes/a.md", "--numbered"), "1| one\n2| two\n3| three\n")
	equal(t, "numbered slice", h.ok("fs", "read", "notes/a.md", "--numbered", "--start", "2", "--end", "2"), "2| two\n")

	h.refused("start must be at least 1", "fs", "read", "notes/a.md", "--start", "0")
	h.refused("--end requires --start", "fs", "read", "notes/a.md", "--end", "2")
	h.refused("end must not be before start", "fs", "read", "notes/a.md", "--start", "3", "--end", "2")

	// --json: the ReadResult.
	equal(t, "read --json", h.ok("fs", "read", "notes/a.md", "--json"), `{"text":"one\ntwo\nthree\n"}`+"\n")
	type readResult struct {
		Text      string `json:"text"`
		Truncated bool   `json:"truncated"`
		NextLine  int    `json:"next_line"`
		Notice    string `json:"notice"`
	}
	rr := decode[readResult](t, h.ok("fs", "read", "notes/a.md", "--max-chars", "5", "--json"))
	if rr.Text != "one\nt" || !rr.Truncated || rr.NextLine != 2 || rr.Notice == "" {
		t.Errorf("read --max-chars 5 --json = %+v", rr)
	}

	// --max-chars: the text on stdout, the notice on stderr.
	r := h.run("fs", "read", "notes/a.md", "--max-chars", "5")
	if r.Code != 0 || r.Out != "one\nt" || !strings.Contains(r.Err, "start_line=2") {
		t.Errorf("read --max-chars 5 = %+v", r)
	}
	h.refused("--max-chars must not be negative, was -1", "fs", "read", "notes/a.md", "--max-chars", "-1")
}

func TestWriteIfHash(t *testing.T) {
	h := newHarness(t)
	out := h.ok("fs", "write", "a.md", "v1", "--json")
	type written struct {
		Path string `json:"path"`
		Size int    `json:"size"`
		Hash string `json:"hash"`
	}
	equal(t, "write --json", decode[written](t, out), written{Path: "a.md", Size: 2, Hash: satchel.Hash("v1")})
	h.ok("fs", "write", "a.md", "v2", "--if-hash", satchel.Hash("v1"))
	r := h.run("fs", "write", "a.md", "v3", "--if-hash", satchel.Hash("v1"))
	if r.Code != 1 || !strings.HasPrefix(r.Err, "conflict: a.md has changed since hash") {
		t.Errorf("stale --if-hash: %+v", r)
	}
	equal(t, "content after a refused write", h.ok("fs", "read", "a.md"), "v2")
	equal(t, "append --json", h.ok("fs", "append", "a.md", "!", "--json"), `{"path":"a.md","appended":1}`+"\n")
}

func TestEdit(t *testing.T) {
	h := newHarness(t)
	h.ok("fs", "write", "a.md", "x y x")
	h.refused("anchor occurs 2 times in a.md, expected exactly one", "fs", "edit", "a.md", "--old", "x", "--new", "z")
	h.refused("anchor not found in a.md", "fs", "edit", "a.md", "--old", "nope", "--new", "z")
	h.refused("anchor must not be empty", "fs", "edit", "a.md", "--old", "", "--new", "z")
	h.refused("file not found: b.md", "fs", "edit", "b.md", "--old", "x", "--new", "z")
	equal(t, "edit one", h.ok("fs", "edit", "a.md", "--old", "y", "--new", "Y"), "1\n")
	equal(t, "edit all --json", h.ok("fs", "edit", "a.md", "--old", "x", "--new", "", "--all", "--json"), `{"replaced":2}`+"\n")
	equal(t, "content", h.ok("fs", "read", "a.md"), " Y ")
	h.usage(`required flag(s) "new" not set`, "fs", "edit", "a.md", "--old", "x")

	r := h.run("fs", "edit", "a.md", "--old", "Y", "--new", "y", "--if-hash", "0000")
	if r.Code != 1 || !strings.HasPrefix(r.Err, "conflict: ") {
		t.Errorf("edit with a stale hash: %+v", r)
	}
	equal(t, "edit --if-hash", h.ok("fs", "edit", "a.md", "--old", "Y", "--new", "y", "--if-hash", satchel.Hash(" Y ")), "1\n")
}

func TestGlobListGrep(t *testing.T) {
	h := newHarness(t)
	// Empty results: nothing in plain mode, [] in JSON.
	equal(t, "glob none", h.ok("fs", "glob", "**/*.md"), "")
	equal(t, "glob none --json", h.ok("fs", "glob", "**/*.md", "--json"), "[]\n")
	equal(t, "ls none", h.ok("fs", "ls"), "")
	equal(t, "ls none --json", h.ok("fs", "ls", "--json"), "[]\n")
	equal(t, "grep none", h.ok("fs", "grep", "x"), "")
	equal(t, "grep none --json", h.ok("fs", "grep", "x", "--json"), `{"matches":[]}`+"\n")

	h.ok("fs", "write", "a.md", "alpha\nbeta\n")
	h.ok("fs", "write", "notes/b.md", "gamma\nalphabet\n")
	h.ok("fs", "write", "notes/deep/c.txt", "alpha")
	h.ok("fs", "write", "notesx.md", "alpha")

	equal(t, "glob", h.ok("fs", "glob", "**/*.md"), "a.md\nnotes/b.md\nnotesx.md\n")
	equal(t, "glob one segment", h.ok("fs", "glob", "notes/*"), "notes/b.md\n")
	equal(t, "glob --json", h.ok("fs", "glob", "notes/**", "--json"), `["notes/b.md","notes/deep/c.txt"]`+"\n")
	h.refused(`invalid pattern "a?.md": ? is not supported (only * and ** are)`, "fs", "glob", "a?.md")

	equal(t, "ls", h.ok("fs", "ls"), "a.md\nnotes/b.md\nnotes/deep/c.txt\nnotesx.md\n")
	equal(t, "ls dir", h.ok("fs", "ls", "notes"), "notes/b.md\nnotes/deep/c.txt\n")
	equal(t, "ls dir/", h.ok("fs", "ls", "notes/"), "notes/b.md\nnotes/deep/c.txt\n")
	equal(t, "ls --limit", h.ok("fs", "ls", "--limit", "1"), "a.md\n")
	equal(t, "ls --json", h.ok("fs", "ls", "notes", "--json"), `["notes/b.md","notes/deep/c.txt"]`+"\n")
	h.refused(`invalid path "../x": contains a . or .. segment`, "fs", "ls", "../x")

	equal(t, "grep", h.ok("fs", "grep", "^alpha"), "a.md:1:alpha\nnotes/b.md:2:alphabet\nnotes/deep/c.txt:1:alpha\nnotesx.md:1:alpha\n")
	equal(t, "grep --under", h.ok("fs", "grep", "alpha", "--under", "notes"), "notes/b.md:2:alphabet\nnotes/deep/c.txt:1:alpha\n")
	equal(t, "grep --include", h.ok("fs", "grep", "alpha", "--include", "*.txt"), "notes/deep/c.txt:1:alpha\n")
	equal(t, "grep --json", h.ok("fs", "grep", "gam+a", "--json"), `{"matches":[{"path":"notes/b.md","line":1,"text":"gamma"}]}`+"\n")

	r := h.run("fs", "grep", "alpha", "--limit", "2")
	if r.Code != 0 || r.Out != "a.md:1:alpha\nnotes/b.md:2:alphabet\n" || !strings.Contains(r.Err, "stopped after 2 matches") {
		t.Errorf("grep --limit 2 = %+v", r)
	}
	equal(t, "grep --limit --json", h.ok("fs", "grep", "alpha", "--limit", "1", "--json"),
		`{"matches":[{"path":"a.md","line":1,"text":"alpha"}],"truncated":true}`+"\n")
	h.refused("invalid regex \"(\": missing closing ): `(`", "fs", "grep", "(")
	h.refused("--limit must not be negative, was -1", "fs", "grep", "a", "--limit", "-1")
}

func TestStatExistsRmMv(t *testing.T) {
	h := newHarness(t)
	before := time.Now().Add(-time.Second).UTC().Truncate(time.Second)
	h.ok("fs", "write", "dir/a.md", "one\ntwo\n")

	out := h.ok("fs", "stat", "dir/a.md")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 6 || lines[5] != "type: text/plain; charset=utf-8" {
		t.Fatalf("stat printed %q", out)
	}
	equal(t, "stat", []string{lines[0], lines[1], lines[2], lines[4]},
		[]string{"path: dir/a.md", "size: 8", "lines: 2", "hash: " + satchel.Hash("one\ntwo\n")})
	mod, err := time.Parse(time.RFC3339, strings.TrimPrefix(lines[3], "modified: "))
	if err != nil || !strings.HasSuffix(lines[3], "Z") || mod.Before(before) {
		t.Errorf("stat modified line %q: %v", lines[3], err)
	}
	fi := decode[satchel.FileInfo](t, h.ok("fs", "stat", "dir/a.md", "--json"))
	if fi.Path != "dir/a.md" || fi.Size != 8 || fi.Lines != 2 || fi.Hash != satchel.Hash("one\ntwo\n") || fi.ModTime.IsZero() {
		t.Errorf("stat --json = %+v", fi)
	}
	h.refused("file not found: dir/b.md", "fs", "stat", "dir/b.md")
	h.refused("dir is a directory", "fs", "stat", "dir")

	// exists: true or false with exit 0; an invalid path is an error.
	equal(t, "exists", h.ok("fs", "exists", "dir/a.md"), "true\n")
	equal(t, "exists missing", h.ok("fs", "exists", "dir/b.md"), "false\n")
	equal(t, "exists directory", h.ok("fs", "exists", "dir"), "false\n")
	equal(t, "exists --json", h.ok("fs", "exists", "dir/a.md", "--json"), `{"exists":true}`+"\n")
	equal(t, "exists --json false", h.ok("fs", "exists", "nope", "--json"), `{"exists":false}`+"\n")
	h.refused(`invalid path "../x": contains a . or .. segment`, "fs", "exists", "../x")
	h.refused(`invalid path "/etc/passwd": must be relative (no leading /)`, "fs", "exists", "/etc/passwd")

	// mv
	h.ok("fs", "write", "b.md", "b")
	h.refused("cannot move dir/a.md to b.md: b.md exists (overwrite not requested)", "fs", "mv", "dir/a.md", "b.md")
	equal(t, "mv --json", h.ok("fs", "mv", "dir/a.md", "c.md", "--json"), `{"from":"dir/a.md","to":"c.md"}`+"\n")
	h.ok("fs", "mv", "c.md", "b.md", "--overwrite")
	equal(t, "after mv", h.ok("fs", "ls"), "b.md\n")
	equal(t, "moved content", h.ok("fs", "read", "b.md"), "one\ntwo\n")
	h.refused("file not found: c.md", "fs", "mv", "c.md", "d.md")

	// rm: idempotent; a directory is refused; --if-hash.
	h.ok("fs", "write", "d/x.md", "x")
	h.refused("d is a directory", "fs", "rm", "d")
	r := h.run("fs", "rm", "b.md", "--if-hash", satchel.Hash("other"))
	if r.Code != 1 || !strings.HasPrefix(r.Err, "conflict: ") {
		t.Errorf("rm with a stale hash: %+v", r)
	}
	equal(t, "rm", h.ok("fs", "rm", "b.md", "--if-hash", satchel.Hash("one\ntwo\n")), "")
	equal(t, "rm missing", h.ok("fs", "rm", "b.md"), "")
	equal(t, "rm --json", h.ok("fs", "rm", "d/x.md", "--json"), `{"path":"d/x.md"}`+"\n")
	equal(t, "after rm", h.ok("fs", "ls"), "")
}

func TestReadAt(t *testing.T) {
	h := newHarness(t)
	h.ok("fs", "write", "a.md", "v1")
	h.ok("checkpoint", "first")
	h.ok("fs", "write", "a.md", "v2")
	h.ok("fs", "write", "b.md", "b")
	equal(t, "read --at seq", h.ok("fs", "read", "a.md", "--at", "1"), "v1")
	equal(t, "read --at checkpoint", h.ok("fs", "read", "a.md", "--at", "first"), "v1")
	equal(t, "read --at head", h.ok("fs", "read", "a.md", "--at", "head"), "v2")
	equal(t, "glob --at", h.ok("fs", "glob", "*.md", "--at", "first"), "a.md\n")
	equal(t, "ls --at", h.ok("fs", "ls", "--at", "2"), "a.md\n")
	equal(t, "grep --at", h.ok("fs", "grep", "v", "--at", "first"), "a.md:1:v1\n")
	equal(t, "exists --at", h.ok("fs", "exists", "b.md", "--at", "first"), "false\n")
	equal(t, "stat --at", strings.Split(h.ok("fs", "stat", "a.md", "--at", "first"), "\n")[1], "size: 2")
	h.refused("file not found: b.md", "fs", "read", "b.md", "--at", "first")
	h.refused("checkpoint not found: nope", "fs", "read", "a.md", "--at", "nope")
	h.refused("commit not found: 9 is not a retained commit of thread main", "fs", "read", "a.md", "--at", "9")
}

func TestScopeAndThreadFlags(t *testing.T) {
	h := newHarness(t)
	h.ok("--scope", "acme", "--thread", "t1", "fs", "write", "a.md", "acme")
	h.ok("fs", "write", "a.md", "default")
	equal(t, "other scope", h.ok("--scope", "acme", "--thread", "t1", "fs", "read", "a.md"), "acme")
	equal(t, "default scope", h.ok("fs", "read", "a.md"), "default")
	// A thread that does not exist is refused, not read as empty.
	h.refused(`thread "main" does not exist in scope acme; threads: t1`, "--scope", "acme", "fs", "read", "a.md")
	h.refused(`thread "mian" does not exist in scope default; threads: main`, "--thread", "mian", "fs", "ls")
	h.refused(`thread "mian" does not exist in scope default; threads: main`, "--thread", "mian", "log")
	h.refused(`thread "mian" does not exist in scope default; threads: main`, "--thread", "mian", "diff", "0", "head")
	h.refused(`thread "new" does not exist in scope fresh; the scope has no threads yet (the first write makes one)`, "--scope", "fresh", "--thread", "new", "fs", "read", "a.md")
	equal(t, "the default thread of a scope without threads reads as empty", h.ok("--scope", "fresh", "fs", "ls"), "")
	h.ok("--thread", "mian", "fs", "write", "b.md", "x") // the first write still makes the thread
	equal(t, "a thread made by its first write", h.ok("--thread", "mian", "fs", "ls"), "b.md\n")
	h.refused(`invalid scope "a b": must be 1 to 128 letters, digits, '.', '_', '-', '@' or ':'`, "--scope", "a b", "fs", "ls")
	h.refused(`invalid thread name "123": must not be all digits (a number means a sequence)`, "--thread", "123", "fs", "ls")
}

func TestBinaryContent(t *testing.T) {
	h := newHarness(t)
	bin := "\x00\xff\xfe binary"
	h.okIn(bin, "fs", "write", "blob.bin")
	equal(t, "binary read back", h.ok("fs", "read", "blob.bin"), bin)
	h.refused("file is not valid UTF-8 text: blob.bin", "fs", "read", "blob.bin", "--start", "1")
}
