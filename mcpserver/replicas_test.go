package mcpserver

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/satchel-dev/satchel"
)

// replicas are servers on one store, each behind its own listener, as
// replicas on one database behind a load balancer.
type replicas struct {
	st   *satchel.Store
	urls []string
	srv  []*Server
}

func newReplicas(t *testing.T, n int, cfg Config) *replicas {
	t.Helper()
	r := &replicas{st: newStore(t)}
	for range n {
		c := cfg
		c.Store = r.st
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		s := newServer(t, c)
		s.replicated = true // one memory store in one process, as replicas on PostgreSQL
		ts := httptest.NewServer(s.Handler())
		t.Cleanup(ts.Close)
		r.urls = append(r.urls, ts.URL)
		r.srv = append(r.srv, s)
	}
	return r
}

// roundRobin sends each request to the next replica, with no stickiness.
type roundRobin struct {
	targets []*url.URL
	headers map[string]string
	next    atomic.Int64
	served  []atomic.Int64
}

func (r *roundRobin) RoundTrip(req *http.Request) (*http.Response, error) {
	i := int(r.next.Add(1)-1) % len(r.targets)
	r.served[i].Add(1)
	req = req.Clone(req.Context())
	req.URL.Scheme, req.URL.Host = r.targets[i].Scheme, r.targets[i].Host
	req.Host = r.targets[i].Host
	for k, v := range r.headers {
		req.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(req)
}

// dial connects a client at version through all the replicas in turn.
func (r *replicas) dial(t *testing.T, secret, thread, version string) (*client, *roundRobin) {
	t.Helper()
	rr := &roundRobin{headers: map[string]string{}, served: make([]atomic.Int64, len(r.urls))}
	for _, u := range r.urls {
		pu, _ := url.Parse(u)
		rr.targets = append(rr.targets, pu)
	}
	if secret != "" {
		rr.headers["Authorization"] = "Bearer " + secret
	}
	if thread != "" {
		rr.headers[ThreadHeader] = thread
	}
	tr := &mcp.StreamableClientTransport{Endpoint: r.urls[0] + MCPPath, HTTPClient: &http.Client{Transport: rr}, MaxRetries: -1}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "replica-test", Version: "7"}, nil).Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connecting at %s: %v", version, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return &client{t: t, cs: cs}, rr
}

