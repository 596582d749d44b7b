package mcpserver

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/satchel-dev/satchel"
)

// serveLoopback serves s on a loopback listener until the test ends and
// returns its base URL.
func serveLoopback(t *testing.T, s *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

func wsOf(t *testing.T, st *satchel.Store, scope, thread string) *satchel.Workspace {
	t.Helper()
	ws, err := st.Workspace(context.Background(), scope, thread)
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

func TestInsecureNoAuth(t *testing.T) {
	st := newStore(t)
	s := newServer(t, Config{Store: st, Scope: "acme", Agent: "tester", InsecureNoAuth: true, ShutdownTimeout: time.Second})
	url := serveLoopback(t, s)

	// A tokenless session acts as the configured identity.
	c := mustDial(t, url, "", "")
	c.ok("write_file", map[string]any{"path": "a.md", "content": "x\n"})
	cm, err := wsOf(t, st, "acme", "main").History(context.Background(), 0, 1)
	if err != nil || len(cm) != 1 || cm[0].Agent != "tester" || cm[0].Via != "mcp:write_file" {
		t.Errorf("history = %+v, %v", cm, err)
	}

	// ThreadHeader still chooses the thread, checked as ever.
	d := mustDial(t, url, "", "draft")
	d.ok("write_file", map[string]any{"path": "b.md", "content": "y\n"})
	if ok, err := wsOf(t, st, "acme", "draft").Exists(context.Background(), "b.md"); err != nil || !ok {
		t.Errorf("b.md on draft: %v, %v", ok, err)
	}
	if _, err := dialHTTP(t, url, "", "1"); err == nil {
		t.Errorf("an invalid thread header was let in")
	}

	// A token is still checked: a wrong one is refused, a good one acts as
	// the token's identity.
	if _, err := dialHTTP(t, url, "stk_wrong", ""); err == nil {
		t.Errorf("a wrong token was let in")
	}
	secret, tok := token(t, st, satchel.TokenSpec{Agent: "other", Scope: "beta"})
	e := mustDial(t, url, secret, "")
	e.ok("write_file", map[string]any{"path": "c.md", "content": "z\n"})
	cm, err = wsOf(t, st, "beta", "main").History(context.Background(), 0, 1)
	if err != nil || len(cm) != 1 || cm[0].Agent != "other" || cm[0].Credential != tok.ID {
		t.Errorf("history of beta = %+v, %v", cm, err)
	}

	// A forged Host is still refused.
	req, _ := http.NewRequest(http.MethodPost, url+MCPPath, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Host = "evil.example.com"
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("forged Host: %d, want 403", res.StatusCode)
	}
}

func TestInsecureNoAuthOnlyOnLoopback(t *testing.T) {
	st := newStore(t)
	s := newServer(t, Config{Store: st, InsecureNoAuth: true})
	// Refused on an address that is not loopback, tokens or not.
	token(t, st, satchel.TokenSpec{Agent: "a", Scope: "acme"})
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		err := s.ListenAndServe(context.Background(), addr)
		want := "refusing to listen on " + addr + " without authentication: --insecure-no-auth is allowed only on a loopback address (127.0.0.1, [::1] or localhost)"
		if err == nil || err.Error() != want {
			t.Errorf("ListenAndServe(%s) = %v", addr, err)
		}
	}
	// The handler mounted elsewhere refuses a tokenless request that did
	// not arrive on loopback.
	req := httptest.NewRequest(http.MethodPost, MCPPath, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Host = "mcp.example.com"
	req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.ParseIP("192.0.2.1"), Port: 443}))
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusUnauthorized {
		t.Errorf("tokenless request on a public address: %d %s", rec.Code, rec.Body)
	}
	// Without the option, a tokenless request on loopback is refused.
	plain := newServer(t, Config{Store: st, ShutdownTimeout: time.Second})
	if _, err := dialHTTP(t, serveLoopback(t, plain), "", ""); err == nil {
		t.Errorf("a tokenless session was let in without InsecureNoAuth")
	}
}
