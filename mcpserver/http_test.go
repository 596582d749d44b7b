package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/loopback"
)

// headerTransport adds headers to every request.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	return h.base.RoundTrip(r)
}

// dialHTTP opens an MCP session over streamable HTTP with the given
// token and thread header, at 2025-11-25 (the tests of sessions).
func dialHTTP(t *testing.T, url, token, thread string) (*client, error) {
	t.Helper()
	return dialHTTPAt(t, url, token, thread, "2025-11-25")
}

// dialHTTPAt is dialHTTP at a protocol version the client proposes.
func dialHTTPAt(t *testing.T, url, token, thread, version string) (*client, error) {
	t.Helper()
	h := map[string]string{}
	if token != "" {
		h["Authorization"] = "Bearer " + token
	}
	if thread != "" {
		h[ThreadHeader] = thread
	}
	tr := &mcp.StreamableClientTransport{
		Endpoint:   url + MCPPath,
		HTTPClient: &http.Client{Transport: headerTransport{http.DefaultTransport, h}},
		MaxRetries: -1,
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { _ = cs.Close() })
	return &client{t: t, cs: cs}, nil
}

func mustDial(t *testing.T, url, token, thread string) *client {
	t.Helper()
	c, err := dialHTTP(t, url, token, thread)
	if err != nil {
		t.Fatalf("connecting: %v", err)
	}
	return c
}

