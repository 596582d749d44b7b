package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const summarize = `--[[
name: summarize
description: Summarize the input
input: {path: in/text.md, description: the text}
output: out/summary.md
]]
print("summarizing " .. args)
store.write("out/summary.md", "# " .. store.read("in/text.md"))
`

func writeScript(t *testing.T, dir, name, src string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRun(t *testing.T) {
	h := newHarness(t)
	dir := t.TempDir()
	s := writeScript(t, dir, "summarize.lua", summarize)
	r := h.run("run", s, "--input-text", "hello", "a", "b")
	if r.Code != 0 || r.Out != "summarizing a b\n# hello" {
		t.Fatalf("run: %+v", r)
	}
	out := filepath.Join(dir, "summary.md")
	if r := h.run("run", s, "--input-text", "x", "--output-file", out); r.Code != 0 || r.Out != "summarizing \n" {
		t.Fatalf("--output-file: %+v", r)
	}
	if b, _ := os.ReadFile(out); string(b) != "# x" {
		t.Errorf("output file: %q", b)
	}
	dump := filepath.Join(dir, "dump")
	if r := h.run("run", s, "--input-text", "y", "--dump", dump); r.Code != 0 {
		t.Fatalf("--dump: %+v", r)
	}
	if b, _ := os.ReadFile(filepath.Join(dump, "out", "summary.md")); string(b) != "# y" {
		t.Errorf("dumped: %q", b)
	}
	h.refused("--input-file and --input-text are mutually exclusive; specify one, not both", "run", s, "--input-text", "x", "--input-file", "f")
	h.refused(`cannot read --input-file "`+filepath.Join(dir, "nope")+`": no such file or directory`, "run", s, "--input-file", filepath.Join(dir, "nope"))
	bare := writeScript(t, dir, "bare.lua", `store.write("a.md", "x x")
store.str_replace("a.md", "x", "y")`)
	h.refused("--input-file or --input-text was provided but the script declares no input", "run", bare, "--input-text", "x")
	h.refused("bare.lua:2: anchor occurs 2 times in a.md, expected exactly one", "run", bare)
	lazy := writeScript(t, dir, "lazy.lua", "--[[\noutput: out/none.md\n]]\nprint('no')")
	if r := h.run("run", lazy); r.Code != 1 || r.Err != "the script declares output \"out/none.md\" but it was not produced\n" {
		t.Errorf("not produced: %+v", r)
	}
	loop := writeScript(t, dir, "loop.lua", "while true do end")
	h.refused("script exceeded its time limit (200ms)", "run", loop, "--timeout", "200ms")
	grow := writeScript(t, dir, "grow.lua", `local s = "x" while true do s = s .. s end`)
	h.refused("script exceeded its memory limit (16 MiB)", "run", grow, "--max-memory", "16MiB")
	deep := writeScript(t, dir, "deep.lua", `local function f() return 1 + f() end f()`)
	h.refused("deep.lua:1: stack overflow (calls nest at most 200 deep)", "run", deep)
	if r := h.run("run"); r.Code != 2 || !strings.HasPrefix(r.Err, "satchel run: missing SCRIPT.lua") {
		t.Errorf("run without a script: %+v", r)
	}
	if r := h.run("run", loop, "--max-memory", "lots"); r.Code != 2 {
		t.Errorf("--max-memory lots: %+v", r)
	}
}

func TestServeScripts(t *testing.T) {
	h := newHarness(t)
	dir := t.TempDir()
	writeScript(t, dir, "summarize.lua", summarize)
	writeScript(t, dir, "broken.lua", `local function f() return 1 + f() end f()`)
	writeScript(t, dir, "slow.lua", "--[[\ndescription: takes a while\n]]\nwhile not store.exists('go.md') do end store.write('done.md', 'yes') print('finished')")
	stdin, stdout, stderr, wait := h.serving(context.Background(), "serve", "--scope", "acme", "--scripts", dir)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(),
		&mcp.IOTransport{Reader: stdout, Writer: stdin}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr)
	}
	call := func(name string, args map[string]any) (string, bool, map[string]any) {
		t.Helper()
		r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var sc map[string]any
		if r.StructuredContent != nil {
			b, _ := json.Marshal(r.StructuredContent)
			_ = json.Unmarshal(b, &sc)
		}
		return r.Content[0].(*mcp.TextContent).Text, r.IsError, sc
	}
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var described bool
	for _, tl := range tools.Tools {
		if tl.Name == "run_script" {
			described = strings.Contains(tl.Description, "- summarize.lua: Summarize the input (input in/text.md: the text) (output out/summary.md)") &&
				strings.Contains(tl.Description, "- slow.lua: takes a while")
		}
	}
	if !described {
		t.Errorf("run_script does not describe the scripts: %+v", tools.Tools)
	}
	text, isErr, sc := call("run_script", map[string]any{"script": "summarize.lua", "input_text": "hello", "args": []string{"a"}})
	if isErr || text != "# hello" || sc["printed"] != "summarizing a\n" || sc["state"] != "succeeded" {
		t.Fatalf("run_script: %q %v %v", text, isErr, sc)
	}
	if commits, _ := sc["commits"].([]any); len(commits) != 2 {
		t.Errorf("commits: %v", sc["commits"])
	}
	for _, c := range []struct {
		args map[string]any
		err  string
	}{
		{map[string]any{"script": "summarize.lua", "input_text": "a", "input_file": "b"}, "input_file and input_text are mutually exclusive; specify one, not both"},
		{map[string]any{"script": "slow.lua", "input_text": "a"}, "input_file or input_text was provided but the script declares no input"},
		{map[string]any{"script": "summarize.lua", "input_file": "gone.md"}, `cannot read input_file "gone.md": file not found: gone.md`},
		{map[string]any{"script": "../summarize.lua"}, `invalid script "../summarize.lua": a file name of the scripts directory, without a directory`},
		{map[string]any{"script": "nope"}, "script not found: nope.lua"},
		{map[string]any{"script": "broken.lua"}, "broken.lua:1: stack overflow (calls nest at most 200 deep)"},
	} {
		if text, isErr, _ := call("run_script", c.args); !isErr || text != c.err {
			t.Errorf("run_script %v: %q, want %q", c.args, text, c.err)
		}
	}
	// An atomic run publishes its commits in one.
	if text, isErr, sc := call("run_script", map[string]any{"script": "summarize.lua", "input_text": "atomic", "atomic": true}); isErr || text != "# atomic" || sc["published"] == nil {
		t.Errorf("atomic run_script: %q %v", text, sc)
	}
	// A file of the caller's workspace as the input.
	call("write_file", map[string]any{"path": "notes.md", "content": "from a file"})
	if text, isErr, _ := call("run_script", map[string]any{"script": "summarize", "input_file": "notes.md"}); isErr || text != "# from a file" {
		t.Errorf("input_file: %q", text)
	}
	// A long run returns its id; check_run follows it.
	text, isErr, sc = call("run_script", map[string]any{"script": "slow.lua", "wait_s": 0})
	id, _ := sc["run_id"].(string)
	if isErr || sc["state"] != "running" || !strings.Contains(text, "check_run") {
		t.Fatalf("slow run: %q %v", text, sc)
	}
	if text, _, sc := call("check_run", map[string]any{"run_id": id}); sc["state"] != "running" {
		t.Errorf("check_run while running: %q %v", text, sc)
	}
	call("write_file", map[string]any{"path": "go.md", "content": "go"})
	for {
		text, isErr, sc := call("check_run", map[string]any{"run_id": id})
		if sc["state"] == "running" {
			continue
		}
		if isErr || text != "finished\n" || sc["state"] != "succeeded" {
			t.Errorf("check_run when done: %q %v", text, sc)
		}
		break
	}
	if text, isErr, _ := call("check_run", map[string]any{"run_id": "run-0"}); !isErr || text != "run not found: run-0" {
		t.Errorf("unknown run: %q", text)
	}
	_ = cs.Close()
	if code := wait(); code != 0 {
		t.Errorf("serve exited %d: %s", code, stderr)
	}
}

