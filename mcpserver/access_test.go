package mcpserver

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/satcheltest"
)

// accessCall is the MCP tool call of a case of the file rules table.
func accessCall(c satcheltest.AccessCase) (string, map[string]any) {
	from, to, _ := strings.Cut(c.Path, " -> ")
	switch c.Op {
	case "read":
		return "read_file", map[string]any{"path": c.Path}
	case "write":
		return "write_file", map[string]any{"path": c.Path, "content": "new\n"}
	case "append":
		return "append_file", map[string]any{"path": c.Path, "content": "more\n"}
	case "edit":
		return "edit_file", map[string]any{"path": c.Path, "old_text": "e", "new_text": "E", "replace_all": true}
	case "delete":
		return "delete_file", map[string]any{"path": c.Path}
	case "move":
		return "move_file", map[string]any{"from": from, "to": to}
	case "stat":
		return "stat_file", map[string]any{"path": c.Path}
	case "glob":
		return "glob", map[string]any{"pattern": c.Path}
	case "list":
		return "list_files", map[string]any{}
	case "grep":
		return "grep", map[string]any{"pattern": c.Path}
	case "history":
		return "history", map[string]any{}
	case "diff":
		return "diff", map[string]any{"from": c.Path}
	case "restore":
		return "restore", map[string]any{"to": c.Path}
	}
	panic("unknown op " + c.Op)
}

// runAccessMCP makes a case's call on cs and checks the answer.
func runAccessMCP(t *testing.T, cs *mcp.ClientSession, c satcheltest.AccessCase) {
	t.Helper()
	name, args := accessCall(c)
	r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %s: %v", c.Name, name, err)
	}
	var b strings.Builder
	for _, item := range r.Content {
		if tc, ok := item.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
			b.WriteString("\n")
		}
	}
	if r.StructuredContent != nil {
		fmt.Fprintf(&b, "%v", r.StructuredContent)
	}
	out, errText := b.String(), ""
	if r.IsError {
		out, errText = "", b.String()
	}
	satcheltest.CheckAccessCase(t, c, out, errText, false)
}

// rulesOf parses a case's rules in flag form ("" is nil).
func rulesOf(t *testing.T, s string) satchel.FileRules {
	t.Helper()
	if s == "" {
		return nil
	}
	r, err := satchel.ParseFileRules(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// setUpAccess writes the table's files in a thread of its own.
func setUpAccess(t *testing.T, st *satchel.Store, scope, thread string) {
	t.Helper()
	ws, err := st.Workspace(context.Background(), scope, thread)
	if err != nil {
		t.Fatal(err)
	}
	if err := satcheltest.SetUpAccess(context.Background(), ws); err != nil {
		t.Fatal(err)
	}
}

// TestAccessTableStdio runs the file rules table through MCP over
// satchel's stdio transport: the agent's rules from AgentFiles, the
// token's as the server's FileRules, ReadOnly as serve --read-only.
func TestAccessTableStdio(t *testing.T) {
	for _, kind := range []string{"memory", "sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			st, _ := openShared(t, kind)
			accessTableStdio(t, st)
		})
	}
}

func accessTableStdio(t *testing.T, st *satchel.Store) {
	for i, c := range satcheltest.AccessCases() {
		thread := fmt.Sprintf("stdio-%d", i)
		setUpAccess(t, st, "default", thread)
		agent := rulesOf(t, c.Agent)
		s := newServer(t, Config{Store: st, Agent: satcheltest.AccessAgent, Thread: thread, StaleWrites: StaleOff,
			AgentFiles: func(string) satchel.FileRules { return agent }, FileRules: rulesOf(t, c.Token), ReadOnly: c.ReadOnly})
		ctx, cancel := context.WithCancel(context.Background())
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		done := make(chan error, 1)
		go func() { done <- s.Run(ctx, &IOTransport{Reader: inR, Writer: outW}) }()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
		if err != nil {
			t.Fatal(err)
		}
		runAccessMCP(t, cs, c)
		cs.Close()
		cancel()
		<-done
	}
}

