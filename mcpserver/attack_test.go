package mcpserver

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/satchel-dev/satchel"
)

// One token opening sessions without end used to hold them all for an
// hour. Sessions are bounded per token and in all, and the excess is
// refused with an HTTP error that says which bound.
func TestAttackSessionFlood(t *testing.T) {
	f := newHTTP(t, Config{MaxSessionsPerToken: 3, MaxSessions: 5})
	a, _ := token(t, f.st, satchel.TokenSpec{Agent: "writer", Scope: "acme"})
	b, _ := token(t, f.st, satchel.TokenSpec{Agent: "writer", Scope: "beta"})
	var first string
	for i := range 3 {
		code, body, resp := post(t, f.url+MCPPath, a, nil, initialize)
		if code != http.StatusOK {
			t.Fatalf("session %d of a: %d %s", i, code, body)
		}
		if i == 0 {
			first = resp.Header.Get("Mcp-Session-Id")
		}
	}
	code, body, _ := post(t, f.url+MCPPath, a, nil, initialize)
	if code != http.StatusTooManyRequests || !strings.Contains(body, "too many open sessions for this token: 3") {
		t.Fatalf("a's fourth MCP session: %d %q, want 429", code, body)
	}
	for i := range 2 {
		if code, body, _ := post(t, f.url+MCPPath, b, nil, initialize); code != http.StatusOK {
			t.Fatalf("session %d of b: %d %s", i, code, body)
		}
	}
	code, body, resp := post(t, f.url+MCPPath, b, nil, initialize)
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "the server has 5 open sessions") || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("the sixth session: %d %q, want 503", code, body)
	}

	// Ending a session gives its place back.
	req, _ := http.NewRequest(http.MethodDelete, f.url+MCPPath, nil)
	req.Header.Set("Authorization", "Bearer "+a)
	req.Header.Set("Mcp-Session-Id", first)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	dresp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	dresp.Body.Close()
	waitFor(t, "the ended session's place", func() bool {
		code, _, _ := post(t, f.url+MCPPath, a, nil, initialize)
		return code == http.StatusOK
	})
}

// Idle sessions expire after SessionIdleTimeout, giving their place back.
func TestAttackIdleSessionsExpire(t *testing.T) {
	f := newHTTP(t, Config{MaxSessionsPerToken: 1, SessionIdleTimeout: 50 * time.Millisecond})
	a, _ := token(t, f.st, satchel.TokenSpec{Agent: "writer", Scope: "acme"})
	if code, body, _ := post(t, f.url+MCPPath, a, nil, initialize); code != http.StatusOK {
		t.Fatalf("initialize: %d %s", code, body)
	}
	waitFor(t, "the idle session to expire", func() bool {
		code, _, _ := post(t, f.url+MCPPath, a, nil, initialize)
		return code == http.StatusOK
	})
	if DefaultSessionIdleTimeout > 10*time.Minute {
		t.Errorf("idle sessions live %s by default", DefaultSessionIdleTimeout)
	}
}

// waitFor retries cond, a request each time, until it holds (at most 20 s).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("waited 20 s for %s", what)
}

// countingReader counts the bytes read from it.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// A body that says it is over the limit is refused before a byte of it
// is read (it used to be read, up to the limit, then refused).
func TestAttackBodyOverTheLimitIsNotRead(t *testing.T) {
	f := newHTTP(t, Config{MaxRequestBytes: 4096})
	secret, _ := token(t, f.st, satchel.TokenSpec{Agent: "writer", Scope: "acme"})
	body := &countingReader{r: strings.NewReader(strings.Repeat("x", 1<<20))}
	req := httptest.NewRequest(http.MethodPost, MCPPath, body)
	req.ContentLength = 1 << 20
	req.Header.Set("Authorization", "Bearer "+secret)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", "anything")
	rec := httptest.NewRecorder()
	f.s.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusRequestEntityTooLarge || !strings.Contains(rec.Body.String(), "exceeds the limit of 4096 bytes") {
		t.Fatalf("%d %q, want 413", rec.Code, rec.Body.String())
	}
	if n := body.n.Load(); n != 0 {
		t.Fatalf("%d bytes of the refused body were read", n)
	}
}

