package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/satchel-dev/satchel"
)

// rawSession opens a session by hand: initialize at version, then
// notifications/initialized. It returns the headers later requests send.
func rawSession(t *testing.T, f *httpFixture, secret, version string) map[string]string {
	t.Helper()
	init := strings.Replace(initialize, "2025-06-18", version, 1)
	code, body, resp := post(t, f.url+MCPPath, secret, nil, init)
	sid := resp.Header.Get(sessionIDHeader)
	if code != 200 || sid == "" || !strings.Contains(body, `"protocolVersion":"`+version+`"`) {
		t.Fatalf("initialize: %d %q, session %q", code, body, sid)
	}
	h := map[string]string{sessionIDHeader: sid, protocolVersionHeader: version}
	if code, body, _ := post(t, f.url+MCPPath, secret, h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); code != http.StatusAccepted || body != "" {
		t.Fatalf("initialized: %d %q, want 202 and no body", code, body)
	}
	return h
}

func send(t *testing.T, method, url, secret string, headers map[string]string, body string) (int, string, *http.Response) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+secret)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	// A GET that is let in streams until the session ends: read what
	// comes within the timeout.
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSuffix(string(b), "\n"), resp
}

func with(h map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range h {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// TestStreamableSessionLifecycle: initialize opens a session named by
// Mcp-Session-Id; a call on it is answered with one JSON body of the same
// id; DELETE ends it, and the session is unknown (404) from then on.
func TestStreamableSessionLifecycle(t *testing.T) {
	f := newHTTP(t, Config{})
	secret, _ := token(t, f.st, satchel.TokenSpec{Agent: "writer", Scope: "acme"})
	h := rawSession(t, f, secret, "2025-06-18")
	code, body, resp := post(t, f.url+MCPPath, secret, h, `{"jsonrpc":"2.0","id":"a-1","method":"ping"}`)
	if code != 200 || body != `{"jsonrpc":"2.0","id":"a-1","result":{}}` || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("ping: %d %q (%s)", code, body, resp.Header.Get("Content-Type"))
	}
	if resp.Header.Get(sessionIDHeader) != "" {
		t.Errorf("a call repeats the session id: %q", resp.Header.Get(sessionIDHeader))
	}
	code, body, _ = post(t, f.url+MCPPath, secret, h, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"a.md","content":"x\n"}}}`)
	if code != 200 || !strings.HasPrefix(body, `{"jsonrpc":"2.0","id":3,"result":{`) || strings.Contains(body, `"isError":true`) {
		t.Errorf("tools/call: %d %q", code, body)
	}
	if code, body, _ := post(t, f.url+MCPPath, secret, with(h, sessionIDHeader, "nosuch"), `{"jsonrpc":"2.0","id":4,"method":"ping"}`); code != http.StatusNotFound {
		t.Errorf("unknown session: %d %q, want 404", code, body)
	}
	if code, body, _ := send(t, "DELETE", f.url+MCPPath, secret, nil, ""); code != http.StatusBadRequest {
		t.Errorf("DELETE without a session: %d %q, want 400", code, body)
	}
	if code, body, _ := send(t, "DELETE", f.url+MCPPath, secret, h, ""); code != http.StatusNoContent {
		t.Fatalf("DELETE: %d %q, want 204", code, body)
	}
	if code, body, _ := post(t, f.url+MCPPath, secret, h, `{"jsonrpc":"2.0","id":5,"method":"ping"}`); code != http.StatusNotFound {
		t.Errorf("a call on a deleted session: %d %q, want 404", code, body)
	}
	if code, body, _ := send(t, "PUT", f.url+MCPPath, secret, h, "{}"); code != http.StatusMethodNotAllowed {
		t.Errorf("PUT: %d %q, want 405", code, body)
	}
}

// TestStreamableRefusals: each malformed POST is refused with its status,
// and the session goes on.
func TestStreamableRefusals(t *testing.T) {
	f := newHTTP(t, Config{})
	secret, _ := token(t, f.st, satchel.TokenSpec{Agent: "writer", Scope: "acme"})
	h := rawSession(t, f, secret, "2025-06-18")
	ping := `{"jsonrpc":"2.0","id":9,"method":"ping"}`
	cases := []struct {
		name    string
		headers map[string]string
		body    string
		code    int
		msg     string
	}{
		{"content type", with(h, "Content-Type", "text/plain"), ping, 415, "Content-Type must be 'application/json'"},
		{"accept", with(h, "Accept", "application/json"), ping, 400, "Accept must contain both 'application/json' and 'text/event-stream'"},
		{"last event id", with(h, "Last-Event-ID", "x_1"), ping, 400, "can't send Last-Event-ID for POST request"},
		{"version", with(h, protocolVersionHeader, "1999-01-01"), ping, 400, "Bad Request: Unsupported protocol version"},
		{"empty", h, "  ", 400, "malformed payload: POST requires a non-empty body"},
		{"not json", h, "{", 400, "malformed payload"},
		{"trailing", h, ping + " {}", 400, "malformed payload: unmarshaling jsonrpc message: trailing data"},
		{"version tag", h, `{"jsonrpc":"1.0","id":1,"method":"ping"}`, 400, `malformed payload: invalid message version tag "1.0"`},
		{"batch after 2025-06-18", h, "[" + ping + "]", 400, "JSON-RPC batching is not supported in 2025-06-18 and later"},
		{"duplicate ids", with(h, protocolVersionHeader, "2025-03-26"), "[" + ping + "," + ping + "]", 400, "duplicate in-flight request ID 9"},
	}
	for _, c := range cases {
		code, body, _ := post(t, f.url+MCPPath, secret, c.headers, c.body)
		if code != c.code || !strings.Contains(body, c.msg) {
			t.Errorf("%s: %d %q, want %d %q", c.name, code, body, c.code, c.msg)
		}
	}
	if code, body, _ := post(t, f.url+MCPPath, secret, h, ping); code != 200 || body != `{"jsonrpc":"2.0","id":9,"result":{}}` {
		t.Errorf("after the refusals: %d %q", code, body)
	}
	// A POST with a body whose length is not told is bounded the same.
	small := newHTTP(t, Config{MaxRequestBytes: 4096})
	s2, _ := token(t, small.st, satchel.TokenSpec{Agent: "writer", Scope: "acme"})
	h2 := rawSession(t, small, s2, "2025-06-18")
	big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", 5000) + `"}}`
	req, _ := http.NewRequest("POST", small.url+MCPPath, io.MultiReader(strings.NewReader(big))) // no Content-Length
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+s2)
	for k, v := range h2 {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a chunked body over the limit: %d, want 413", resp.StatusCode)
	}
}

