package mcpserver

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/satchel-dev/satchel"
)

func TestToolList(t *testing.T) {
	c, _ := newClient(t, Config{})
	res, err := c.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		got[tool.Name] = tool
	}
	if len(got) != len(fileToolNames) {
		t.Errorf("%d tools, want %d", len(got), len(fileToolNames))
	}
	type ann struct{ readOnly, destructive, idempotent bool }
	want := map[string]ann{
		"read_file": {true, false, true}, "stat_file": {true, false, true}, "glob": {true, false, true},
		"grep": {true, false, true}, "list_files": {true, false, true}, "history": {true, false, true}, "diff": {true, false, true},
		"write_file": {false, true, true}, "append_file": {false, false, false}, "edit_file": {false, true, false},
		"delete_file": {false, true, true}, "move_file": {false, true, false}, "checkpoint": {false, false, false},
		"restore": {false, true, true}, "list_threads": {true, false, true}, "fork": {false, false, false},
		"switch_thread": {true, false, true},
		"merge":         {false, true, true},
	}
	for name, w := range want {
		tool := got[name]
		if tool == nil {
			t.Errorf("tool %s missing", name)
			continue
		}
		a := tool.Annotations
		destructive := a.DestructiveHint == nil || *a.DestructiveHint
		if a.ReadOnlyHint != w.readOnly || (!w.readOnly && destructive != w.destructive) || a.IdempotentHint != w.idempotent ||
			a.OpenWorldHint == nil || *a.OpenWorldHint {
			t.Errorf("%s annotations = %+v, want %+v", name, a, w)
		}
		if tool.Description == "" || tool.OutputSchema == nil {
			t.Errorf("%s: no description or output schema", name)
		}
		schema := tool.InputSchema.(map[string]any)
		if schema["additionalProperties"] != false {
			t.Errorf("%s: input schema allows other properties", name)
		}
		for p, v := range schema["properties"].(map[string]any) {
			if v.(map[string]any)["description"] == "" || v.(map[string]any)["description"] == nil {
				t.Errorf("%s.%s has no description", name, p)
			}
			if p == "scope" {
				t.Errorf("%s takes a scope", name)
			}
		}
	}
	// The parameters of DESIGN §6.
	params := map[string][]string{
		"read_file":   {"path", "start_line", "end_line", "numbered", "at", "max_chars"},
		"write_file":  {"path", "content", "if_hash"},
		"append_file": {"path", "content"},
		"edit_file":   {"path", "old_text", "new_text", "replace_all", "if_hash"},
		"stat_file":   {"path"},
		"glob":        {"pattern", "at"},
		"grep":        {"pattern", "path", "include", "limit", "at"},
		"list_files":  {"path", "limit"},
		"delete_file": {"path", "if_hash"},
		"move_file":   {"from", "to", "if_hash"},
		"checkpoint":  {"name"},
		"history":     {"limit"},
		"diff":        {"from", "to", "path"},
		"restore":     {"to"},
		"fork":        {"name", "from"},
	}
	for name, ps := range params {
		props := got[name].InputSchema.(map[string]any)["properties"].(map[string]any)
		for _, p := range ps {
			if props[p] == nil {
				t.Errorf("%s has no parameter %s", name, p)
			}
		}
	}
	rf := got["read_file"].InputSchema.(map[string]any)["properties"].(map[string]any)
	if rf["numbered"].(map[string]any)["default"] != true || rf["max_chars"].(map[string]any)["default"] != float64(65536) {
		t.Errorf("read_file defaults: %v %v", rf["numbered"], rf["max_chars"])
	}
}

func TestToolPrefix(t *testing.T) {
	c, _ := newClient(t, Config{ToolPrefix: "ws_"})
	res, err := c.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		if !strings.HasPrefix(tool.Name, "ws_") {
			t.Errorf("tool %s has no prefix", tool.Name)
		}
		if tool.Name == "ws_stat_file" && !strings.Contains(tool.Description, "ws_write_file") {
			t.Errorf("stat_file's description names the tools without prefix: %s", tool.Description)
		}
	}
	c.is("ws_write_file", map[string]any{"path": "a.md", "content": "x"}, "wrote 1 bytes to a.md")
	c.is("ws_read_file", map[string]any{"path": "a.md", "numbered": false}, "x")
	c.refused("read_file", map[string]any{"path": "a.md"}, `unknown tool "read_file"`)
	if !strings.Contains(c.cs.InitializeResult().Instructions, "ws_read_file") || !strings.Contains(c.cs.InitializeResult().Instructions, "ws_diff compares") {
		t.Errorf("instructions: %s", c.cs.InitializeResult().Instructions)
	}
}