// TestReplicasServeOneSession: a session opened through one replica is
// served by the others, its thread switch included, at 2025-11-25; at
// 2026-07-28 each request stands alone, on any replica.
func TestReplicasServeOneSession(t *testing.T) {
	r := newReplicas(t, 3, Config{})
	secret, tok := token(t, r.st, satchel.TokenSpec{Agent: "writer", Scope: "acme"})
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			c, rr := r.dial(t, secret, "", version)
			if got := c.cs.InitializeResult().ProtocolVersion; got != version {
				t.Fatalf("negotiated %s, want %s", got, version)
			}
			dir := strings.ReplaceAll(version, "-", "")
			for i := range 9 {
				c.ok("write_file", map[string]any{"path": dir + "/f" + string(rune('a'+i)) + ".md", "content": "x\n"})
			}
			c.is("glob", map[string]any{"pattern": dir + "/*"}, strings.Join([]string{
				dir + "/fa.md", dir + "/fb.md", dir + "/fc.md", dir + "/fd.md", dir + "/fe.md", dir + "/ff.md", dir + "/fg.md", dir + "/fh.md", dir + "/fi.md"}, "\n"))
			for i := range rr.served {
				if rr.served[i].Load() == 0 {
					t.Errorf("replica %d served nothing", i)
				}
			}
			if version >= newestVersion {
				// A thread per request, in _meta.
				res, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "glob", Arguments: map[string]any{"pattern": "**"},
					Meta: mcp.Meta{MetaThread: "nowhere"}})
				if err != nil || res.IsError || texts(t, res)[0] != "no files match **" {
					t.Errorf("glob on thread nowhere: %v %+v", err, res)
				}
				c.refused("switch_thread", map[string]any{"thread": "main"},
					`at protocol 2026-07-28 a request has no session to move: name the thread in each request (the X-Satchel-Thread header, or _meta "dev.satchel/thread")`)
				return
			}
			// A switch through one replica holds on the others.
			c.ok("fork", map[string]any{"name": "try-b"})
			for range 3 { // each switch through another replica
				c.ok("switch_thread", map[string]any{"thread": "try-b"})
				c.ok("append_file", map[string]any{"path": "b.md", "content": "b\n"})
				c.ok("switch_thread", map[string]any{"thread": "main"})
				c.ok("append_file", map[string]any{"path": "m.md", "content": "m\n"})
			}
			ws, err := r.st.Workspace(context.Background(), "acme", "try-b")
			if err != nil {
				t.Fatal(err)
			}
			if got, err := ws.Read(context.Background(), "b.md"); err != nil || got != "b\nb\nb\n" {
				t.Errorf("try-b's b.md = %q, %v", got, err)
			}
			main, _ := r.st.Workspace(context.Background(), "acme", "main")
			if _, err := main.Read(context.Background(), "b.md"); err == nil {
				t.Errorf("b.md reached main")
			}
			if got, err := main.Read(context.Background(), "m.md"); err != nil || got != "m\nm\nm\n" {
				t.Errorf("main's m.md = %q, %v", got, err)
			}
		})
	}
	ws, _ := r.st.Workspace(context.Background(), "acme", "main")
	cs, err := ws.History(context.Background(), 0, 1)
	if err != nil || cs[0].Credential != tok.ID || cs[0].Client != "replica-test" {
		t.Errorf("the last commit's actor: %+v, %v", cs[0].Actor, err)
	}
}