// TestStreamableBatch: before 2025-06-18 a POST may carry a batch; its
// calls are answered together, as an array; a batch of notifications
// only is answered 202.
func TestStreamableBatch(t *testing.T) {
	f := newHTTP(t, Config{})
	secret, _ := token(t, f.st, satchel.TokenSpec{Agent: "writer", Scope: "acme"})
	h := rawSession(t, f, secret, "2025-03-26")
	code, body, _ := post(t, f.url+MCPPath, secret, h,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/roots/list_changed"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]`)
	var rs []struct {
		ID     int             `json:"id"`
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal([]byte(body), &rs); code != 200 || err != nil || len(rs) != 2 {
		t.Fatalf("batch: %d %q (%v)", code, body, err)
	}
	ids := map[int]string{}
	for _, r := range rs {
		ids[r.ID] = string(r.Result)
	}
	if ids[1] != "{}" || !strings.Contains(ids[2], `"name":"read_file"`) {
		t.Errorf("batch answers: %v", ids)
	}
	if code, body, _ := post(t, f.url+MCPPath, secret, h, `[{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}]`); code != http.StatusAccepted {
		t.Errorf("a batch of a notification: %d %q, want 202", code, body)
	}
	// One call in a batch is still answered as an array.
	if code, body, _ := post(t, f.url+MCPPath, secret, h, `[{"jsonrpc":"2.0","id":5,"method":"ping"}]`); code != 200 || body != `[{"jsonrpc":"2.0","id":5,"result":{}}]` {
		t.Errorf("a batch of one call: %d %q", code, body)
	}
}

// TestStreamableEventStream: GET opens the session's one event stream,
// which carries the server's own requests; the client's answer, POSTed,
// is accepted (202) and reaches the server.
func TestStreamableEventStream(t *testing.T) {
	f := newHTTP(t, Config{})
	secret, _ := token(t, f.st, satchel.TokenSpec{Agent: "writer", Scope: "acme"})
	h := rawSession(t, f, secret, "2025-06-18")
	if code, body, _ := send(t, "GET", f.url+MCPPath, secret, with(h, "Accept", "application/json"), ""); code != 400 || !strings.Contains(body, "text/event-stream") {
		t.Errorf("GET without text/event-stream: %d %q", code, body)
	}
	if code, body, _ := send(t, "GET", f.url+MCPPath, secret, with(h, "Accept", "text/event-stream", "Last-Event-ID", "a_1"), ""); code != 400 || body != "stream replay unsupported" {
		t.Errorf("GET with Last-Event-ID: %d %q", code, body)
	}
	if code, _, _ := send(t, "GET", f.url+MCPPath, secret, with(h, "Accept", "text/event-stream", sessionIDHeader, ""), ""); code != 400 {
		t.Errorf("GET without a session: %d, want 400", code)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", f.url+MCPPath, nil)
	req.Header.Set("Authorization", "Bearer "+secret)
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if code, _, _ := send(t, "GET", f.url+MCPPath, secret, with(h, "Accept", "text/event-stream"), ""); code != http.StatusConflict {
		t.Errorf("a second GET stream: %d, want 409", code)
	}

	var ss *mcp.ServerSession
	for _, srv := range f.s.allServers() {
		for s := range srv.Sessions() {
			if s.ID() == h[sessionIDHeader] {
				ss = s
			}
		}
	}
	if ss == nil {
		t.Fatal("the session is not among the server's")
	}
	pinged := make(chan error, 1)
	go func() { pinged <- ss.Ping(ctx, nil) }()

	// The server's ping arrives as an event; the client answers it.
	rd := bufio.NewReader(resp.Body)
	var data string
	for data == "" {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the stream: %v", err)
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			data = strings.TrimSpace(d)
		}
	}
	msg, err := jsonrpc.DecodeMessage([]byte(data))
	req2, ok := msg.(*jsonrpc.Request)
	if err != nil || !ok || req2.Method != "ping" || !req2.IsCall() {
		t.Fatalf("event %q: %v", data, err)
	}
	answer, _ := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: req2.ID, Result: json.RawMessage("{}")})
	if code, body, _ := post(t, f.url+MCPPath, secret, h, string(answer)); code != http.StatusAccepted {
		t.Fatalf("the answer: %d %q, want 202", code, body)
	}
	if err := <-pinged; err != nil {
		t.Errorf("the server's ping: %v", err)
	}
}

