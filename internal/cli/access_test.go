package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// writeProject writes files (relative path -> content) under a new
// directory and returns it.
func writeProject(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, c := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestTokenFileRules(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	created := decode[tokenCreated](t, h.ok("--json", "token", "create", "--agent", "research", "--scope", "acme", "--files", "notes/**=rw,**=read"))
	if created.Files != "notes/**=rw,**=read" || created.ReadOnly {
		t.Errorf("token create --files: %+v", created)
	}
	ro := decode[tokenCreated](t, h.ok("--json", "token", "create", "--agent", "auditor", "--scope", "acme", "--read-only"))
	if !ro.ReadOnly || ro.Files != "" {
		t.Errorf("token create --read-only: %+v", ro)
	}
	tok, err := h.store.Authenticate(ctx, created.Secret)
	if err != nil || tok.Files != "notes/**=rw,**=read" {
		t.Errorf("the stored token: %+v, %v", tok, err)
	}
	out := h.ok("token", "list")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2 || !strings.HasSuffix(lines[0], "\tnotes/**=rw,**=read\tactive\tno") || !strings.HasSuffix(lines[1], "\tread-only\tactive\tno") {
		t.Errorf("token list:\n%s", out)
	}
	h.usage(`token create: --files: invalid file rules "notes/**=rx": pair 1 "notes/**=rx": unknown access "rx" (want rw, read or none)`,
		"token", "create", "--agent", "research", "--scope", "acme", "--files", "notes/**=rx")
	h.usage("token create: --operator takes no --files or --read-only", "token", "create", "--operator", "--read-only")
}

func TestCheckFileRules(t *testing.T) {
	h := newHarness(t)
	shared := `{"shared": true, "key": "{id}", "schema": {"id": {"type": "string"}}}`
	ok := writeProject(t, map[string]string{
		"stores/companies.json":    shared,
		"agents/writer/agent.json": `{"stores": {"companies": "rw"}, "files": [["secrets/**", "none"], ["**", "rw"]]}`,
	})
	r := h.run("check", "--dir", ok)
	if r.Code != 0 || r.Err != `agents/writer/agent.json: stores.companies: "rw" on a shared store; agents only read shared stores`+"\n" {
		t.Errorf("check with a warning: exit %d, stderr %q", r.Code, r.Err)
	}
	bad := writeProject(t, map[string]string{
		"agents/writer/agent.json": `{"files": [["**", "read"], ["notes/**", "rw"], ["a?", "rw"], ["x", "write"]]}`,
	})
	r = h.run("check", "--dir", bad)
	for _, want := range []string{
		`agents/writer/agent.json: files[1]: ["notes/**", "rw"] can never match: files[0] ["**", "read"] matches every path it does`,
		`agents/writer/agent.json: files[2][0]: invalid pattern "a?": ? is not supported (only * and ** are)`,
		`agents/writer/agent.json: files[3][1]: unknown access "write": want "rw", "read" or "none"`,
	} {
		if r.Code != 1 || !strings.Contains(r.Err, want) {
			t.Errorf("check of bad files: exit %d, stderr lacks %q:\n%s", r.Code, want, r.Err)
		}
	}
}

// TestServeReadOnly: serve --read-only refuses every change; the agent's
// files rules hide what they hide.
func TestServeReadOnly(t *testing.T) {
	h := newHarness(t)
	ws, err := h.store.Workspace(context.Background(), "acme", "main")
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.Write(context.Background(), "secrets/k.md", "TOKEN\n"); err != nil {
		t.Fatal(err)
	}
	if err := ws.Write(context.Background(), "notes/a.md", "a\n"); err != nil {
		t.Fatal(err)
	}
	dir := writeProject(t, map[string]string{"agents/research/agent.json": `{"files": [["secrets/**", "none"], ["**", "rw"]]}`})
	stdin, stdout, stderr, wait := h.serving(context.Background(), "serve", "--dir", dir, "--scope", "acme", "--agent", "research", "--read-only")
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(), &mcp.IOTransport{Reader: stdout, Writer: stdin}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr)
	}
	call := func(name string, args map[string]any) (string, bool) {
		t.Helper()
		r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return r.Content[0].(*mcp.TextContent).Text, r.IsError
	}
	call("read_file", map[string]any{"path": "notes/a.md"})
	if got, isErr := call("write_file", map[string]any{"path": "notes/a.md", "content": "b\n"}); !isErr || got != "notes/a.md is read-only for agent research" {
		t.Errorf("write under --read-only: %q", got)
	}
	if got, isErr := call("read_file", map[string]any{"path": "secrets/k.md"}); !isErr || got != "file not found: secrets/k.md" {
		t.Errorf("read of a hidden file: %q", got)
	}
	if got, _ := call("glob", map[string]any{"pattern": "**"}); strings.Contains(got, "secrets") || !strings.Contains(got, "notes/a.md") {
		t.Errorf("glob: %q", got)
	}
	_ = cs.Close()
	if code := wait(); code != 0 {
		t.Errorf("serve exited %d: %s", code, stderr)
	}
	if !strings.Contains(stderr.String(), `"msg":"file access refused"`) || !strings.Contains(stderr.String(), `"reason":"read_only"`) {
		t.Errorf("the refusal is not logged:\n%s", stderr)
	}
}

// TestRunAgentFileRules: satchel run --agent holds store.* to the agent's
// files rules.
func TestRunAgentFileRules(t *testing.T) {
	h := newHarness(t)
	dir := writeProject(t, map[string]string{
		"agents/research/agent.json": `{"files": [["notes/**", "rw"], ["**", "read"]]}`,
		"w.lua":                      `store.write("notes/a.md", "ok\n"); store.write("top.md", "no\n")`,
	})
	r := h.run("run", filepath.Join(dir, "w.lua"), "--dir", dir, "--agent", "research")
	if r.Code != 1 || !strings.Contains(r.Err, "w.lua:1: top.md is read-only for agent research") {
		t.Errorf("run --agent: exit %d, stderr %q", r.Code, r.Err)
	}
	ws, _ := h.store.Workspace(context.Background(), "default", "main")
	if got, err := ws.Read(context.Background(), "notes/a.md"); err != nil || got != "ok\n" {
		t.Errorf("notes/a.md = %q, %v", got, err)
	}
	if ok, _ := ws.Exists(context.Background(), "top.md"); ok {
		t.Errorf("top.md was written")
	}
}