func token(t *testing.T, st *satchel.Store, spec satchel.TokenSpec) (string, satchel.Token) {
	t.Helper()
	secret, tok, err := st.CreateToken(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	return secret, tok
}

// httpFixture is a server over HTTP with collections.
type httpFixture struct {
	st   *satchel.Store
	s    *Server
	fc   *fakeCollections
	url  string
	logs *logBuffer
}

func newHTTP(t *testing.T, cfg Config) *httpFixture {
	t.Helper()
	f := &httpFixture{st: cfg.Store, fc: newFakeCollections(), logs: &logBuffer{}}
	if f.st == nil {
		f.st = newStore(t)
	}
	cfg.Store = f.st
	cfg.Collections = f.fc
	cfg.Logger = slog.New(slog.NewJSONHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	f.s = newServer(t, cfg)
	ts := httptest.NewServer(f.s.Handler())
	t.Cleanup(ts.Close)
	f.url = ts.URL
	return f
}

func TestHTTPScopesAreIsolated(t *testing.T) {
	f := newHTTP(t, Config{})
	secretA, tokA := token(t, f.st, satchel.TokenSpec{Agent: "writer", Scope: "acme"})
	secretB, _ := token(t, f.st, satchel.TokenSpec{Agent: "writer", Scope: "beta"})

	a := mustDial(t, f.url, secretA, "")
	b := mustDial(t, f.url, secretB, "")
	a.ok("write_file", map[string]any{"path": "secret.md", "content": "acme only\n"})
	a.ok("store__notes__set", map[string]any{"key": "k", "text": "acme doc"})
	b.ok("write_file", map[string]any{"path": "other.md", "content": "beta\n"})

	// Neither scope sees the other's files or documents.
	a.is("glob", map[string]any{"pattern": "**"}, "secret.md")
	b.is("glob", map[string]any{"pattern": "**"}, "other.md")
	b.refused("read_file", map[string]any{"path": "secret.md"}, "file not found: secret.md")
	b.is("grep", map[string]any{"pattern": "acme"}, "no matches for acme")
	b.is("store__notes__get", map[string]any{"key": "k"}, `{"found":false}`)
	a.is("store__notes__get", map[string]any{"key": "k"}, `{"document":{"text":"acme doc"},"found":true,"key":"k"}`)
	res, err := b.cs.ListResources(context.Background(), nil)
	if err != nil || len(res.Resources) != 1 || res.Resources[0].Name != "other.md" {
		t.Errorf("beta's resources = %+v, %v", res, err)
	}
	if _, err := b.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "satchel:///secret.md"}); err == nil {
		t.Errorf("beta reads acme's file as a resource")
	}
	// No argument can name a scope.
	b.refused("read_file", map[string]any{"path": "secret.md", "scope": "acme"},
		`unknown argument "scope": read_file takes path, start_line, end_line, numbered, at, max_chars, start_char`)

	// The commits record the agent, the token and the tool.
	ws, err := f.st.Workspace(context.Background(), "acme", "main")
	if err != nil {
		t.Fatal(err)
	}
	cs, err := ws.History(context.Background(), 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if cs[0].Agent != "writer" || cs[0].Credential != tokA.ID || cs[0].Via != "mcp:write_file" {
		t.Errorf("commit actor = %+v", cs[0].Actor)
	}
}

func TestHTTPAgentAccess(t *testing.T) {
	f := newHTTP(t, Config{})
	rs, _ := token(t, f.st, satchel.TokenSpec{Agent: "reader", Scope: "acme"})
	ws, _ := token(t, f.st, satchel.TokenSpec{Agent: "writer", Scope: "acme"})
	rg, _ := token(t, f.st, satchel.TokenSpec{Agent: "rogue", Scope: "acme"})
	reader := mustDial(t, f.url, rs, "")
	writer := mustDial(t, f.url, ws, "")
	rogue := mustDial(t, f.url, rg, "")

	if toolNames(t, reader.cs)["store__notes__set"] || !toolNames(t, writer.cs)["store__notes__set"] {
		t.Errorf("tools are not per agent")
	}
	reader.refused("store__notes__set", map[string]any{"key": "k", "text": "x"}, `unknown tool "store__notes__set"`)
	writer.ok("store__notes__set", map[string]any{"key": "k", "text": "x"})
	reader.is("store__notes__get", map[string]any{"key": "k"}, `{"document":{"text":"x"},"found":true,"key":"k"}`)
	rogue.refused("store__library__set", map[string]any{"key": "k"}, `store "library" is shared (read-only): writes are not allowed`)
	reader.refused("store__library__set", map[string]any{"key": "k"}, `unknown tool "store__library__set"`)
}

func TestHTTPThreads(t *testing.T) {
	f := newHTTP(t, Config{})
	free, _ := token(t, f.st, satchel.TokenSpec{Agent: "writer", Scope: "acme"})
	bound, tb := token(t, f.st, satchel.TokenSpec{Agent: "writer", Scope: "acme", Thread: "fixed"})

	draft := mustDial(t, f.url, free, "draft")
	draft.ok("write_file", map[string]any{"path": "d.md", "content": "draft\n"})
	main := mustDial(t, f.url, free, "")
	main.is("glob", map[string]any{"pattern": "*"}, "no files match *")
	fixed := mustDial(t, f.url, bound, "")
	fixed.ok("write_file", map[string]any{"path": "f.md", "content": "fixed\n"})
	mustDial(t, f.url, bound, "fixed").is("glob", map[string]any{"pattern": "*"}, "f.md")
	mustDial(t, f.url, free, "draft").is("glob", map[string]any{"pattern": "*"}, "d.md")

	if _, err := dialHTTP(t, f.url, bound, "other"); err == nil {
		t.Errorf("a token bound to a thread opened another")
	}
	code, body, _ := post(t, f.url+MCPPath, bound, map[string]string{ThreadHeader: "other"}, initialize)
	if want := `token ` + tb.ID + ` is bound to thread "fixed": X-Satchel-Thread "other" is not allowed`; code != 403 || body != want {
		t.Errorf("bound token, other thread: %d %q, want 403 %q", code, body, want)
	}
	code, body, _ = post(t, f.url+MCPPath, free, map[string]string{ThreadHeader: "12"}, initialize)
	if code != 400 || body != `invalid thread name "12": must not be all digits (a number means a sequence)` {
		t.Errorf("invalid thread: %d %q", code, body)
	}
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// post sends one JSON-RPC message and returns the status, the body less
// its last newline, and the response.
func post(t *testing.T, url, secret string, headers map[string]string, body string) (int, string, *http.Response) {
	t.Helper()
	code, text, resp, err := postFrom(url, secret, headers, body)
	if err != nil {
		t.Fatal(err)
	}
	return code, text, resp
}

// postFrom is post for a goroutine other than the test's: it returns its
// error rather than ending the test.
func postFrom(url, secret string, headers map[string]string, body string) (int, string, *http.Response, error) {
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		return 0, "", nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if secret != "" {
		req.Header.Set("Authorization", "Bearer "+secret)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSuffix(string(b), "\n"), resp, nil
}

func TestHTTPUnauthorized(t *testing.T) {
	f := newHTTP(t, Config{})
	good, _ := token(t, f.st, satchel.TokenSpec{Agent: "writer", Scope: "acme"})
	revoked, tr := token(t, f.st, satchel.TokenSpec{Agent: "writer", Scope: "acme"})
	expired, te := token(t, f.st, satchel.TokenSpec{Agent: "writer", Scope: "acme", Expires: time.Millisecond})
	if err := f.st.RevokeToken(context.Background(), tr.ID); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)

	cases := []struct{ name, secret, body string }{
		{"missing", "", "missing bearer token: send Authorization: Bearer <token> (make one with satchel token create)"},
		{"invalid", "stk_nope", "invalid token"},
		{"tampered", good[:len(good)-2] + "xx", "invalid token"},
		{"revoked", revoked, "token " + tr.ID + " was revoked"},
		{"expired", expired, "token " + te.ID + " expired at " + te.Expires.UTC().Format(time.RFC3339)},
	}
	for _, c := range cases {
		code, body, resp := post(t, f.url+MCPPath, c.secret, nil, initialize)
		wantAuth := `Bearer realm="satchel", resource_metadata="` + f.url + ProtectedResourcePath + `"`
		if code != http.StatusUnauthorized || body != c.body || resp.Header.Get("WWW-Authenticate") != wantAuth {
			t.Errorf("%s token: %d %q (WWW-Authenticate %q), want 401 %q", c.name, code, body, resp.Header.Get("WWW-Authenticate"), c.body)
		}
		if _, err := dialHTTP(t, f.url, c.secret, ""); err == nil {
			t.Errorf("%s token: the client connected", c.name)
		}
	}
	if code, _, _ := post(t, f.url+MCPPath, good, nil, initialize); code != http.StatusOK {
		t.Errorf("good token: %d", code)
	}

	// Revoking a token ends its open sessions at their first request
	// once the last check is older than the interval (the server's clock
	// is moved here; TestTokenRevocationTakesEffectWithinInterval waits).
	clock := &fakeClock{t: time.Now()}
	f.s.tokens.now = clock.now
	secret, tok := token(t, f.st, satchel.TokenSpec{Agent: "writer", Scope: "acme"})
	c := mustDial(t, f.url, secret, "")
	c.ok("write_file", map[string]any{"path": "a.md", "content": "a"})
	if err := f.st.RevokeToken(context.Background(), tok.ID); err != nil {
		t.Fatal(err)
	}
	clock.advance(DefaultTokenCheckInterval)
	if _, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "glob", Arguments: map[string]any{"pattern": "*"}}); err == nil {
		t.Errorf("a revoked token's session still works")
	}
}