func TestReadWrite(t *testing.T) {
	c, _ := newClient(t, Config{})
	content := "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n"
	r := c.is("write_file", map[string]any{"path": "notes/a.md", "content": content}, "wrote 49 bytes to notes/a.md")
	if m := structured(t, r); m["hash"] != satchel.Hash(content) || m["bytes"] != float64(49) || m["path"] != "notes/a.md" {
		t.Errorf("write_file structured = %v", m)
	}

	r = c.is("read_file", map[string]any{"path": "notes/a.md", "start_line": 8}, lines(" 8| eight", " 9| nine", "10| ten"))
	if m := structured(t, r); m["text"] != lines(" 8| eight", " 9| nine", "10| ten") || m["truncated"] != nil {
		t.Errorf("read_file structured = %v", m)
	}
	c.is("read_file", map[string]any{"path": "notes/a.md", "start_line": 2, "end_line": 3}, "2| two\n3| three")
	c.is("read_file", map[string]any{"path": "notes/a.md", "numbered": false}, content)
	c.is("read_file", map[string]any{"path": "notes/a.md", "numbered": false, "start_line": 9, "end_line": 99}, "nine\nten")
	c.is("read_file", map[string]any{"path": "notes/a.md", "start_line": 11}, "", "[start_line 11 is past the end: notes/a.md has 10 lines]")
	c.is("read_file", map[string]any{"path": "notes/a.md", "start_line": 10}, "10| ten")

	// Bounds are checked by the API, with its messages.
	c.refused("read_file", map[string]any{"path": "notes/a.md", "start_line": 0}, "start_line must be at least 1")
	c.refused("read_file", map[string]any{"path": "notes/a.md", "start_line": -3}, "start_line must be at least 1")
	c.refused("read_file", map[string]any{"path": "notes/a.md", "start_line": 5, "end_line": 4}, "end_line must not be before start_line")
	c.refused("read_file", map[string]any{"path": "notes/a.md", "end_line": 4}, "end_line requires start_line")
	c.refused("read_file", map[string]any{"path": "x.md"}, "file not found: x.md")
	c.refused("read_file", map[string]any{"path": "../x"}, `invalid path "../x": contains a . or .. segment`)
	c.refused("read_file", map[string]any{"path": "/etc/passwd"}, `invalid path "/etc/passwd": must be relative (no leading /)`)
	c.refused("read_file", map[string]any{"path": "notes"}, "notes is a directory")

	// max_chars: the text is cut, and the notice is an item of its own.
	r = c.is("read_file", map[string]any{"path": "notes/a.md", "numbered": false, "max_chars": 10},
		"one\ntwo\nth", "[output truncated at 10 characters; line 3 is cut. Continue with start_line=3]")
	if m := structured(t, r); m["truncated"] != true || m["next_line"] != float64(3) || m["text"] != "one\ntwo\nth" {
		t.Errorf("truncated read structured = %v", m)
	}
	c.refused("read_file", map[string]any{"path": "notes/a.md", "max_chars": 0}, "max_chars must be at least 1, was 0")
	c.refused("read_file", map[string]any{"path": "notes/a.md", "max_chars": MaxReadChars + 1}, fmt.Sprintf("max_chars must be at most %d, was %d", MaxReadChars, MaxReadChars+1))

	c.is("append_file", map[string]any{"path": "notes/a.md", "content": "eleven\n"}, "appended 7 bytes to notes/a.md")
	c.is("append_file", map[string]any{"path": "log.txt", "content": "a"}, "appended 1 bytes to log.txt")
	c.is("read_file", map[string]any{"path": "notes/a.md", "start_line": 11}, "11| eleven")
	c.is("read_file", map[string]any{"path": "log.txt"}, "1| a")

	// Writing over a directory, or under a file.
	c.refused("write_file", map[string]any{"path": "notes", "content": "x"}, "notes is a directory")
}