// The bytes of the bodies in flight share one budget, charged as they
// arrive: while one request holds it all, another waits, then is refused
// (503), and passes once the first is done.
func TestAttackBytesInFlight(t *testing.T) {
	const limit = 64 << 10
	f := newHTTP(t, Config{MaxRequestBytes: limit, MaxInflightBytes: limit})
	f.s.guards.wait = 50 * time.Millisecond
	secret, _ := token(t, f.st, satchel.TokenSpec{Agent: "writer", Scope: "acme"})

	pr, pw := io.Pipe()
	t.Cleanup(func() { pw.CloseWithError(io.ErrUnexpectedEOF) })
	req, _ := http.NewRequest(http.MethodPost, f.url+MCPPath, pr)
	req.ContentLength = limit
	req.Header.Set("Authorization", "Bearer "+secret)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	// The first request holds the budget once its bytes arrive: all but
	// a few, fewer than an initialize.
	if _, err := pw.Write([]byte(strings.Repeat(" ", limit-16))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the budget to be taken", func() bool { return f.s.guards.bytes.usedNow() == limit-16 })
	code, body, resp := post(t, f.url+MCPPath, secret, nil, initialize)
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "the server is busy") || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("a request while the budget is held: %d %q, want 503", code, body)
	}
	pw.CloseWithError(io.ErrUnexpectedEOF)
	<-done
	waitFor(t, "the budget to come back", func() bool { return f.s.guards.bytes.usedNow() == 0 })
	if code, body, _ := post(t, f.url+MCPPath, secret, nil, initialize); code != http.StatusOK {
		t.Fatalf("after the budget came back: %d %q", code, body)
	}
}

// slowBody starts a POST that declares size bytes, sends first, and then
// nothing until the test ends; it returns the channel its status arrives
// on (0 when the request failed).
func slowBody(t *testing.T, url, secret, sid string, size int64, first string) <-chan int {
	t.Helper()
	pr, pw := io.Pipe()
	t.Cleanup(func() { pw.CloseWithError(io.ErrUnexpectedEOF) })
	req, _ := http.NewRequest(http.MethodPost, url+MCPPath, pr)
	req.ContentLength = size
	req.Header.Set("Authorization", "Bearer "+secret)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set(sessionIDHeader, sid)
		req.Header.Set(protocolVersionHeader, "2025-06-18")
	}
	status := make(chan int, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			status <- 0
			return
		}
		resp.Body.Close()
		status <- resp.StatusCode
	}()
	if _, err := pw.Write([]byte(first)); err != nil {
		t.Fatal(err)
	}
	return status
}

// Four tokens that sent the headers of 8 MiB bodies and then a byte now
// and then used to hold the whole budget of bytes in flight (charged as
// declared), keeping every other client at 503. The budget is charged by
// the bytes received: the others pass at once.
func TestAttackSlowBodies(t *testing.T) {
	f := newHTTP(t, Config{})
	for i := range 4 {
		secret, _ := token(t, f.st, satchel.TokenSpec{Agent: "writer", Scope: fmt.Sprintf("slow%d", i)})
		slowBody(t, f.url, secret, "", DefaultMaxRequestBytes, `{"jsonrpc":"2.0",`)
	}
	waitFor(t, "the slow bodies to arrive", func() bool { return f.s.guards.bytes.usedNow() >= 4*int64(len(`{"jsonrpc":"2.0",`)) })
	secret, _ := token(t, f.st, satchel.TokenSpec{Agent: "writer", Scope: "acme"})
	h := rawSession(t, f, secret, "2025-06-18")
	code, body, _ := post(t, f.url+MCPPath, secret, h, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"a.md","content":"x"}}}`)
	if code != http.StatusOK || strings.Contains(body, `"isError":true`) {
		t.Fatalf("a call beside the slow bodies: %d %q", code, body)
	}
	if used := f.s.guards.bytes.usedNow(); used > 4<<10 {
		t.Errorf("the slow bodies hold %d bytes of the budget, having sent %d", used, 4*len(`{"jsonrpc":"2.0",`))
	}
}

// A body has --body-read-timeout to arrive: past it the request gets 408
// (its connection closed) and gives its bytes back, with a session or
// without one. The deadline ends with the body: a call that takes longer
// than it to answer is answered (the request's context is not ended by
// the deadline passing).
func TestAttackBodyReadTimeout(t *testing.T) {
	const timeout = 150 * time.Millisecond
	f := newHTTP(t, Config{BodyReadTimeout: timeout})
	secret, _ := token(t, f.st, satchel.TokenSpec{Agent: "writer", Scope: "acme"})
	h := rawSession(t, f, secret, "2025-06-18")
	for _, sid := range []string{"", h[sessionIDHeader]} {
		select {
		case code := <-slowBody(t, f.url, secret, sid, 1000, `{"jsonrpc":"2.0",`):
			if code != http.StatusRequestTimeout {
				t.Errorf("a body that stops (session %q): %d, want 408", sid, code)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("a body that stops (session %q) is still waited for after 20 s", sid)
		}
	}
	waitFor(t, "the budget to come back", func() bool { return f.s.guards.bytes.usedNow() == 0 })
	if !strings.Contains(f.logs.String(), "the request body did not arrive within 150ms (--body-read-timeout)") {
		t.Errorf("the log does not say why:\n%s", f.logs.String())
	}

	// A slow call after a quick body (with _meta, so through the SDK's
	// dispatch, which gives up the call when the request's context ends).
	type answer struct {
		code int
		body string
	}
	got := make(chan answer, 1)
	go func() {
		code, body, _, err := postFrom(f.url+MCPPath, secret, h, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"store__slow__get","arguments":{},"_meta":{}}}`)
		if err != nil {
			body = err.Error()
		}
		got <- answer{code, body}
	}()
	<-f.fc.started
	time.Sleep(3 * timeout) // the call outlives the body's deadline
	close(f.fc.slow)
	if a := <-got; a.code != http.StatusOK || !strings.Contains(a.body, `"found":false`) {
		t.Errorf("a call slower than the body's deadline: %d %q", a.code, a.body)
	}
}

