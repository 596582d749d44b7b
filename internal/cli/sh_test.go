package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSh: satchel sh -c and SCRIPT.sh, with stdin, the script's exit
// status, one commit per run, --json and the usage errors.
func TestSh(t *testing.T) {
	h := newHarness(t)
	h.ok("fs", "write", "notes.md", "a TODO\nb\n")
	equal(t, "grep | wc", h.ok("sh", "-c", "grep -rn TODO . | wc -l"), "1\n")
	equal(t, "stdin", h.okIn("from stdin\n", "sh", "-c", "read x; echo \"[$x]\" > got.txt; cat got.txt"), "[from stdin]\n")
	log := h.ok("log")
	if !strings.Contains(log, "sh: read x; echo \"[$x]\" > got.txt; cat got.txt") || strings.Count(log, "sh: ") != 1 {
		t.Errorf("log after a read-only run and a writing one:\n%s", log)
	}
	r := h.run("sh", "-c", "echo out; echo err >&2; exit 3")
	if r.Code != 3 || r.Out != "out\n" || r.Err != "err\n" {
		t.Errorf("exit 3: got %+v", r)
	}
	r = h.run("sh", "-c", "curl https://example.com")
	if r.Code != 127 || r.Err != "sh: curl: command not found (satchel sh has only its built-in commands; see satchel sh --help)\n" {
		t.Errorf("curl: got %+v", r)
	}
	script := filepath.Join(t.TempDir(), "fix.sh")
	if err := os.WriteFile(script, []byte("sed -i s/TODO/DONE/ notes.md\ncat notes.md\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	equal(t, "SCRIPT.sh", h.ok("sh", script), "a DONE\nb\n")
	out := h.ok("--json", "sh", "--atomic", "-c", "echo x > y.txt; echo hi")
	if !strings.HasPrefix(out, `{"stdout":"hi\n","stderr":"","exit_status":0,"commit":{"seq":`) || !strings.Contains(out, `"op":"publish"`) {
		t.Errorf("--json --atomic: %s", out)
	}
	h.refused("sh: the output is over --max-output (1 MiB): the run was stopped", "sh", "-c", "seq 10737418240")
	h.refused("sh: the run was stopped after 100 commands (the cap on commands run)", "sh", "--max-commands", "100", "-c", "while true; do :; done")
	h.usage("satchel sh: missing -c SCRIPT or SCRIPT.sh", "sh")
	h.usage("satchel sh: give -c SCRIPT or SCRIPT.sh, not both", "sh", "-c", "true", script)
	help := h.ok("sh", "--help")
	for _, c := range []string{"grep", "jq", "awk", "xargs", "diff"} {
		if !strings.Contains(help, " "+c+" ") {
			t.Errorf("satchel sh --help does not list %s", c)
		}
	}
}

// TestServeShell: run_shell over stdio; each runaway script ends with its
// message and the server goes on serving.
func TestServeShell(t *testing.T) {
	h := newHarness(t)
	stdin, stdout, stderr, wait := h.serving(context.Background(), "serve", "--shell")
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(),
		&mcp.IOTransport{Reader: stdout, Writer: stdin}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr)
	}
	call := func(script string) (string, bool) {
		t.Helper()
		r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_shell", Arguments: map[string]any{"script": script}})
		if err != nil {
			t.Fatal(err)
		}
		return r.Content[0].(*mcp.TextContent).Text, r.IsError
	}
	text, isErr := call("echo hello > h.txt; cat h.txt")
	if isErr || !strings.HasPrefix(text, "hello\n[exit status 0; commit 1: sh: echo hello > h.txt; cat h.txt]") {
		t.Errorf("run_shell: %q (error %v)", text, isErr)
	}
	runaways := map[string]string{
		"seq 10737418240":                   "sh: the output is over --max-output (1 MiB): the run was stopped",
		"seq 10737418240 > f":               "sh: the run's pending writes are over the memory limit (32 MiB): the run was stopped",
		"f() { f | cat; }; f":               "sh: more than 1000 commands run at once (a function that pipes into itself?): the run was stopped",
		"seq 100000 > big; cat big >> big":  "cat: big: input file is output file",
		"yes | head -1":                     "y\n",
		"curl https://example.com; echo $?": "127",
	}
	if !raceDetector { // these take seconds, and many times that under -race
		runaways["while true; do :; done"] = "sh: the run was stopped after 1000000 commands (the cap on commands run)"
		runaways["f() { f; }; f"] = "sh: the calls nest too deeply (a recursive function?): the run was stopped"
	}
	for script, want := range runaways {
		text, _ := call(script)
		if !strings.Contains(text, want) {
			t.Errorf("run_shell %q: %q, want it to say %q", script, text, want)
		}
		if text, isErr := call("cat h.txt"); isErr || !strings.HasPrefix(text, "hello\n") {
			t.Errorf("after %q the server answers %q (error %v)", script, text, isErr)
		}
	}
	// Output over the inline limit is spilled as every tool's is.
	r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_shell", Arguments: map[string]any{"script": "seq 50000"}})
	if err != nil {
		t.Fatal(err)
	}
	if sp, _ := r.StructuredContent.(map[string]any)["spilled"].(map[string]any); r.IsError || sp == nil || !strings.HasPrefix(sp["path"].(string), "spill/") {
		t.Errorf("seq 50000: not spilled: %+v", r.StructuredContent)
	}
	if ok, _ := h.store.Workspace(context.Background(), "default", "main"); ok != nil {
		if e, _ := ok.Exists(context.Background(), "f"); e {
			t.Error("a stopped run committed f")
		}
	}
	_ = cs.Close()
	if code := wait(); code != 0 {
		t.Errorf("serve exited %d: %s", code, stderr)
	}
}