func TestReadAt(t *testing.T) {
	c, _ := newClient(t, Config{})
	c.ok("write_file", map[string]any{"path": "a.md", "content": "v1\n"})
	c.is("checkpoint", map[string]any{"name": "first"}, "checkpoint first is commit 1")
	c.ok("write_file", map[string]any{"path": "a.md", "content": "v2\n"})
	c.is("read_file", map[string]any{"path": "a.md", "at": "first"}, "1| v1")
	c.is("read_file", map[string]any{"path": "a.md", "at": 1, "numbered": false}, "v1\n")
	c.is("read_file", map[string]any{"path": "a.md", "at": "2", "numbered": false}, "v2\n")
	c.is("read_file", map[string]any{"path": "a.md", "at": "head"}, "1| v2")
	c.refused("read_file", map[string]any{"path": "a.md", "at": 0}, "file not found: a.md")
	c.refused("read_file", map[string]any{"path": "a.md", "at": "nope"}, "checkpoint not found: nope")
	c.refused("read_file", map[string]any{"path": "a.md", "at": 9}, "commit not found: 9 is not a retained commit of thread main")
	c.refused("read_file", map[string]any{"path": "a.md", "at": true}, `at must be a commit: a sequence number, a checkpoint name or "head", was true`)
	c.is("glob", map[string]any{"pattern": "*.md", "at": 0}, "no files match *.md")
	c.is("grep", map[string]any{"pattern": "v", "at": "first"}, "a.md:1:v1")
}

func TestEdit(t *testing.T) {
	c, _ := newClient(t, Config{})
	c.ok("write_file", map[string]any{"path": "a.md", "content": "alpha beta\nbeta gamma\n"})
	c.refused("edit_file", map[string]any{"path": "a.md", "old_text": "beta", "new_text": "B"}, "anchor occurs 2 times in a.md, expected exactly one")
	c.refused("edit_file", map[string]any{"path": "a.md", "old_text": "delta", "new_text": "D"}, "anchor not found in a.md")
	c.refused("edit_file", map[string]any{"path": "a.md", "old_text": "", "new_text": "D"}, "anchor must not be empty")
	c.refused("edit_file", map[string]any{"path": "b.md", "old_text": "x", "new_text": "y"}, "file not found: b.md")
	r := c.is("edit_file", map[string]any{"path": "a.md", "old_text": "alpha", "new_text": "ALPHA"}, "replaced 1 occurrence in a.md")
	if m := structured(t, r); m["replaced"] != float64(1) || m["path"] != "a.md" {
		t.Errorf("edit_file structured = %v", m)
	}
	c.is("edit_file", map[string]any{"path": "a.md", "old_text": "beta", "new_text": "B", "replace_all": true}, "replaced 2 occurrences in a.md")
	c.is("read_file", map[string]any{"path": "a.md", "numbered": false}, "ALPHA B\nB gamma\n")
	c.is("edit_file", map[string]any{"path": "a.md", "old_text": "B gamma\n", "new_text": ""}, "replaced 1 occurrence in a.md")
	c.is("read_file", map[string]any{"path": "a.md", "numbered": false}, "ALPHA B\n")
}

func TestPreconditions(t *testing.T) {
	c, _ := newClient(t, Config{})
	c.ok("write_file", map[string]any{"path": "a.md", "content": "one\n"})
	h1 := satchel.Hash("one\n")
	stale := satchel.Hash("zero\n")
	r := c.call("stat_file", map[string]any{"path": "a.md"})
	if m := structured(t, r); m["hash"] != h1 || m["size"] != float64(4) || m["lines"] != float64(1) {
		t.Errorf("stat_file structured = %v", m)
	}
	msg := fmt.Sprintf("conflict: a.md has changed since hash %s (its hash is now %s); read it again", stale, h1)
	c.refused("write_file", map[string]any{"path": "a.md", "content": "two\n", "if_hash": stale}, msg)
	c.refused("edit_file", map[string]any{"path": "a.md", "old_text": "one", "new_text": "1", "if_hash": stale}, msg)
	c.refused("delete_file", map[string]any{"path": "a.md", "if_hash": stale}, msg)
	c.refused("move_file", map[string]any{"from": "a.md", "to": "b.md", "if_hash": stale}, msg)
	c.refused("write_file", map[string]any{"path": "new.md", "content": "x", "if_hash": stale},
		fmt.Sprintf("conflict: new.md does not exist (expected hash %s)", stale))
	c.is("read_file", map[string]any{"path": "a.md", "numbered": false}, "one\n")

	c.ok("write_file", map[string]any{"path": "a.md", "content": "two\n", "if_hash": h1})
	h2 := satchel.Hash("two\n")
	c.is("edit_file", map[string]any{"path": "a.md", "old_text": "two", "new_text": "three", "if_hash": h2}, "replaced 1 occurrence in a.md")
	h3 := satchel.Hash("three\n")
	c.is("move_file", map[string]any{"from": "a.md", "to": "b.md", "if_hash": h3}, "moved a.md to b.md")
	c.is("delete_file", map[string]any{"path": "b.md", "if_hash": h3}, "deleted b.md")
	c.is("glob", map[string]any{"pattern": "**"}, "no files match **")
}