// TestStreamableIdleSessionCloses: a session with no request for
// SessionIdleTimeout is closed here (its memory freed); its signed id
// still names it, so its next request resumes it, as on another replica.
func TestStreamableIdleSessionCloses(t *testing.T) {
	f := newHTTP(t, Config{SessionIdleTimeout: 50 * time.Millisecond})
	secret, _ := token(t, f.st, satchel.TokenSpec{Agent: "writer", Scope: "acme"})
	h := rawSession(t, f, secret, "2025-06-18")
	deadline := time.Now().Add(10 * time.Second)
	for open(f) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the idle session is still open")
		}
		time.Sleep(20 * time.Millisecond)
	}
	code, body, _ := post(t, f.url+MCPPath, secret, h, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"glob","arguments":{"pattern":"*"}}}`)
	if code != http.StatusOK || !strings.Contains(body, "no files match") {
		t.Fatalf("a call after the idle timeout: %d %q", code, body)
	}
	// Resumed, it is open while a call holds it (idle again after its
	// call, it can close again before it is counted).
	got := make(chan string, 1)
	go func() {
		code, body, _, err := postFrom(f.url+MCPPath, secret, h, `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"store__slow__get","arguments":{}}}`)
		if err != nil {
			got <- err.Error()
			return
		}
		got <- fmt.Sprintf("%d %s", code, body)
	}()
	<-f.fc.started
	if n := open(f); n != 1 {
		t.Errorf("the session was not resumed: %d open", n)
	}
	close(f.fc.slow)
	if a := <-got; !strings.HasPrefix(a, "200 ") || !strings.Contains(a, `"found":false`) {
		t.Errorf("the call that held the resumed session: %q", a)
	}
}

func open(f *httpFixture) int {
	n := 0
	for _, srv := range f.s.allServers() {
		for range srv.Sessions() {
			n++
		}
	}
	return n
}

// TestStreamableFailedInitializeOpensNoSession: a POST with no session
// whose initialize is refused leaves no session behind.
func TestStreamableFailedInitializeOpensNoSession(t *testing.T) {
	f := newHTTP(t, Config{})
	secret, _ := token(t, f.st, satchel.TokenSpec{Agent: "writer", Scope: "acme"})
	code, body, resp := post(t, f.url+MCPPath, secret, nil, `{"jsonrpc":"2.0","id":1,"method":"initialize"}`)
	if code != 200 || !strings.Contains(body, `"error"`) {
		t.Errorf("initialize without params: %d %q", code, body)
	}
	if sid := resp.Header.Get(sessionIDHeader); sid != "" {
		t.Errorf("a failed initialize named session %q", sid)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := 0
		for _, srv := range f.s.allServers() {
			for range srv.Sessions() {
				n++
			}
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions left after a failed initialize", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestStreamableNewProtocolGoesToTheSDK: a request of protocol
// 2026-07-28 is answered on its own, with no session: server/discover
// names the version, and a call carries its version in _meta.
func TestStreamableNewProtocolGoesToTheSDK(t *testing.T) {
	f := newHTTP(t, Config{})
	secret, _ := token(t, f.st, satchel.TokenSpec{Agent: "writer", Scope: "acme"})
	code, body, resp := post(t, f.url+MCPPath, secret, map[string]string{protocolVersionHeader: "2026-07-28", "Mcp-Method": "server/discover"},
		`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"}}}}`)
	if code != http.StatusOK || !strings.Contains(body, `"2026-07-28"`) || !strings.Contains(body, `"supportedVersions"`) || resp.Header.Get(sessionIDHeader) != "" {
		t.Errorf("server/discover at 2026-07-28: %d %q (session %q)", code, body, resp.Header.Get(sessionIDHeader))
	}
	code, body, _ = post(t, f.url+MCPPath, secret, map[string]string{protocolVersionHeader: "2026-07-28", "Mcp-Method": "tools/list"},
		`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"}}}}`)
	if code != http.StatusOK || !strings.Contains(body, `"write_file"`) || !strings.Contains(body, `"ttlMs"`) {
		t.Errorf("tools/list at 2026-07-28: %d %q", code, body)
	}
}

