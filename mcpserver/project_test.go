package mcpserver

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel"
)

// writeProject makes a project directory: store notes (deletable) and the
// shared store library; agent reader reads both, agent writer has rw on
// both.
func writeProject(t *testing.T) *satchel.Project {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"stores/notes.json":         `{"name": "notes", "deletable": true, "entity": {"name": "Note", "key": "{id}", "schema": {"id": {"type": "string"}, "text": {"type": "string"}}}}`,
		"stores/library.json":       `{"name": "library", "shared": true, "entity": {"name": "Book", "key": "{isbn}", "schema": {"isbn": {"type": "string"}, "title": {"type": "string"}}}}`,
		"agents/reader/agent.json":  `{"name": "Reader", "stores": {"notes": "read", "library": "read"}}`,
		"agents/writer/agent.json":  `{"name": "Writer", "stores": {"notes": "rw", "library": "rw"}}`,
		"agents/nothing/agent.json": `{"name": "Nothing", "stores": {}}`,
	}
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := satchel.LoadProject(dir)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestProjectCollections(t *testing.T) {
	p := writeProject(t)
	st := newStore(t)
	cols := ProjectCollections(st, p)

	reader, _ := newClient(t, Config{Store: st, Collections: cols, Scope: "acme", Agent: "reader"})
	writer, _ := newClient(t, Config{Store: st, Collections: cols, Scope: "acme", Agent: "writer"})
	nothing, _ := newClient(t, Config{Store: st, Collections: cols, Scope: "acme", Agent: "nothing"})

	var got []string
	for n := range toolNames(t, reader.cs) {
		if strings.HasPrefix(n, "store__") {
			got = append(got, n)
		}
	}
	want := map[string]bool{
		"store__library__get": true, "store__library__query": true, "store__library__list": true,
		"store__notes__get": true, "store__notes__query": true, "store__notes__list": true,
	}
	if len(got) != len(want) {
		t.Errorf("reader's collection tools = %q", got)
	}
	for _, n := range got {
		if !want[n] {
			t.Errorf("reader sees %s", n)
		}
	}
	w := toolNames(t, writer.cs)
	if !w["store__notes__set"] || !w["store__notes__remove"] || w["store__library__set"] || w["store__library__remove"] {
		t.Errorf("writer's tools: %v", w)
	}
	for n := range toolNames(t, nothing.cs) {
		if strings.HasPrefix(n, "store__") {
			t.Errorf("an agent granted nothing sees %s", n)
		}
	}

	// A read agent cannot set; an ungranted store is invisible; a shared
	// store takes no writes from agents.
	reader.refused("store__notes__set", map[string]any{"id": "a", "text": "x"}, `unknown tool "store__notes__set"`)
	nothing.refused("store__notes__get", map[string]any{"key": "a"}, `unknown tool "store__notes__get"`)
	writer.refused("store__library__set", map[string]any{"isbn": "1", "title": "x"}, `unknown tool "store__library__set"`)
	// Even called behind the tool list's back, Call refuses.
	_, err := cols.Call(context.Background(), Identity{Scope: "acme", Agent: "writer"}, "store__library__set", []byte(`{"isbn":"1","title":"x"}`))
	if err == nil || err.Error() != `store "library" is shared (read-only): writes are not allowed` {
		t.Errorf("a write to a shared store: %v", err)
	}
	_, err = cols.Call(context.Background(), Identity{Scope: "acme", Agent: "reader"}, "store__notes__set", []byte(`{"id":"a","text":"x"}`))
	if err == nil {
		t.Errorf("a read agent set a document")
	}

	writer.is("store__notes__set", map[string]any{"id": "a", "text": "<b>hi</b>"}, `{"key":"a","version":1}`)
	r := reader.call("store__notes__get", map[string]any{"key": "a"})
	if ts := texts(t, r); r.IsError || !strings.Contains(ts[0], `"text":"<b>hi</b>"`) || structured(t, r)["found"] != true {
		t.Errorf("get: %q", ts)
	}
	reader.is("store__library__get", map[string]any{"key": "1"}, `{"found":false}`)
	r = writer.call("store__notes__set", map[string]any{"id": "b", "txt": "typo"})
	if ts := texts(t, r); !r.IsError || !strings.Contains(ts[0], "txt") {
		t.Errorf("an invalid document: %q", ts)
	}
	writer.is("store__notes__remove", map[string]any{"key": "a"}, `{"removed":true}`)

	// Another scope does not see the documents.
	writer.ok("store__notes__set", map[string]any{"id": "c", "text": "acme"})
	other, _ := newClient(t, Config{Store: st, Collections: cols, Scope: "beta", Agent: "writer"})
	other.is("store__notes__get", map[string]any{"key": "c"}, `{"found":false}`)

	// An agent the project does not know cannot be served.
	if _, err := New(Config{Store: st, Collections: cols, Agent: "ghost"}); err == nil {
		t.Errorf("serving an unknown agent")
	}
}

func TestProjectCollectionsOverHTTP(t *testing.T) {
	p := writeProject(t)
	st := newStore(t)
	s := newServer(t, Config{Store: st, Collections: ProjectCollections(st, p)})
	url := serveHTTP(t, s)
	acme, _ := token(t, st, satchel.TokenSpec{Agent: "writer", Scope: "acme"})
	beta, _ := token(t, st, satchel.TokenSpec{Agent: "writer", Scope: "beta"})
	reader, _ := token(t, st, satchel.TokenSpec{Agent: "reader", Scope: "acme"})
	ghost, _ := token(t, st, satchel.TokenSpec{Agent: "ghost", Scope: "acme"})

	a := mustDial(t, url, acme, "")
	b := mustDial(t, url, beta, "")
	r := mustDial(t, url, reader, "")
	a.ok("store__notes__set", map[string]any{"id": "k", "text": "acme secret"})
	b.is("store__notes__get", map[string]any{"key": "k"}, `{"found":false}`)
	if got := r.ok("store__notes__get", map[string]any{"key": "k"}); !strings.Contains(got, "acme secret") {
		t.Errorf("reader in acme: %q", got)
	}
	r.refused("store__notes__set", map[string]any{"id": "k", "text": "x"}, `unknown tool "store__notes__set"`)

	code, body, _ := post(t, url+MCPPath, ghost, nil, initialize)
	if code != 403 || !strings.Contains(body, "ghost") {
		t.Errorf("a token of an agent the project does not know: %d %q", code, body)
	}
}

// serveHTTP serves s on a test listener and returns its URL.
func serveHTTP(t *testing.T, s *Server) string {
	t.Helper()
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return ts.URL
}
