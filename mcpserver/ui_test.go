package mcpserver

import (
	"net/http"
	"testing"

	"github.com/satchel-dev/satchel"
)

// The inspector mounts under UIPath on the same listener; an operator
// token, which is for the inspector, is refused by the MCP endpoint.
func TestHTTPUIMountAndOperatorTokens(t *testing.T) {
	ui := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ui " + r.URL.Path)) })
	f := newHTTP(t, Config{UI: ui})
	resp, err := http.Get(f.url + "/ui/s/acme")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /ui/s/acme: %d, want the UI's 200", resp.StatusCode)
	}
	secret, tok := token(t, f.st, satchel.TokenSpec{Operator: true})
	code, body, _ := post(t, f.url+MCPPath, secret, nil, initialize)
	if want := "token " + tok.ID + " is an operator token (for the inspector): the MCP server takes an agent's token"; code != http.StatusForbidden || body != want {
		t.Errorf("an operator token at %s: %d %q, want 403 %q", MCPPath, code, body, want)
	}
}

// Git access mounts under GitPath on the same listener.
func TestHTTPGitMount(t *testing.T) {
	git := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	f := newHTTP(t, Config{Git: git})
	resp, err := http.Get(f.url + "/git/s/main.git/info/refs?service=git-upload-pack")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTeapot {
		t.Errorf("GET /git/...: %d, want the git handler's 418", resp.StatusCode)
	}
}