func TestStatGlobGrepList(t *testing.T) {
	c, _ := newClient(t, Config{})
	c.ok("write_file", map[string]any{"path": "src/main.go", "content": "package main\n\nfunc main() {}\n"})
	c.ok("write_file", map[string]any{"path": "src/util/u.go", "content": "package util\n// TODO: more\n"})
	c.ok("write_file", map[string]any{"path": "notes/todo.md", "content": "- TODO one\n- done\n- TODO two\n"})

	r := c.call("stat_file", map[string]any{"path": "notes/todo.md"})
	m := structured(t, r)
	want := fmt.Sprintf("path: notes/todo.md\nsize: 29\nlines: 3\nmodified: %s\nhash: %s\ntype: text/plain; charset=utf-8", m["modified"], satchel.Hash("- TODO one\n- done\n- TODO two\n"))
	if ts := texts(t, r); r.IsError || len(ts) != 1 || ts[0] != want {
		t.Errorf("stat_file = %q, want %q", ts, want)
	}
	if !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$`).MatchString(m["modified"].(string)) {
		t.Errorf("modified = %v, want RFC 3339 UTC", m["modified"])
	}
	c.refused("stat_file", map[string]any{"path": "nope.md"}, "file not found: nope.md")
	c.refused("stat_file", map[string]any{"path": "src"}, "src is a directory")

	r = c.is("glob", map[string]any{"pattern": "**/*.go"}, "src/main.go\nsrc/util/u.go")
	if m := structured(t, r); fmt.Sprint(m["paths"]) != "[src/main.go src/util/u.go]" {
		t.Errorf("glob structured = %v", m)
	}
	c.is("glob", map[string]any{"pattern": "src/*"}, "src/main.go")
	c.is("glob", map[string]any{"pattern": "*.txt"}, "no files match *.txt")
	c.refused("glob", map[string]any{"pattern": "src/?.go"}, `invalid pattern "src/?.go": ? is not supported (only * and ** are)`)
	c.refused("glob", map[string]any{"pattern": `a\b`}, `invalid pattern "a\\b": pattern does not support backslash escapes`)

	r = c.is("grep", map[string]any{"pattern": "TODO"}, "notes/todo.md:1:- TODO one\nnotes/todo.md:3:- TODO two\nsrc/util/u.go:2:// TODO: more")
	if m := structured(t, r); len(m["matches"].([]any)) != 3 || m["truncated"] != false {
		t.Errorf("grep structured = %v", m)
	}
	c.is("grep", map[string]any{"pattern": "TODO", "path": "src"}, "src/util/u.go:2:// TODO: more")
	c.is("grep", map[string]any{"pattern": "TODO", "path": "src/"}, "src/util/u.go:2:// TODO: more")
	c.is("grep", map[string]any{"pattern": "(?i)todo", "include": "*.md"}, "notes/todo.md:1:- TODO one\nnotes/todo.md:3:- TODO two")
	c.is("grep", map[string]any{"pattern": "TODO", "limit": 1},
		"notes/todo.md:1:- TODO one", "[stopped at the limit of 1 matches: there may be more. Narrow the pattern, path or include, or raise limit]")
	c.is("grep", map[string]any{"pattern": "nothing"}, "no matches for nothing")
	c.refused("grep", map[string]any{"pattern": "("}, "invalid regex \"(\": missing closing ): `(`")
	c.refused("grep", map[string]any{"pattern": ""}, "invalid regex: must not be empty")
	c.refused("grep", map[string]any{"pattern": "x", "limit": 0}, "limit must be at least 1, was 0")

	c.is("list_files", nil, "notes/todo.md\nsrc/main.go\nsrc/util/u.go")
	c.is("list_files", map[string]any{"path": "src"}, "src/main.go\nsrc/util/u.go")
	r = c.is("list_files", map[string]any{"limit": 2}, "notes/todo.md\nsrc/main.go", "[listed the first 2 files: there are more. Raise limit, or list a directory]")
	if m := structured(t, r); m["truncated"] != true {
		t.Errorf("list_files structured = %v", m)
	}
	c.is("list_files", map[string]any{"limit": 3}, "notes/todo.md\nsrc/main.go\nsrc/util/u.go")
	c.is("list_files", map[string]any{"path": "nowhere"}, "", "[no files: directory nowhere is empty or does not exist]")
}

func TestDeleteMove(t *testing.T) {
	c, _ := newClient(t, Config{})
	c.ok("write_file", map[string]any{"path": "a.md", "content": "a"})
	c.ok("write_file", map[string]any{"path": "b.md", "content": "b"})
	c.refused("move_file", map[string]any{"from": "a.md", "to": "b.md"}, "cannot move a.md to b.md: b.md exists (overwrite not requested)")
	c.refused("move_file", map[string]any{"from": "x.md", "to": "y.md"}, "file not found: x.md")
	c.is("move_file", map[string]any{"from": "a.md", "to": "b.md", "overwrite": true}, "moved a.md to b.md")
	c.is("read_file", map[string]any{"path": "b.md", "numbered": false}, "a")
	c.is("move_file", map[string]any{"from": "b.md", "to": "dir/c.md"}, "moved b.md to dir/c.md")
	c.refused("delete_file", map[string]any{"path": "dir"}, "dir is a directory")
	r := c.is("delete_file", map[string]any{"path": "dir/c.md"}, "deleted dir/c.md")
	if m := structured(t, r); m["existed"] != true {
		t.Errorf("delete_file structured = %v", m)
	}
	r = c.is("delete_file", map[string]any{"path": "dir/c.md"}, "dir/c.md did not exist; nothing was deleted") // idempotent
	if m := structured(t, r); m["existed"] != false {
		t.Errorf("delete_file structured = %v", m)
	}
	c.is("list_files", nil, "", "[no files: the workspace is empty]")
}

func TestVersions(t *testing.T) {
	c, s := newClient(t, Config{Agent: "writer"})
	c.ok("write_file", map[string]any{"path": "a.md", "content": "one\n"})
	r := c.is("checkpoint", map[string]any{"name": "v1"}, "checkpoint v1 is commit 1")
	if m := structured(t, r); m["seq"] != float64(1) || fmt.Sprint(m["checkpoints"]) != "[v1]" {
		t.Errorf("checkpoint structured = %v", m)
	}
	c.refused("checkpoint", map[string]any{"name": "v1"}, "checkpoint v1 already exists in thread main")
	c.refused("checkpoint", map[string]any{"name": "123"}, `invalid checkpoint name "123": must not be all digits (a number means a sequence)`)
	c.refused("checkpoint", map[string]any{"name": "head"}, `invalid checkpoint name "head": head already means the thread's head commit`)
	c.ok("write_file", map[string]any{"path": "a.md", "content": "two\n"})
	c.ok("write_file", map[string]any{"path": "b.md", "content": "b\n"})

	c.is("diff", map[string]any{"from": "v1"}, "changed\ta.md\nadded\tb.md")
	c.is("diff", map[string]any{"from": 0, "to": 1}, "added\ta.md")
	r = c.is("diff", map[string]any{"from": "v1", "to": "head", "path": "a.md"}, "--- a/a.md\n+++ b/a.md\n@@ -1 +1 @@\n-one\n+two\n")
	if m := structured(t, r); m["path"] != "a.md" || m["diff"] == nil {
		t.Errorf("diff structured = %v", m)
	}
	c.refused("diff", map[string]any{}, "from is required")
	c.refused("diff", map[string]any{"from": "nope"}, "checkpoint not found: nope")

	r = c.is("restore", map[string]any{"to": "v1"}, "restored v1 as commit 4")
	if m := structured(t, r); m["seq"] != float64(4) || m["op"] != "restore" {
		t.Errorf("restore structured = %v", m)
	}
	c.is("list_files", nil, "a.md")
	c.is("read_file", map[string]any{"path": "a.md", "numbered": false}, "one\n")

	// history: one commit a line, as `satchel log` prints it.
	ws, err := s.cfg.Store.Workspace(context.Background(), "default", "main")
	if err != nil {
		t.Fatal(err)
	}
	cs, err := ws.History(context.Background(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, cm := range cs {
		want = append(want, commitLine(cm))
	}
	r = c.is("history", nil, strings.Join(want, "\n"))
	if len(cs) != 4 || !strings.HasPrefix(want[3], "1\t") || !strings.Contains(want[3], "\tv1\t") {
		t.Errorf("history = %q", want)
	}
	// An empty column is "-": the newest commit has no checkpoint.
	if f := strings.Split(want[0], "\t"); len(f) != 4 || f[2] != "-" {
		t.Errorf("history's newest line %q: want 4 columns, the third \"-\"", want[0])
	}
	if m := structured(t, r); len(m["commits"].([]any)) != 4 {
		t.Errorf("history structured = %v", m)
	}
	c.is("history", map[string]any{"limit": 1}, want[0])

	// Every commit says who made it and through which tool.
	vias := map[string]bool{}
	for _, cm := range cs {
		if cm.Agent != "writer" || cm.Credential != "" {
			t.Errorf("commit %d actor = %+v", cm.Seq, cm.Actor)
		}
		vias[cm.Via] = true
	}
	for _, v := range []string{"mcp:write_file", "mcp:restore"} {
		if !vias[v] {
			t.Errorf("no commit via %s in %v", v, vias)
		}
	}
}

func TestArgumentValidation(t *testing.T) {
	c, _ := newClient(t, Config{})
	// Every problem at once, in the schema's order, unknown arguments first.
	c.refused("write_file", map[string]any{"path": "../x", "if_hash": 3, "scope": "other", "zzz": 1},
		lines(
			`unknown argument "scope": write_file takes path, content, encoding, if_hash, idempotency_key`,
			`unknown argument "zzz": write_file takes path, content, encoding, if_hash, idempotency_key`,
			`invalid path "../x": contains a . or .. segment`,
			"content is required",
			"if_hash must be a string, was 3",
		))
	c.refused("read_file", map[string]any{"path": 7, "start_line": "3", "numbered": "yes", "max_chars": 1.5},
		lines(
			"path must be a string, was 7",
			`start_line must be an integer, was "3"`,
			`numbered must be a boolean (true or false), was "yes"`,
			"max_chars must be an integer, was 1.5",
		))
	c.refused("read_file", nil, "path is required")
	c.refused("edit_file", map[string]any{"path": "a.md"}, "old_text is required\nnew_text is required")
	c.refused("history", map[string]any{"limit": -1}, "limit must be at least 1, was -1")
	c.refused("checkpoint", map[string]any{"name": strings.Repeat("x", 200)}, fmt.Sprintf(`invalid checkpoint name %q: must be 1 to 128 letters, digits, '.', '_' or '-'`, strings.Repeat("x", 200)))
	// JSON null is as good as absent for optional arguments.
	c.ok("write_file", map[string]any{"path": "a.md", "content": "x", "if_hash": nil})
	c.is("read_file", map[string]any{"path": "a.md", "start_line": nil, "at": nil}, "1| x")
	// Arguments that are not an object.
	r, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "glob", Arguments: []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	if ts := texts(t, r); !r.IsError || ts[0] != "the arguments of glob must be a JSON object, were [1]" {
		t.Errorf("non-object arguments: %q", ts)
	}
}

func TestUnknownTool(t *testing.T) {
	c, _ := newClient(t, Config{})
	c.refused("store__notes__set", map[string]any{"key": "x"}, `unknown tool "store__notes__set"`)
}

// TestUnchanged: a tool call that changes nothing makes no commit and says
// so.
func TestUnchanged(t *testing.T) {
	c, _ := newClient(t, Config{Agent: "writer"})
	c.ok("write_file", map[string]any{"path": "a.md", "content": "one\n"})
	c.ok("checkpoint", map[string]any{"name": "v1"})
	r := c.is("write_file", map[string]any{"path": "a.md", "content": "one\n"}, "unchanged: a.md already has this content")
	if m := structured(t, r); m["unchanged"] != true || m["hash"] == nil {
		t.Errorf("write_file structured = %v", m)
	}
	r = c.is("edit_file", map[string]any{"path": "a.md", "old_text": "one", "new_text": "one"}, "unchanged: the replacement leaves a.md as it was")
	if m := structured(t, r); m["unchanged"] != true || m["replaced"] != float64(1) {
		t.Errorf("edit_file structured = %v", m)
	}
	r = c.is("restore", map[string]any{"to": "v1"}, "unchanged: the head (commit 1) already has the files of v1")
	if m := structured(t, r); m["unchanged"] != true || m["seq"] != float64(1) {
		t.Errorf("restore structured = %v", m)
	}
	c.is("history", nil, c.ok("history", map[string]any{"limit": 1}))
}
