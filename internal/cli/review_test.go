package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/satchel-dev/satchel"
)

// TestReview: changes of a caller under review are listed, shown,
// approved into the thread or rejected, by the CLI.
func TestReview(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	h.okIn("a\nb\nc\n", "fs", "write", "notes/plan.md")
	agent := satchel.Actor{Agent: "intern", Credential: "0123456789abcdef"}
	ws, err := h.store.Workspace(ctx, "default", "main", satchel.ForReview("s1"), satchel.WorkspaceActor(agent))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ws.StrReplace(ctx, "notes/plan.md", "b", "B", false); err != nil {
		t.Fatal(err)
	}
	listed := h.ok("--json", "review", "list")
	if strings.Contains(listed, `"key"`) || strings.Contains(listed, "s1") {
		t.Errorf("review list --json shows the caller's key: %s", listed)
	}
	rs := decode[[]satchel.Review](t, listed)
	if len(rs) != 1 {
		t.Fatalf("%d reviews, want 1", len(rs))
	}
	id := rs[0].ID
	equal(t, "list", h.ok("review", "list"), id+"\tdefault\tmain\tintern\t1\t0s\topen\n")
	equal(t, "list of another scope", h.ok("review", "list", "--scope", "other"), "")
	equal(t, "show", h.ok("review", "show", id), fmt.Sprintf("review %s: changes of agent intern to thread main of scope default, 1 file (on review-%s from main@1), open\n", id, id)+
		"--- a/notes/plan.md\n+++ b/notes/plan.md\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n")
	equal(t, "the thread is unchanged", h.ok("fs", "read", "notes/plan.md"), "a\nb\nc\n")
	equal(t, "approve", h.ok("review", "approve", id), fmt.Sprintf("approved review %s: merged review-%s@2 into main: commit 2, 1 path changed\n", id, id))
	equal(t, "the thread has the change", h.ok("fs", "read", "notes/plan.md"), "a\nB\nc\n")
	r := h.run("review", "approve", id)
	if r.Code != 1 || !strings.HasPrefix(r.Err, "review "+id+" was approved already, by an operator (cli:review approve) at ") {
		t.Errorf("approving twice: %+v", r)
	}
	equal(t, "no open review", h.ok("review", "list"), "")
	all := h.ok("review", "list", "--state", "all")
	if !strings.HasSuffix(all, "\tapproved\n") {
		t.Errorf("list --state all: %q", all)
	}

	if err := ws.Write(ctx, "new.md", "x\n"); err != nil {
		t.Fatal(err)
	}
	rs = decode[[]satchel.Review](t, h.ok("--json", "review", "list"))
	id2 := rs[0].ID
	equal(t, "reject", h.ok("review", "reject", id2, "--reason", "not now"), "rejected review "+id2+": thread review-"+id2+" is archived\n")
	h.refused("file not found: new.md", "fs", "read", "new.md")
	show := h.ok("review", "show", id2)
	if !strings.Contains(show, ", rejected by an operator (cli:review reject) at ") || !strings.Contains(show, ": not now\n") {
		t.Errorf("show of a rejected review: %q", show)
	}
	h.refused("review not found: R-00000000", "review", "show", "R-00000000")
	h.refused(`invalid review ID "nope": a review ID is R- and 8 digits or capital letters, e.g. R-7K2M9Q4X`, "review", "approve", "nope")
	h.refused(`state must be open, approved or rejected, was "maybe"`, "review", "list", "--state", "maybe")

	// The audit trail names who decided.
	audit := h.ok("audit", "--tool", "cli:review reject")
	if !strings.Contains(audit, "review "+id2+" rejected: not now") {
		t.Errorf("audit: %q", audit)
	}
}

// TestTokenReview: token create --review makes a review token.
func TestTokenReview(t *testing.T) {
	h := newHarness(t)
	tok := decode[tokenCreated](t, h.ok("--json", "token", "create", "--agent", "intern", "--scope", "acme", "--review"))
	equal(t, "review", tok.Review, true)
	if r := h.run("token", "create", "--agent", "senior", "--scope", "acme"); r.Code != 0 {
		t.Fatalf("token create: %+v", r)
	}
	// The plain list says which token is a review token, in its last
	// column; on a terminal, under REVIEW, aligned.
	out := h.ok("token", "list")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], tok.ID+"\tintern\t") || !strings.HasSuffix(lines[0], "\tactive\tyes") ||
		!strings.HasSuffix(lines[1], "\tactive\tno") {
		t.Errorf("token list:\n%s", out)
	}
	tty := isTerminal
	isTerminal = func(io.Writer) bool { return true }
	defer func() { isTerminal = tty }()
	out = h.ok("token", "list")
	lines = strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	col := strings.Index(lines[0], "REVIEW")
	if len(lines) != 3 || !strings.HasSuffix(lines[0], "STATUS  REVIEW") || col < 0 || !strings.HasPrefix(lines[1][col:], "yes") || !strings.HasPrefix(lines[2][col:], "no") {
		t.Errorf("token list on a terminal:\n%s", out)
	}
	h.usage("token create: --operator takes no --review (an operator's token changes nothing)", "token", "create", "--operator", "--review")
}