// TestRunStore: the run's store is the database every command uses
// (--db, else $SATCHEL_DB, else ./satchel.db); memory: only when asked.
// With --json the result is {"output", "printed", "commits"}.
func TestRunStore(t *testing.T) {
	h := newHarness(t)
	s := writeScript(t, t.TempDir(), "w.lua", `store.write("a.md", "x")`)
	h.ok("run", s)
	equal(t, "databases opened", h.dsns, []string{defaultDB})
	h.dsns = nil
	h.env["SATCHEL_DB"] = "env.db"
	h.ok("run", s)
	equal(t, "databases opened", h.dsns, []string{"env.db"})
	h.dsns = nil
	h.ok("--db", "team.db", "--thread", "t1", "run", s)
	equal(t, "databases opened", h.dsns, []string{"team.db"})
	h.dsns = nil
	h.ok("--db", "memory:", "run", s)
	equal(t, "databases opened", h.dsns, []string{"memory:"})

	p := writeScript(t, t.TempDir(), "p.lua", "--[[\nname: p\noutput: out.md\n]]\nprint(\"hi\")\nstore.write(\"out.md\", \"done\")")
	var r struct {
		Output  *string          `json:"output"`
		Printed string           `json:"printed"`
		Commits []map[string]any `json:"commits"`
	}
	out := h.ok("--thread", "t2", "run", p, "--json")
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("run --json: %q: %v", out, err)
	}
	if r.Output == nil || *r.Output != "done" || r.Printed != "hi\n" || len(r.Commits) != 1 {
		t.Errorf("run --json = %s", out)
	}
}
