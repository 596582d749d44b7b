package mcpserver

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/satchel-dev/satchel"
)

// TestMistypedThreadHeader: a session whose X-Satchel-Thread names a
// thread that does not exist has its reads refused with the CLI's message
// and the scope's threads, instead of an empty workspace; a write still
// creates the thread, whose reads then work.
func TestMistypedThreadHeader(t *testing.T) {
	st := newStore(t)
	s := newServer(t, Config{Store: st})
	url := serveHTTP(t, s)
	secret, _ := token(t, st, satchel.TokenSpec{Agent: "a", Scope: "acme"})

	main := mustDial(t, url, secret, "")
	main.ok("write_file", map[string]any{"path": "notes/plan.md", "content": "plan\n"})
	draft := mustDial(t, url, secret, "draft-2")
	draft.ok("write_file", map[string]any{"path": "a.md", "content": "a\n"})

	typo := mustDial(t, url, secret, "drfat-2")
	const refusal = `thread "drfat-2" does not exist in scope acme; threads: draft-2, main`
	typo.refused("read_file", map[string]any{"path": "a.md"}, refusal)
	typo.refused("glob", map[string]any{"pattern": "**"}, refusal)
	typo.refused("history", map[string]any{}, refusal)
	// So is a resource's read; the resource list is empty, since
	// clients list resources as they connect.
	if _, err := typo.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: FileURI("a.md")}); err == nil || !strings.Contains(err.Error(), refusal) {
		t.Errorf("resources/read on a mistyped thread: %v, want %q", err, refusal)
	}
	if res, err := typo.cs.ListResources(context.Background(), nil); err != nil || len(res.Resources) != 0 {
		t.Errorf("resources/list on a mistyped thread: %v, %v; want none", res, err)
	}
	// The scope's threads can still be listed, and a write creates the
	// thread, as it always did.
	typo.ok("list_threads", map[string]any{})
	typo.ok("write_file", map[string]any{"path": "b.md", "content": "b\n"})
	typo.is("read_file", map[string]any{"path": "b.md", "numbered": false}, "b\n")

	// The default thread (no header) is never refused, even before a write.
	fresh, _ := token(t, st, satchel.TokenSpec{Agent: "a", Scope: "empty"})
	none := mustDial(t, url, fresh, "")
	none.is("glob", map[string]any{"pattern": "**"}, "no files match **")
	// A named thread in a scope without threads says how to make one.
	named := mustDial(t, url, fresh, "work")
	named.refused("glob", map[string]any{"pattern": "**"}, `thread "work" does not exist in scope empty; the scope has no threads yet (the first write makes one)`)
}

// TestInsecureNoAuthWarnsOnce: ListenAndServe with InsecureNoAuth logs
// its warning once, not once for the address and again for the listener.
func TestInsecureNoAuthWarnsOnce(t *testing.T) {
	logs := &logBuffer{}
	s := newServer(t, Config{InsecureNoAuth: true, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.ListenAndServe(ctx, "127.0.0.1:0") }()
	waitFor(t, "the server to start", func() bool { return strings.Contains(logs.String(), "serving MCP over HTTP") })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(logs.String(), "serving without authentication"); n != 1 {
		t.Errorf("the warning was logged %d times:\n%s", n, logs)
	}
}