// TestRunUnderReview: satchel run --agent of an agent whose agent.json
// says "review": true changes a review thread, and says so.
func TestRunUnderReview(t *testing.T) {
	h := newHarness(t)
	dir := t.TempDir()
	for name, content := range map[string]string{
		"agents/intern/agent.json": `{"review": true}`,
		"agents/senior/agent.json": `{}`,
		"edit.lua":                 "store.write(\"notes.md\", \"by the script\\n\")\nprint(store.read(\"notes.md\"))\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := h.run("run", "--dir", dir, "--agent", "intern", filepath.Join(dir, "edit.lua"))
	if r.Code != 0 || r.Out != "by the script\n\n" || !strings.HasPrefix(r.Err, "your changes wait for review R-") {
		t.Fatalf("run under review: %+v", r)
	}
	id := strings.TrimSpace(strings.TrimPrefix(r.Err, "your changes wait for review "))
	h.refused("file not found: notes.md", "fs", "read", "notes.md")
	rs := decode[[]satchel.Review](t, h.ok("--json", "review", "list"))
	if len(rs) != 1 || rs[0].ID != id || rs[0].Files != 1 {
		t.Errorf("reviews %+v, want %s with 1 file", rs, id)
	}
	h.refused("a run whose changes wait for review cannot be atomic: a review reaches the thread whole or not at all already",
		"run", "--dir", dir, "--agent", "intern", "--atomic", filepath.Join(dir, "edit.lua"))
	// An agent without review changes its thread.
	r = h.run("run", "--dir", dir, "--agent", "senior", filepath.Join(dir, "edit.lua"))
	if r.Code != 0 || r.Err != "" {
		t.Fatalf("run without review: %+v", r)
	}
	equal(t, "the thread changed", h.ok("fs", "read", "notes.md"), "by the script\n")
}

// TestServeReviewAgent: over stdio, an agent whose agent.json says
// "review": true changes a review thread, and so does its run_script (a
// review of the run's own).
func TestServeReviewAgent(t *testing.T) {
	h := newHarness(t)
	h.okIn("main\n", "fs", "write", "a.md")
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "agents", "intern"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "agents", "intern", "agent.json"), []byte(`{"review": true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	scripts := t.TempDir()
	writeScript(t, scripts, "w.lua", `store.write("lua.md", "lua\n")`)
	ctx := context.Background()
	stdin, stdout, stderr, wait := h.serving(ctx, "serve", "--agent", "intern", "--dir", dir, "--scripts", scripts)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, &mcp.IOTransport{Reader: stdout, Writer: stdin}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr)
	}
	call := func(name string, args map[string]any) []string {
		t.Helper()
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || r.IsError {
			t.Fatalf("%s: %v %+v", name, err, r)
		}
		var out []string
		for _, c := range r.Content {
			out = append(out, c.(*mcp.TextContent).Text)
		}
		return out
	}
	got := call("write_file", map[string]any{"path": "b.md", "content": "b\n"})
	if len(got) != 2 || !strings.HasPrefix(got[1], "your changes wait for review R-") {
		t.Errorf("write_file under review: %q", got)
	}
	got = call("run_script", map[string]any{"script": "w"})
	if len(got) != 1 || !strings.HasPrefix(got[0], "your changes wait for review R-") {
		t.Errorf("run_script under review: %q", got)
	}
	_ = cs.Close()
	if code := wait(); code != 0 {
		t.Errorf("serve exited %d: %s", code, stderr)
	}
	h.refused("file not found: b.md", "fs", "read", "b.md")
	h.refused("file not found: lua.md", "fs", "read", "lua.md")
	rs := decode[[]satchel.Review](t, h.ok("--json", "review", "list"))
	if len(rs) != 2 || rs[0].Agent != "intern" || rs[1].Agent != "intern" {
		t.Errorf("reviews %+v, want the session's and the run's", rs)
	}
}
