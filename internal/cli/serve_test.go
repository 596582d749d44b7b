package cli

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/satchel-dev/satchel"
)

// syncBuffer is a buffer safe for a server's logs and a test's reads.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// serving runs `satchel args...` in the background against the harness's
// store, with pipes for standard input and output, and returns a function
// that waits for its exit code.
func (h *harness) serving(ctx context.Context, args ...string) (stdin *io.PipeWriter, stdout *io.PipeReader, stderr *syncBuffer, wait func() int) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	stderr = &syncBuffer{}
	a := newApp(inR, outW, stderr)
	a.getenv = func(k string) string { return h.env[k] }
	a.openStore = func(_ context.Context, dsn string) (*satchel.Store, error) {
		h.dsns = append(h.dsns, dsn)
		return h.store, nil
	}
	a.closeStore = false
	done := make(chan int, 1)
	go func() {
		code := run(ctx, a, args)
		_ = outW.Close()
		done <- code
	}()
	return inW, outR, stderr, func() int { return <-done }
}

func TestServeStdio(t *testing.T) {
	h := newHarness(t)
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "agents", "cli-agent"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "agents", "cli-agent", "agent.json"), []byte(`{"stores": {}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	stdin, stdout, stderr, wait := h.serving(context.Background(), "serve", "--dir", dir, "--scope", "acme", "--agent", "cli-agent", "--tool-prefix", "ws_")
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(),
		&mcp.IOTransport{Reader: stdout, Writer: stdin}, nil)
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
	if got, isErr := call("ws_write_file", map[string]any{"path": "a.md", "content": "x\n"}); isErr || got != "wrote 2 bytes to a.md" {
		t.Errorf("write_file: %q", got)
	}
	if got, isErr := call("ws_read_file", map[string]any{"path": "missing.md"}); !isErr || got != "file not found: missing.md" {
		t.Errorf("read_file of a missing file: %q", got)
	}
	_ = cs.Close()
	if code := wait(); code != 0 {
		t.Errorf("serve exited %d: %s", code, stderr)
	}
	if !strings.Contains(stderr.String(), `"msg":"serving MCP on stdio"`) {
		t.Errorf("stderr = %s", stderr)
	}
	// What the session wrote is in --scope, by --agent, through the tool.
	ws, err := h.store.Workspace(context.Background(), "acme", "main")
	if err != nil {
		t.Fatal(err)
	}
	cm, err := ws.History(context.Background(), 0, 1)
	if err != nil || len(cm) != 1 || cm[0].Agent != "cli-agent" || cm[0].Via != "mcp:write_file" {
		t.Errorf("history = %+v, %v", cm, err)
	}
}

func TestServeWithoutFlags(t *testing.T) {
	h := newHarness(t)
	// Standard input ends at once: the session ends, serve exits 0.
	r := h.run("serve")
	if r.Code != 0 || r.Out != "" {
		t.Errorf("serve: %+v", r)
	}
	equal(t, "databases opened", h.dsns, []string{"./satchel.db"})
	if !strings.Contains(r.Err, `"scope":"default","thread":"main"`) {
		t.Errorf("stderr = %s", r.Err)
	}
}

func TestServeRefusals(t *testing.T) {
	h := newHarness(t)
	h.refused("refusing to listen on 0.0.0.0:0: it is not a loopback address and no access token exists; create one with `satchel token create --agent NAME --scope SCOPE`, or listen on 127.0.0.1",
		"serve", "--http", "0.0.0.0:0")
	missing := filepath.Join(t.TempDir(), "nope")
	_, err := satchel.LoadProject(missing)
	h.refused(err.Error(), "serve", "--dir", missing)
	h.refused(`invalid agent name "Bad": a name is lowercase letters, digits, - and _, starting with a letter, at most 48 characters`, "serve", "--agent", "Bad")
	h.refused(`invalid thread name "1": must not be all digits (a number means a sequence)`, "serve", "--thread", "1")
	// An agent's tools come from a project: without one, serving only the
	// file tools would hide the mistake.
	h.refused("agent research needs a project directory with agents/research/agent.json; give --dir", "serve", "--agent", "research")
	h.refused("agent research needs a project directory with agents/research/agent.json; give --dir", "serve", "--agent", "research", "--http", "127.0.0.1:0", "--insecure-no-auth")
	h.usage(`--log-level must be debug, info, warn or error, was "loud"`, "serve", "--log-level", "loud")
	h.usage("--call-timeout must be positive", "serve", "--call-timeout", "0s")
	h.usage(`unknown command "x" for "satchel serve"`, "serve", "x")
}

func TestServeHTTP(t *testing.T) {
	h := newHarness(t)
	secret, _, err := h.store.CreateToken(context.Background(), satchel.TokenSpec{Agent: "web", Scope: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, _, stderr, wait := h.serving(ctx, "serve", "--http", "127.0.0.1:0", "--log-level", "debug")
	var addr string
	re := regexp.MustCompile(`"addr":"(127\.0\.0\.1:\d+)"`)
	for deadline := time.Now().Add(time.Minute); addr == ""; {
		if m := re.FindStringSubmatch(stderr.String()); m != nil {
			addr = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("the server never listened: %s", stderr)
		} else {
			time.Sleep(5 * time.Millisecond)
		}
	}
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("healthz: %d", resp.StatusCode)
	}
	resp, err = http.Post("http://"+addr+"/mcp", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("without a token: %d", resp.StatusCode)
	}
	hc := &http.Client{Transport: bearerTransport(secret)}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": "w.md", "content": "web"}})
	if err != nil || r.IsError {
		t.Fatalf("write_file over HTTP: %v %+v", err, r)
	}
	_ = cs.Close()
	cancel()
	if code := wait(); code != 0 {
		t.Errorf("serve exited %d: %s", code, stderr)
	}
	if got, err := func() (string, error) {
		ws, err := h.store.Workspace(context.Background(), "acme", "main")
		if err != nil {
			return "", err
		}
		return ws.Read(context.Background(), "w.md")
	}(); err != nil || got != "web" {
		t.Errorf("the file written over HTTP: %q, %v", got, err)
	}
}

type bearerTransport string

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

func TestServeProject(t *testing.T) {
	h := newHarness(t)
	dir := t.TempDir()
	for name, data := range map[string]string{
		"stores/notes.json":        `{"name": "notes", "entity": {"name": "Note", "key": "{id}", "schema": {"id": {"type": "string"}, "text": {"type": "string"}}}}`,
		"agents/writer/agent.json": `{"name": "Writer", "stores": {"notes": "rw"}}`,
		"agents/reader/agent.json": `{"name": "Reader", "stores": {"notes": "read"}}`,
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	session := func(agent string) (*mcp.ClientSession, func() int) {
		stdin, stdout, stderr, wait := h.serving(context.Background(), "serve", "--dir", dir, "--scope", "acme", "--agent", agent)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(),
			&mcp.IOTransport{Reader: stdout, Writer: stdin}, nil)
		if err != nil {
			t.Fatalf("connect: %v\n%s", err, stderr)
		}
		return cs, wait
	}
	call := func(cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
		t.Helper()
		r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return r.Content[0].(*mcp.TextContent).Text, r.IsError
	}
	w, waitW := session("writer")
	if got, isErr := call(w, "store__notes__set", map[string]any{"id": "a", "text": "hi"}); isErr || got != `{"key":"a","version":1}` {
		t.Errorf("writer set: %q", got)
	}
	_ = w.Close()
	r, waitR := session("reader")
	if got, isErr := call(r, "store__notes__set", map[string]any{"id": "b", "text": "no"}); !isErr || got != `unknown tool "store__notes__set"` {
		t.Errorf("reader set: %q", got)
	}
	if got, isErr := call(r, "store__notes__get", map[string]any{"key": "a"}); isErr || !strings.Contains(got, `"text":"hi"`) {
		t.Errorf("reader get: %q", got)
	}
	_ = r.Close()
	if waitW() != 0 || waitR() != 0 {
		t.Errorf("serve did not exit 0")
	}
	h.refused(`collection tools of agent "ghost": agent "ghost" not found (agents: reader, writer)`, "serve", "--dir", dir, "--agent", "ghost")
}