// TestAccessTableHTTP runs the table over streamable HTTP: the token
// carries its rules and --read-only, the agent's come from AgentFiles.
func TestAccessTableHTTP(t *testing.T) {
	for _, kind := range []string{"memory", "sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			st, _ := openShared(t, kind)
			accessTableHTTP(t, st)
		})
	}
}

func accessTableHTTP(t *testing.T, st *satchel.Store) {
	servers := map[string]string{} // agent rules -> URL
	for i, c := range satcheltest.AccessCases() {
		url, ok := servers[c.Agent]
		if !ok {
			agent := rulesOf(t, c.Agent)
			s := newServer(t, Config{Store: st, StaleWrites: StaleOff, AgentFiles: func(string) satchel.FileRules { return agent }})
			ts := httptest.NewServer(s.Handler())
			t.Cleanup(ts.Close)
			url, servers[c.Agent] = ts.URL, ts.URL
		}
		thread := fmt.Sprintf("http-%d", i)
		setUpAccess(t, st, "acme", thread)
		secret, _ := token(t, st, satchel.TokenSpec{Agent: satcheltest.AccessAgent, Scope: "acme", Thread: thread,
			Files: rulesOf(t, c.Token), ReadOnly: c.ReadOnly})
		cl := mustDial(t, url, secret, "")
		runAccessMCP(t, cl.cs, c)
	}
}

// TestAccessResources: resources/list leaves hidden files out and
// resources/read answers as for a missing file; the refusals are counted
// in /metrics by agent and reason.
func TestAccessResources(t *testing.T) {
	f := newHTTP(t, Config{AgentFiles: func(string) satchel.FileRules { return rulesOf(t, satcheltest.RulesAgent) }})
	setUpAccess(t, f.st, "acme", "main")
	secret, _ := token(t, f.st, satchel.TokenSpec{Agent: satcheltest.AccessAgent, Scope: "acme", Files: rulesOf(t, "private/**=none,**=rw")})
	c := mustDial(t, f.url, secret, "")
	res, err := c.cs.ListResources(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range res.Resources {
		uris = append(uris, r.URI)
	}
	got := strings.Join(uris, " ")
	if !strings.Contains(got, "notes/a.md") || strings.Contains(got, "secrets") || strings.Contains(got, "private") {
		t.Errorf("resources = %s", got)
	}
	_, err = c.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: FileURI("secrets/key.md")})
	if err == nil || !strings.Contains(err.Error(), "file not found: secrets/key.md") {
		t.Errorf("read a hidden resource: %v", err)
	}
	c.refused("write_file", map[string]any{"path": "docs/readme.md", "content": "x"}, "docs/readme.md is read-only for agent research")
	// A missing path near a hidden one suggests nothing.
	c.refused("read_file", map[string]any{"path": "secrets/key.mdx"}, "file not found: secrets/key.mdx")

	resp, err := http.Get(f.url + MetricsPath)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`satchel_access_refusals_total{agent="research",reason="read_only"} 1`,
		`satchel_access_refusals_total{agent="research",reason="hidden"}`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("metrics lack %q:\n%s", want, grepLines(string(b), "satchel_access"))
		}
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestReadOnlyDocuments: serve --read-only and a --read-only token refuse
// the collection tools that change documents, and serve those that read.
func TestReadOnlyDocuments(t *testing.T) {
	fc := newFakeCollections()
	c, _ := newClient(t, Config{Collections: fc, Agent: "writer", ReadOnly: true})
	c.refused("store__notes__set", map[string]any{"key": "a", "text": "x"},
		"store__notes__set changes documents: agent writer may only read here (--read-only)")
	c.ok("store__notes__get", map[string]any{"key": "a"})

	f := newHTTP(t, Config{})
	secret, _ := token(t, f.st, satchel.TokenSpec{Agent: "writer", Scope: "acme", ReadOnly: true})
	h := mustDial(t, f.url, secret, "")
	h.refused("store__notes__set", map[string]any{"key": "a", "text": "x"},
		"store__notes__set changes documents: agent writer may only read here (--read-only)")
	open, _ := token(t, f.st, satchel.TokenSpec{Agent: "writer", Scope: "acme"})
	mustDial(t, f.url, open, "").ok("store__notes__set", map[string]any{"key": "a", "text": "x"})
}