func TestHTTPSessionHijack(t *testing.T) {
	f := newHTTP(t, Config{})
	a, _ := token(t, f.st, satchel.TokenSpec{Agent: "writer", Scope: "acme"})
	b, _ := token(t, f.st, satchel.TokenSpec{Agent: "writer", Scope: "beta"})
	code, _, resp := post(t, f.url+MCPPath, a, nil, initialize)
	sid := resp.Header.Get("Mcp-Session-Id")
	if code != 200 || sid == "" {
		t.Fatalf("initialize: %d, session %q", code, sid)
	}
	code, _, _ = post(t, f.url+MCPPath, b, map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-06-18"},
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"glob","arguments":{"pattern":"*"}}}`)
	if code != http.StatusForbidden {
		t.Errorf("another token on a session: %d, want 403", code)
	}
}

func TestHTTPHostCheckHealthAndLimits(t *testing.T) {
	f := newHTTP(t, Config{MaxRequestBytes: 4096})
	secret, _ := token(t, f.st, satchel.TokenSpec{Agent: "writer", Scope: "acme"})

	resp, err := http.Get(f.url + HealthPath)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "ok\n" || resp.Header.Get(RequestIDHeader) == "" {
		t.Errorf("healthz: %d %q", resp.StatusCode, b)
	}

	for _, path := range []string{HealthPath, MetricsPath, MCPPath} {
		req, _ := http.NewRequest("GET", f.url+path, nil)
		req.Host = "evil.example.com"
		req.Header.Set("Authorization", "Bearer "+secret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s with a forged Host: %d, want 403", path, resp.StatusCode)
		}
	}
	req, _ := http.NewRequest("GET", f.url+HealthPath, nil)
	req.Host = "localhost:1234"
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Errorf("Host localhost: %v %v", resp, err)
	}

	big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 5000) + `"}}`
	if code, _, _ := post(t, f.url+MCPPath, secret, nil, big); code != http.StatusRequestEntityTooLarge {
		t.Errorf("a body over the limit: %d, want 413", code)
	}
}