// TestReplicasEndSessions: a DELETE through one replica ends the session
// on every one; a revoked token is refused by every one; an id that is
// not signed by the store's key, or is another token's, opens nothing.
func TestReplicasEndSessions(t *testing.T) {
	r := newReplicas(t, 2, Config{})
	secret, tok := token(t, r.st, satchel.TokenSpec{Agent: "writer", Scope: "acme"})
	other, _ := token(t, r.st, satchel.TokenSpec{Agent: "writer", Scope: "acme"})
	fa := &httpFixture{st: r.st, s: r.srv[0], url: r.urls[0]}
	call := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"glob","arguments":{"pattern":"*"}}}`

	h := rawSession(t, fa, secret, "2025-11-25")
	for _, u := range r.urls {
		if code, body, _ := post(t, u+MCPPath, secret, h, call); code != http.StatusOK {
			t.Fatalf("a call at %s: %d %q", u, code, body)
		}
	}
	if code, body, _ := post(t, r.urls[1]+MCPPath, other, h, call); code != http.StatusForbidden {
		t.Errorf("another token's call: %d %q, want 403", code, body)
	}
	forged := h[sessionIDHeader][:len(h[sessionIDHeader])-4] + "AAAA"
	if code, body, _ := post(t, r.urls[1]+MCPPath, secret, with(h, sessionIDHeader, forged), call); code != http.StatusNotFound {
		t.Errorf("a forged session id: %d %q, want 404", code, body)
	}
	if code, _, _ := send(t, "DELETE", r.urls[0]+MCPPath, secret, h, ""); code != http.StatusNoContent {
		t.Fatalf("DELETE: %d", code)
	}
	for _, u := range r.urls {
		if code, body, _ := post(t, u+MCPPath, secret, h, call); code != http.StatusNotFound {
			t.Errorf("a call at %s after DELETE: %d %q, want 404", u, code, body)
		}
	}

	h = rawSession(t, fa, secret, "2025-11-25")
	if err := r.st.RevokeToken(context.Background(), tok.ID); err != nil {
		t.Fatal(err)
	}
	for _, s := range r.srv {
		s.tokens = newTokenCache(-1, nil) // no check remembered: the revocation shows at once
	}
	for _, u := range r.urls {
		if code, body, _ := post(t, u+MCPPath, secret, h, call); code != http.StatusUnauthorized {
			t.Errorf("a call at %s with a revoked token: %d %q, want 401", u, code, body)
		}
	}
}

// FuzzSessionID: the session id parser never panics, and nothing it is
// given verifies without the key.
func FuzzSessionID(f *testing.F) {
	f.Add("s1.0123456789abcdef.e30.AAAA")
	f.Add("s1.0123456789abcdef.eyJzIjoiYSJ9.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
	f.Add("")
	f.Add("....")
	st := newStore(f)
	k := newSessionKeys(st)
	f.Fuzz(func(t *testing.T, id string) {
		_, _, _, _, _ = splitSessionID(id)
		if _, err := k.verify(context.Background(), id); err == nil {
			t.Fatalf("%q verified", id)
		}
	})
}

// TestHTTP2026Session: a realistic session at 2026-07-28 over HTTP, with
// and without a token: each request stands alone, and the caller's read
// ledger carries from a read to the edit that follows it.
func TestHTTP2026Session(t *testing.T) {
	for _, withToken := range []bool{true, false} {
		t.Run(map[bool]string{true: "token", false: "no-token"}[withToken], func(t *testing.T) {
			f := newHTTP(t, Config{InsecureNoAuth: !withToken, Scope: "acme", Agent: "writer"})
			secret := ""
			if withToken {
				secret, _ = token(t, f.st, satchel.TokenSpec{Agent: "writer", Scope: "acme"})
			}
			c, err := dialHTTPAt(t, f.url, secret, "", "2026-07-28")
			if err != nil {
				t.Fatal(err)
			}
			if got := c.cs.InitializeResult().ProtocolVersion; got != "2026-07-28" {
				t.Fatalf("negotiated %s", got)
			}
			c.ok("write_file", map[string]any{"path": "notes/plan.md", "content": "draft plan\n"})
			c.ok("edit_file", map[string]any{"path": "notes/plan.md", "old_text": "draft", "new_text": "final"})
			// Another writer changes the file: the caller's next change is
			// refused until it reads the file again.
			ws, err := f.st.Workspace(context.Background(), "acme", "main")
			if err != nil {
				t.Fatal(err)
			}
			if err := ws.Write(context.Background(), "notes/plan.md", "final plan\nby another\n"); err != nil {
				t.Fatal(err)
			}
			r := c.call("edit_file", map[string]any{"path": "notes/plan.md", "old_text": "final", "new_text": "last"})
			if !r.IsError || !strings.Contains(texts(t, r)[0], "changed since you last read it") {
				t.Errorf("a stale edit: %q", texts(t, r))
			}
			c.call("read_file", map[string]any{"path": "notes/plan.md"})
			c.ok("edit_file", map[string]any{"path": "notes/plan.md", "old_text": "final", "new_text": "last"})
			c.is("glob", map[string]any{"pattern": "**/*.md"}, "notes/plan.md")
			c.ok("checkpoint", map[string]any{"name": "v1"})
			c.ok("fork", map[string]any{"name": "alt"})
			c.ok("store__notes__set", map[string]any{"key": "k", "text": "doc"})
			c.is("store__notes__get", map[string]any{"key": "k"}, `{"document":{"text":"doc"},"found":true,"key":"k"}`)
			// The thread of one request, by header.
			alt, err := dialHTTPAt(t, f.url, secret, "alt", "2026-07-28")
			if err != nil {
				t.Fatal(err)
			}
			alt.ok("write_file", map[string]any{"path": "alt.md", "content": "alt\n"})
			c.is("glob", map[string]any{"pattern": "*.md"}, "no files match *.md")
			alt.is("glob", map[string]any{"pattern": "*.md"}, "alt.md")
		})
	}
}

// TestMetaOfNoParams: a request sent without params (a nil pointer) has
// no _meta, and reading it does not panic.
func TestMetaOfNoParams(t *testing.T) {
	var p *mcp.ListResourcesParams
	if th, ok := metaThread(&mcp.ListResourcesRequest{Params: p}); ok || th != "" {
		t.Errorf("thread %q", th)
	}
	if n, v := metaClient(p); n != "" || v != "" {
		t.Errorf("client %q %q", n, v)
	}
}

// TestStdio2026: over stdio (Run), the Go SDK's client speaks 2026-07-28
// through server/discover, and the _meta key MetaThread names the thread
// of one request, sharing the session's read ledger.
func TestStdio2026(t *testing.T) {
	st := newStore(t)
	s := newServer(t, Config{Store: st, Scope: "acme"})
	c := &client{t: t, cs: connect(t, s)}
	if got := c.cs.InitializeResult().ProtocolVersion; got != "2026-07-28" {
		t.Fatalf("negotiated %s", got)
	}
	c.ok("write_file", map[string]any{"path": "a.md", "content": "main\n"})
	c.ok("fork", map[string]any{"name": "alt"})
	on := func(thread, name string, args map[string]any) *mcp.CallToolResult {
		r, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args, Meta: mcp.Meta{MetaThread: thread}})
		if err != nil {
			t.Fatalf("%s on %s: %v", name, thread, err)
		}
		return r
	}
	if r := on("alt", "write_file", map[string]any{"path": "b.md", "content": "alt\n"}); r.IsError {
		t.Fatalf("write on alt: %q", texts(t, r))
	}
	c.is("glob", map[string]any{"pattern": "*.md"}, "a.md")
	if r := on("alt", "glob", map[string]any{"pattern": "*.md"}); texts(t, r)[0] != "a.md\nb.md" {
		t.Errorf("glob on alt: %q", texts(t, r))
	}
	// A read on alt lets an edit through on alt.
	on("alt", "read_file", map[string]any{"path": "a.md"})
	if r := on("alt", "edit_file", map[string]any{"path": "a.md", "old_text": "main", "new_text": "alt"}); r.IsError {
		t.Errorf("edit on alt after a read on alt: %q", texts(t, r))
	}
	// A thread that does not exist yet is empty, and its first write makes it.
	if r := on("new", "glob", map[string]any{"pattern": "*"}); texts(t, r)[0] != "no files match *" {
		t.Errorf("glob on a new thread: %q", texts(t, r))
	}
	// An invalid name is a protocol error, as a bad X-Satchel-Thread is a 400.
	_, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "glob", Arguments: map[string]any{"pattern": "*"}, Meta: mcp.Meta{MetaThread: "bad name!"}})
	if err == nil || !strings.Contains(err.Error(), `invalid thread name "bad name!"`) {
		t.Errorf("an invalid thread name: %v", err)
	}
}

// TestNotifySession: a notification of the server's own reaches a
// session's event stream through NotifySession, by the session's label;
// a process that holds no stream of the session says so.
func TestNotifySession(t *testing.T) {
	r := newReplicas(t, 2, Config{})
	secret, _ := token(t, r.st, satchel.TokenSpec{Agent: "writer", Scope: "acme"})
	h := rawSession(t, &httpFixture{st: r.st, s: r.srv[0], url: r.urls[0]}, secret, "2025-11-25")
	label := sessionLabel(h[sessionIDHeader])
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The stream is held by the second replica.
	req, _ := http.NewRequestWithContext(ctx, "GET", r.urls[1]+MCPPath, nil)
	req.Header.Set("Authorization", "Bearer "+secret)
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET: %v %v", resp, err)
	}
	defer resp.Body.Close()
	params := map[string]any{"uri": "satchel:///a.md"}
	if ok, err := r.srv[0].NotifySession(ctx, label, "notifications/resources/updated", params); ok || err != nil {
		t.Errorf("the first replica holds no stream, yet sent: %v %v", ok, err)
	}
	if ok, err := r.srv[1].NotifySession(ctx, label, "notifications/resources/updated", params); !ok || err != nil {
		t.Fatalf("the second replica did not send: %v %v", ok, err)
	}
	rd := bufio.NewReader(resp.Body)
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the stream: %v", err)
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			if want := `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"satchel:///a.md"}}`; strings.TrimSpace(d) != want {
				t.Errorf("event %q, want %q", d, want)
			}
			return
		}
	}
}

// TestReplicasResumeWithinBounds: a session resumed on a replica counts
// against that replica's bound of sessions per token.
func TestReplicasResumeWithinBounds(t *testing.T) {
	r := newReplicas(t, 2, Config{MaxSessionsPerToken: 1})
	secret, _ := token(t, r.st, satchel.TokenSpec{Agent: "writer", Scope: "acme"})
	h1 := rawSession(t, &httpFixture{st: r.st, s: r.srv[0], url: r.urls[0]}, secret, "2025-11-25")
	h2 := rawSession(t, &httpFixture{st: r.st, s: r.srv[1], url: r.urls[1]}, secret, "2025-11-25")
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	// The second replica holds h2: h1 is one too many there.
	if code, body, _ := post(t, r.urls[1]+MCPPath, secret, h1, ping); code != http.StatusTooManyRequests || !strings.Contains(body, "--max-sessions-per-token") {
		t.Errorf("resuming over the bound: %d %q, want 429", code, body)
	}
	if code, body, _ := send(t, "DELETE", r.urls[1]+MCPPath, secret, h2, ""); code != http.StatusNoContent {
		t.Fatalf("DELETE: %d %q", code, body)
	}
	waitFor(t, "the place of the ended session", func() bool {
		code, _, _ := post(t, r.urls[1]+MCPPath, secret, h1, ping)
		return code == http.StatusOK
	})
}

// At 2026-07-28, which has no sessions, a request's workspace is held to
// the same rules as a session's: the token's file rules and its review.
func TestHTTP2026TokenRules(t *testing.T) {
	f := newHTTP(t, Config{Scope: "acme", Agent: "writer"})
	ws, err := f.st.Workspace(context.Background(), "acme", "main")
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.Write(context.Background(), "notes/a.md", "a\n"); err != nil {
		t.Fatal(err)
	}
	rules, err := satchel.ParseFileRules("notes/**=read")
	if err != nil {
		t.Fatal(err)
	}
	secret, _ := token(t, f.st, satchel.TokenSpec{Agent: "writer", Scope: "acme", Files: rules})
	c, err := dialHTTPAt(t, f.url, secret, "", "2026-07-28")
	if err != nil {
		t.Fatal(err)
	}
	c.is("read_file", map[string]any{"path": "notes/a.md", "numbered": false}, "a\n")
	r := c.call("write_file", map[string]any{"path": "notes/a.md", "content": "b\n"})
	if !r.IsError || texts(t, r)[0] != "notes/a.md is read-only for agent writer" {
		t.Errorf("a write under read rules: %q", texts(t, r))
	}
	r = c.call("write_file", map[string]any{"path": "other.md", "content": "b\n"})
	if !r.IsError || !strings.Contains(texts(t, r)[0], "other.md") {
		t.Errorf("a write of a hidden path: %q", texts(t, r))
	}

	reviewer, _ := token(t, f.st, satchel.TokenSpec{Agent: "writer", Scope: "acme", Review: true})
	rc, err := dialHTTPAt(t, f.url, reviewer, "", "2026-07-28")
	if err != nil {
		t.Fatal(err)
	}
	r = rc.call("write_file", map[string]any{"path": "new.md", "content": "x\n"})
	if r.IsError || !strings.Contains(strings.Join(texts(t, r), "\n"), "your changes wait for review R-") {
		t.Errorf("a write under review: %q", texts(t, r))
	}
	if ok, _ := ws.Exists(context.Background(), "new.md"); ok {
		t.Error("a write under review changed the thread itself")
	}
}