// FuzzParsePost: the request parser never panics; what it reads as one
// message the SDK's decoder reads alike, and what the SDK's decoder
// accepts (one JSON object, alone) it accepts. (The SDK's decoder also
// takes an object followed by other data; the parser refuses it.)
func FuzzParsePost(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"glob","arguments":{"pattern":"*"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"m"}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"n"}]`,
		`[]`, ` {"jsonrpc":"2.0","id":1,"method":"p\u00e9"} `, `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`, `{"jsonrpc":"2.0","ID":1,"METHOD":"x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		msgs, batch, err := parsePost(bytes.Clone(body))
		if err != nil {
			if tb := bytes.TrimSpace(body); len(tb) > 0 && tb[0] == '{' && json.Valid(tb) {
				if _, serr := jsonrpc.DecodeMessage(body); serr == nil && !tooDeep(body) {
					t.Fatalf("refused %q (%v), which the SDK reads", body, err)
				}
			}
			return
		}
		if len(msgs) == 0 {
			t.Fatalf("%q: no message and no error", body)
		}
		if batch {
			return
		}
		want, serr := jsonrpc.DecodeMessage(bytes.TrimSpace(body))
		if serr != nil {
			t.Fatalf("read %q, which the SDK refuses: %v", body, serr)
		}
		a, _ := jsonrpc.EncodeMessage(msgs[0])
		b, _ := jsonrpc.EncodeMessage(want)
		if !bytes.Equal(a, b) {
			t.Fatalf("%q read as %s, the SDK reads %s", body, a, b)
		}
	})
}

// TestStreamableOtherTokenRefused: a session answers only the token that
// opened it, on every method (403), and goes on for that token.
func TestStreamableOtherTokenRefused(t *testing.T) {
	f := newHTTP(t, Config{})
	a, _ := token(t, f.st, satchel.TokenSpec{Agent: "writer", Scope: "acme"})
	b, _ := token(t, f.st, satchel.TokenSpec{Agent: "writer", Scope: "acme"})
	h := rawSession(t, f, a, "2025-06-18")
	if code, body, _ := send(t, "GET", f.url+MCPPath, b, with(h, "Accept", "text/event-stream"), ""); code != http.StatusForbidden || body != "session user mismatch" {
		t.Errorf("GET with another token: %d %q", code, body)
	}
	if code, body, _ := send(t, "DELETE", f.url+MCPPath, b, h, ""); code != http.StatusForbidden {
		t.Errorf("DELETE with another token: %d %q", code, body)
	}
	if code, body, _ := post(t, f.url+MCPPath, b, h, `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`); code != http.StatusForbidden {
		t.Errorf("a notification with another token: %d %q", code, body)
	}
	if code, body, _ := post(t, f.url+MCPPath, a, h, `{"jsonrpc":"2.0","id":1,"method":"ping"}`); code != 200 || body != `{"jsonrpc":"2.0","id":1,"result":{}}` {
		t.Errorf("the session's own token after the refusals: %d %q", code, body)
	}
}
