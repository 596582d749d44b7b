package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/satchel-dev/satchel"
)

// newStore returns a memory store closed with the test.
func newStore(t testing.TB) *satchel.Store {
	t.Helper()
	st, err := satchel.Open(context.Background(), "memory:")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// logBuffer collects a server's JSON logs.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// newServer returns a server over cfg.Store (a new memory store when nil)
// whose logs are discarded unless cfg.Logger is set.
func newServer(t testing.TB, cfg Config) *Server {
	t.Helper()
	if cfg.Store == nil {
		cfg.Store = newStore(t)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewJSONHandler(io.Discard, nil))
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// connect runs s over an in-memory transport (as stdio would, with the
// configured identity) and returns a client session closed with the test.
func connect(t testing.TB, s *Server) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ct, st := mcp.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return cs
}

// client wraps a session with assertions.
type client struct {
	t  testing.TB
	cs *mcp.ClientSession
}

func newClient(t testing.TB, cfg Config) (*client, *Server) {
	t.Helper()
	s := newServer(t, cfg)
	return &client{t: t, cs: connect(t, s)}, s
}

// call calls a tool; a protocol error fails the test.
func (c *client) call(name string, args any) *mcp.CallToolResult {
	c.t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	r, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		c.t.Fatalf("%s: %v", name, err)
	}
	return r
}

// texts returns the text items of a result.
func texts(t testing.TB, r *mcp.CallToolResult) []string {
	t.Helper()
	var out []string
	for _, c := range r.Content {
		tc, ok := c.(*mcp.TextContent)
		if !ok {
			t.Fatalf("content item %T, want text", c)
		}
		out = append(out, tc.Text)
	}
	return out
}

// ok calls a tool that must succeed with one text item, and returns it.
func (c *client) ok(name string, args any) string {
	c.t.Helper()
	r := c.call(name, args)
	ts := texts(c.t, r)
	if r.IsError {
		c.t.Fatalf("%s %s: refused: %q", name, short(args), ts)
	}
	if len(ts) != 1 {
		c.t.Fatalf("%s %s: %d items %q, want 1", name, short(args), len(ts), short(ts))
	}
	return ts[0]
}

// is checks that a tool succeeds with exactly the text items want.
func (c *client) is(name string, args any, want ...string) *mcp.CallToolResult {
	c.t.Helper()
	r := c.call(name, args)
	ts := texts(c.t, r)
	if r.IsError || !equal(ts, want) {
		c.t.Errorf("%s %s:\n got %s (error %v)\nwant %s", name, short(args), short(ts), r.IsError, short(want))
	}
	return r
}

// refused checks that a tool is refused with exactly msg.
func (c *client) refused(name string, args any, msg string) {
	c.t.Helper()
	r := c.call(name, args)
	ts := texts(c.t, r)
	if !r.IsError || len(ts) != 1 || ts[0] != msg {
		c.t.Errorf("%s %s:\n got %q (error %v)\nwant refusal %q", name, short(args), short(ts), r.IsError, msg)
	}
	if r.StructuredContent != nil {
		c.t.Errorf("%s: a refusal carries structured content %v", name, r.StructuredContent)
	}
}

// structured returns a result's structured content re-decoded as generic
// JSON.
func structured(t testing.TB, r *mcp.CallToolResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(r.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
	return m
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func lines(s ...string) string { return strings.Join(s, "\n") }

// short renders v for a message, cut to 300 bytes.
func short(v any) string {
	s := fmt.Sprintf("%q", v)
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}