// A call with no session used to get HTTP 200 and a JSON-RPC error of
// code 0; it gets 400 saying the session is missing.
func TestAttackCallWithoutSession(t *testing.T) {
	f := newHTTP(t, Config{})
	secret, _ := token(t, f.st, satchel.TokenSpec{Agent: "writer", Scope: "acme"})
	code, body, _ := post(t, f.url+MCPPath, secret, map[string]string{"Mcp-Protocol-Version": "2025-06-18"},
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"glob","arguments":{"pattern":"*"}}}`)
	if code != http.StatusBadRequest || !strings.HasPrefix(body, `missing session: "tools/call" needs the Mcp-Session-Id header`) {
		t.Fatalf("tools/call without a session: %d %q, want 400", code, body)
	}
}

// A grep that its call's deadline stops answers with the matches so far
// and says it stopped (it used to answer an empty OK after the deadline).
func TestAttackGrepStoppedOverMCP(t *testing.T) {
	// The files are written with the default call timeout: a write of a
	// megabyte on a busy machine can take longer than a short one. The
	// grep's deadline is long enough for a.txt on a busy machine and far
	// from the tens of seconds the pattern takes over big.txt.
	st := newStore(t)
	w, _ := newClient(t, Config{Store: st})
	w.ok("write_file", map[string]any{"path": "a.txt", "content": "b\n"})
	w.ok("write_file", map[string]any{"path": "big.txt", "content": strings.Repeat("x", 1<<20)})
	c, _ := newClient(t, Config{Store: st, CallTimeout: 2 * time.Second})
	r := c.call("grep", map[string]any{"pattern": `.{1000}.{1000}.{1000}b|^b$`})
	ts := texts(t, r)
	if r.IsError || len(ts) != 2 || ts[0] != "a.txt:1:b" || !strings.HasPrefix(ts[1], "[grep stopped at the call's deadline") {
		t.Fatalf("grep at its deadline: error %v, %q", r.IsError, ts)
	}
	if m := structured(t, r); m["stopped"] == nil {
		t.Fatalf("structured content does not say it stopped: %v", m)
	}
}

// /metrics describes every scope: open on loopback, and elsewhere only to
// an operator's token.
func TestAttackMetricsOffLoopback(t *testing.T) {
	f := newHTTP(t, Config{})
	agent, _ := token(t, f.st, satchel.TokenSpec{Agent: "writer", Scope: "acme"})
	op, _ := token(t, f.st, satchel.TokenSpec{Operator: true})
	get := func(secret string, local string) (int, string) {
		req := httptest.NewRequest(http.MethodGet, MetricsPath, nil)
		req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.ParseIP(local), Port: 8080}))
		req.Host = local + ":8080"
		if secret != "" {
			req.Header.Set("Authorization", "Bearer "+secret)
		}
		rec := httptest.NewRecorder()
		f.s.Handler().ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	if code, body := get("", "127.0.0.1"); code != http.StatusOK || !strings.Contains(body, "satchel_mcp_sessions") {
		t.Errorf("on loopback without a token: %d", code)
	}
	const public = "192.0.2.10" // a documentation address: the request is handed to the handler, never sent
	if code, body := get("", public); code != http.StatusUnauthorized || !strings.Contains(body, "needs an operator token") {
		t.Errorf("off loopback without a token: %d %q", code, body)
	}
	if code, body := get(agent, public); code != http.StatusForbidden || !strings.Contains(body, "is an agent's token") {
		t.Errorf("off loopback with an agent's token: %d %q", code, body)
	}
	if code, body := get(op, public); code != http.StatusOK || !strings.Contains(body, "satchel_mcp_sessions") {
		t.Errorf("off loopback with an operator token: %d", code)
	}
}

// One token holds at most a quarter of the bytes in flight (or one
// request of the largest size): a client that sends large bodies without
// pause leaves room for the others.
func TestAttackBytesInFlightPerToken(t *testing.T) {
	b := newByteSemaphore(64<<10, 16<<10)
	ctx := context.Background()
	if !b.acquire(ctx, "a", 16<<10, time.Millisecond) {
		t.Fatal("a's first request was refused")
	}
	if b.acquire(ctx, "a", 1, time.Millisecond) {
		t.Fatal("a went past its share")
	}
	if !b.acquire(ctx, "b", 16<<10, time.Millisecond) {
		t.Fatal("b was refused while a held its share")
	}
	b.release("a", 16<<10)
	if !b.acquire(ctx, "a", 1, time.Millisecond) {
		t.Fatal("a was refused after its release")
	}
}

// An Mcp-Protocol-Version the server does not speak used to reach the
// SDK's handler whenever it sorted after 2026-07-28 ("9999-12-31",
// "garbage"), which answered 404 "session not found" for a live session.
// Every such value gets 400 naming the supported versions, whatever the
// session and the method.
func TestAttackBadProtocolVersion(t *testing.T) {
	f := newHTTP(t, Config{})
	secret, _ := token(t, f.st, satchel.TokenSpec{Agent: "writer", Scope: "acme"})
	h := rawSession(t, f, secret, "2025-06-18")
	want := "supported versions: " + strings.Join(mcp.SupportedProtocolVersions(), ",")
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	for _, v := range []string{"9999-12-31", "garbage", "2026-07-29", "2025-06-18x", "2025-06-1", "2024-01-01", "zzzz", "\u00e9t\u00e9"} {
		for _, sid := range []string{h[sessionIDHeader], "nosuch", ""} {
			hd := with(h, protocolVersionHeader, v, sessionIDHeader, sid)
			for _, m := range []struct{ method, body string }{{"POST", ping}, {"POST", initialize}, {"GET", ""}, {"DELETE", ""}} {
				code, body, _ := send(t, m.method, f.url+MCPPath, secret,
					with(hd, "Content-Type", "application/json", "Accept", "application/json, text/event-stream"), m.body)
				if code != http.StatusBadRequest || !strings.Contains(body, want) {
					t.Errorf("%s with version %q, session %q: %d %q, want 400 naming %s", m.method, v, sid, code, body, want)
				}
			}
		}
	}
	// The session is still open, and its version still served.
	if code, body, _ := post(t, f.url+MCPPath, secret, h, ping); code != http.StatusOK {
		t.Errorf("the session after the refusals: %d %q", code, body)
	}
}

// Bodies are charged as they arrive, so two bodies may each hold part of
// a token's share and need more: only the oldest of the bodies holding
// bytes waits for room; a younger one is refused at once and gives its
// bytes back, so the two never wait for each other until both fail.
func TestAttackBodiesDoNotWaitForEachOther(t *testing.T) {
	const share = 64 << 10
	sem := newByteSemaphore(4*share, share)
	older := &chargedBody{ReadCloser: io.NopCloser(strings.NewReader(strings.Repeat("a", share))), ctx: context.Background(), sem: sem, key: "k", wait: time.Minute, n: sem.next()}
	younger := &chargedBody{ReadCloser: io.NopCloser(strings.NewReader(strings.Repeat("b", share))), ctx: context.Background(), sem: sem, key: "k", wait: time.Minute, n: sem.next()}
	half := make([]byte, share/2)
	for _, b := range []*chargedBody{older, younger} {
		if _, err := io.ReadFull(b, half); err != nil {
			t.Fatal(err)
		}
	}
	// The share is full: the older waits, the younger is refused at once.
	got := make(chan error, 1)
	go func() { _, err := io.ReadFull(older, make([]byte, share/2)); got <- err }()
	start := time.Now()
	if _, err := younger.Read(make([]byte, 1024)); err == nil || !strings.Contains(err.Error(), "the server is busy") {
		t.Fatalf("the younger body: %v, want refused", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("the younger body waited %s", d)
	}
	younger.release()
	if err := <-got; err != nil {
		t.Fatalf("the older body after the younger gave its bytes back: %v", err)
	}
	older.release()
	if used := sem.usedNow(); used != 0 {
		t.Errorf("%d bytes still charged", used)
	}
}
