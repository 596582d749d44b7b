package mcpserver

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"testing"

	buildversion "github.com/satchel-dev/satchel/internal/version"
)

// TestProtectedResourceMetadata: a 401 points at the RFC 9728 metadata
// (the MCP authorization spec's discovery), which says that the server
// takes bearer tokens in the header and has no authorization server.
func TestProtectedResourceMetadata(t *testing.T) {
	f := newHTTP(t, Config{})
	code, _, resp := post(t, f.url+MCPPath, "", nil, initialize)
	if code != http.StatusUnauthorized {
		t.Fatalf("no token: %d", code)
	}
	m := regexp.MustCompile(`^Bearer .*resource_metadata="([^"]+)"`).FindStringSubmatch(resp.Header.Get("WWW-Authenticate"))
	if m == nil {
		t.Fatalf("WWW-Authenticate %q has no resource_metadata", resp.Header.Get("WWW-Authenticate"))
	}
	for _, url := range []string{m[1], f.url + ProtectedResourcePath + MCPPath} {
		r, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if r.StatusCode != http.StatusOK || r.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("GET %s: %d %s %s", url, r.StatusCode, r.Header.Get("Content-Type"), b)
		}
		var md map[string]any
		if err := json.Unmarshal(b, &md); err != nil {
			t.Fatalf("GET %s: %v: %s", url, err, b)
		}
		if md["resource"] != f.url+MCPPath {
			t.Errorf("resource = %v, want %s", md["resource"], f.url+MCPPath)
		}
		if methods, _ := md["bearer_methods_supported"].([]any); len(methods) != 1 || methods[0] != "header" {
			t.Errorf("bearer_methods_supported = %v, want [header]", md["bearer_methods_supported"])
		}
		if _, ok := md["authorization_servers"]; ok {
			t.Errorf("the metadata names authorization servers: %v", md["authorization_servers"])
		}
	}
}

// TestServerVersion: without Config.Version the server reports the
// version the build recorded, as satchel version prints it.
func TestServerVersion(t *testing.T) {
	c, _ := newClient(t, Config{})
	if got, want := c.cs.InitializeResult().ServerInfo.Version, buildversion.Get().String(); got != want || got == "dev" {
		t.Errorf("server version %q, want %q", got, want)
	}
}
