package mcpserver

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/luahost"
)

// The test binary doubles as a stdio server: with SATCHEL_TEST_STDIO_DB
// set, TestMain serves that database on standard input and output, as
// `satchel serve` does, instead of running the tests. It is also the
// child process of script runs (luahost.ChildMain).
func TestMain(m *testing.M) {
	luahost.ChildMain()
	if db := os.Getenv("SATCHEL_TEST_STDIO_DB"); db != "" {
		os.Exit(serveStdio(db))
	}
	os.Exit(m.Run())
}

func serveStdio(db string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	st, err := satchel.Open(ctx, db)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer st.Close()
	s, err := New(Config{
		Store: st, Scope: os.Getenv("SATCHEL_TEST_SCOPE"), Agent: "stdio-agent", Thread: os.Getenv("SATCHEL_TEST_THREAD"),
		Logger: slog.New(slog.NewJSONHandler(os.Stderr, nil)),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := s.Run(ctx, &IOTransport{Reader: os.Stdin, Writer: nopWriteCloser{os.Stdout}}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// lockedBuffer is a concurrency-safe stderr sink.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func stdioClient(t *testing.T, db, scope, thread string) (*client, *lockedBuffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SATCHEL_TEST_STDIO_DB="+db, "SATCHEL_TEST_SCOPE="+scope, "SATCHEL_TEST_THREAD="+thread)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "stdio-test"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("starting the stdio server: %v\n%s", err, stderr)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return &client{t: t, cs: cs}, stderr
}

func TestStdio(t *testing.T) {
	db := filepath.Join(t.TempDir(), "satchel.db")
	c, stderr := stdioClient(t, db, "acme", "")
	c.is("write_file", map[string]any{"path": "notes/a.md", "content": "hello\nworld\n"}, "wrote 12 bytes to notes/a.md")
	c.is("read_file", map[string]any{"path": "notes/a.md", "start_line": 2}, "2| world")
	c.refused("edit_file", map[string]any{"path": "notes/a.md", "old_text": "o", "new_text": "0"}, "anchor occurs 2 times in notes/a.md, expected exactly one")
	c.refused("read_file", map[string]any{"path": "../x"}, `invalid path "../x": contains a . or .. segment`)
	if err := c.cs.Close(); err != nil {
		t.Errorf("closing: %v", err)
	}
	// Logs went to standard error, as JSON, never into the protocol.
	if !strings.Contains(stderr.String(), `"msg":"tool call"`) || !strings.Contains(stderr.String(), `"scope":"acme"`) {
		t.Errorf("stderr = %s", stderr)
	}

	// A second process sees what the first stored, in its scope only.
	c2, _ := stdioClient(t, db, "acme", "")
	c2.is("glob", map[string]any{"pattern": "**"}, "notes/a.md")
	c3, _ := stdioClient(t, db, "other", "")
	c3.is("glob", map[string]any{"pattern": "**"}, "no files match **")
	c4, _ := stdioClient(t, db, "acme", "side")
	c4.is("glob", map[string]any{"pattern": "**"}, "no files match **")

	st, err := satchel.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ws, err := st.Workspace(context.Background(), "acme", "main")
	if err != nil {
		t.Fatal(err)
	}
	cs, err := ws.History(context.Background(), 0, 1)
	if err != nil || len(cs) != 1 || cs[0].Agent != "stdio-agent" || cs[0].Via != "mcp:write_file" {
		t.Errorf("history = %+v, %v", cs, err)
	}
}

func TestRunFinishesCallsInFlight(t *testing.T) {
	fc := newFakeCollections()
	s := newServer(t, Config{Collections: fc, Agent: "writer"})
	ctx, cancel := context.WithCancel(context.Background())
	// Over satchel's stdio transport a call counts until its answer is
	// written (over another transport, only until its handler returns).
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, &IOTransport{Reader: inR, Writer: outW}) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	type result struct {
		r   *mcp.CallToolResult
		err error
	}
	got := make(chan result, 1)
	go func() {
		r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "store__slow__get", Arguments: map[string]any{}})
		got <- result{r, err}
	}()
	for {
		fc.mu.Lock()
		n := len(fc.calls)
		fc.mu.Unlock()
		if n > 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	for draining := false; !draining; { // Run has begun its shutdown
		s.draining.Range(func(any, any) bool { draining = true; return false })
		time.Sleep(time.Millisecond)
	}
	close(fc.slow)
	r := <-got
	if r.err != nil || r.r.IsError {
		t.Errorf("the call in flight: %v %+v", r.err, r.r)
	}
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
}