func TestHTTPMetricsAndLogs(t *testing.T) {
	f := newHTTP(t, Config{})
	secret, tok := token(t, f.st, satchel.TokenSpec{Agent: "writer", Scope: "acme"})
	c := mustDial(t, f.url, secret, "")
	c.ok("write_file", map[string]any{"path": "a.md", "content": "12345"})
	c.ok("append_file", map[string]any{"path": "a.md", "content": "678"})
	c.refused("read_file", map[string]any{"path": "b.md"}, "file not found: b.md")
	c.ok("read_file", map[string]any{"path": "a.md"})
	post(t, f.url+MCPPath, "", nil, initialize)

	resp, err := http.Get(f.url + MetricsPath)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := string(b)
	for _, want := range []string{
		`satchel_mcp_tool_calls_total{tool="read_file"} 2`,
		`satchel_mcp_tool_calls_total{tool="write_file"} 1`,
		`satchel_mcp_tool_errors_total{tool="read_file"} 1`,
		`satchel_mcp_tool_duration_seconds_count{tool="append_file"} 1`,
		`satchel_mcp_stored_bytes_total 8`,
		`satchel_mcp_http_unauthorized_total 1`,
		`satchel_mcp_sessions 1`,
		`go_goroutines`,
	} {
		if !strings.Contains(m, want+"\n") && !strings.Contains(m, want+" ") {
			t.Errorf("metrics lack %q", want)
		}
	}

	// Structured logs: one JSON object a line; every tool call with its
	// request id, who called and the outcome.
	var calls int
	sc := bufio.NewScanner(strings.NewReader(f.logs.String()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e map[string]any
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		if e["tool"] == nil {
			continue
		}
		calls++
		if id, _ := e["request_id"].(string); len(id) < 8 || e["scope"] != "acme" || e["agent"] != "writer" || e["session"] == "" {
			t.Errorf("tool log = %v", e)
		}
		if e["tool"] == "read_file" && e["msg"] == "tool call refused" && (e["error"] != "file not found: b.md" || e["kind"] != "not_found") {
			t.Errorf("refusal log = %v", e)
		}
	}
	if calls != 4 {
		t.Errorf("%d tool calls logged, want 4", calls)
	}
	if strings.Contains(f.logs.String(), secret) {
		t.Errorf("the logs hold a token's secret")
	}
	if !strings.Contains(f.logs.String(), tok.ID) {
		t.Errorf("the logs do not name the token")
	}
}

func TestListenRefusesExposureWithoutTokens(t *testing.T) {
	st := newStore(t)
	s := newServer(t, Config{Store: st})
	ctx := context.Background()
	err := s.ListenAndServe(ctx, "0.0.0.0:0")
	want := "refusing to listen on 0.0.0.0:0: it is not a loopback address and no access token exists; create one with `satchel token create --agent NAME --scope SCOPE`, or listen on 127.0.0.1"
	if err == nil || err.Error() != want {
		t.Errorf("ListenAndServe(0.0.0.0:0) = %v", err)
	}
	if err := s.ListenAndServe(ctx, ":0"); err == nil {
		t.Errorf("ListenAndServe(:0) without tokens was allowed")
	}
	// A revoked token is no token.
	_, tok := token(t, st, satchel.TokenSpec{Agent: "a", Scope: "acme"})
	_ = st.RevokeToken(ctx, tok.ID)
	if err := s.ListenAndServe(ctx, "0.0.0.0:0"); err == nil {
		t.Errorf("a revoked token allowed a non-loopback address")
	}
	// With a token, or on loopback, it serves (until its context ends).
	token(t, st, satchel.TokenSpec{Agent: "a", Scope: "acme"})
	for _, addr := range []string{"127.0.0.1:0", "0.0.0.0:0"} {
		cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		if err := s.ListenAndServe(cctx, addr); err != nil {
			t.Errorf("ListenAndServe(%s) with a token: %v", addr, err)
		}
		cancel()
	}
}

func TestGracefulShutdown(t *testing.T) {
	st := newStore(t)
	fc := newFakeCollections()
	s := newServer(t, Config{Store: st, Collections: fc})
	secret, _ := token(t, st, satchel.TokenSpec{Agent: "writer", Scope: "acme"})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()
	c := mustDial(t, "http://"+ln.Addr().String(), secret, "")

	var wg sync.WaitGroup
	var res *mcp.CallToolResult
	var callErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		res, callErr = c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "store__slow__get", Arguments: map[string]any{}})
	}()
	// Wait for the call to be in flight, then shut down.
	for deadline := time.Now().Add(5 * time.Second); ; {
		fc.mu.Lock()
		n := len(fc.calls)
		fc.mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the call never started")
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	// New connections are refused while the call finishes (once Serve,
	// woken by the cancel, has closed its listener).
	waitFor(t, "the listener to refuse connections", func() bool {
		c, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second)
		if err == nil {
			_ = c.Close()
		}
		return err != nil
	})
	select {
	case err := <-served:
		t.Fatalf("Serve returned with a call in flight: %v", err)
	default:
	}
	close(fc.slow)
	wg.Wait()
	if callErr != nil || res.IsError {
		t.Errorf("the call in flight: %v %+v", callErr, res)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after the call finished")
	}
}

func TestIsLoopback(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "localhost:80": true, "LOCALHOST": true, "127.0.0.1": true, "127.0.0.1:8080": true,
		"[::1]:8080": true, "::1": true, "127.1.2.3": true,
		"0.0.0.0": false, "": false, "example.com": false, "10.0.0.1:80": false, "[::]:80": false, "localhost.evil.com": false,
	} {
		if loopback.Host(host) != want {
			t.Errorf("loopback.Host(%q) = %v", host, !want)
		}
	}
}

func TestHTTPSessionKeepsItsThread(t *testing.T) {
	f := newHTTP(t, Config{})
	secret, _ := token(t, f.st, satchel.TokenSpec{Agent: "writer", Scope: "acme"})
	code, _, resp := post(t, f.url+MCPPath, secret, map[string]string{ThreadHeader: "draft"}, initialize)
	sid := resp.Header.Get("Mcp-Session-Id")
	if code != 200 || sid == "" {
		t.Fatalf("initialize: %d %q", code, sid)
	}
	h := func(thread string) map[string]string {
		m := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-06-18"}
		if thread != "" {
			m[ThreadHeader] = thread
		}
		return m
	}
	if code, body, _ := post(t, f.url+MCPPath, secret, h(""), `{"jsonrpc":"2.0","method":"notifications/initialized"}`); code != http.StatusAccepted {
		t.Fatalf("initialized: %d %q", code, body)
	}
	write := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"a.md","content":"x"}}}`
	_, body, _ := post(t, f.url+MCPPath, secret, h("other"), write)
	if !strings.Contains(body, `this session works on thread \"draft\"; X-Satchel-Thread \"other\" cannot change it (open a new session)`) {
		t.Errorf("changing thread within a session: %q", body)
	}
	for i, th := range []string{"draft", ""} {
		// The second write is of the same content: unchanged, on draft.
		want := []string{`wrote 1 bytes to a.md`, `unchanged: a.md already has this content`}[i]
		if _, body, _ := post(t, f.url+MCPPath, secret, h(th), write); !strings.Contains(body, want) {
			t.Errorf("header %q: %q", th, body)
		}
	}
	ws, _ := f.st.Workspace(context.Background(), "acme", "draft")
	if got, err := ws.Read(context.Background(), "a.md"); err != nil || got != "x" {
		t.Errorf("draft/a.md = %q, %v", got, err)
	}
	ws, _ = f.st.Workspace(context.Background(), "acme", "other")
	if ok, _ := ws.Exists(context.Background(), "a.md"); ok {
		t.Errorf("the write reached thread other")
	}
}

func TestHTTPUnknownAgent(t *testing.T) {
	f := newHTTP(t, Config{})
	secret, _ := token(t, f.st, satchel.TokenSpec{Agent: "broken", Scope: "acme"})
	code, body, _ := post(t, f.url+MCPPath, secret, nil, initialize)
	if code != http.StatusInternalServerError || body != `collection tools of agent "broken": agents/broken/agent.json: bad` {
		t.Errorf("an agent whose tools fail: %d %q", code, body)
	}
}

// A call is answered with one JSON body (decision 0069), not an event
// stream: Content-Type application/json, the JSON-RPC response as the body.
func TestHTTPAnswersCallsAsJSON(t *testing.T) {
	f := newHTTP(t, Config{})
	secret, _ := token(t, f.st, satchel.TokenSpec{Agent: "writer", Scope: "acme"})
	code, _, resp := post(t, f.url+MCPPath, secret, nil, initialize)
	sid := resp.Header.Get("Mcp-Session-Id")
	if code != 200 || sid == "" {
		t.Fatalf("initialize: %d, session %q", code, sid)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("initialize answered as %q", ct)
	}
	h := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-06-18"}
	if code, body, _ := post(t, f.url+MCPPath, secret, h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); code != http.StatusAccepted {
		t.Fatalf("initialized: %d %q", code, body)
	}
	code, body, resp := post(t, f.url+MCPPath, secret, h,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"a.md","content":"x\n"}}}`)
	if code != 200 || resp.Header.Get("Content-Type") != "application/json" || resp.ContentLength <= 0 {
		t.Fatalf("tools/call: %d %q (Content-Type %q, Content-Length %d)", code, body, resp.Header.Get("Content-Type"), resp.ContentLength)
	}
	var msg struct {
		ID     int `json:"id"`
		Result struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(body), &msg); err != nil || msg.ID != 7 || msg.Result.IsError || len(msg.Result.Content) == 0 {
		t.Errorf("tools/call body %q: %+v, %v", body, msg, err)
	}
}
