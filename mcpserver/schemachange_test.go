package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/satchel-dev/satchel"
)

// loadProjectFiles writes files into dir (replacing what is there) and
// loads the project.
func loadProjectFiles(t *testing.T, dir string, files map[string]string) *satchel.Project {
	t.Helper()
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

// checkOutput validates r's structured content against the output schema
// the server advertises for the tool, as the official clients do.
func checkOutput(t *testing.T, tools map[string]*mcp.Tool, name string, r *mcp.CallToolResult) {
	t.Helper()
	if r.IsError {
		t.Fatalf("%s: refused: %v", name, texts(t, r))
	}
	raw, err := json.Marshal(tools[name].OutputSchema)
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(r.StructuredContent)
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if err := rs.Validate(v); err != nil {
		t.Errorf("%s: structured content does not match the tool's output schema: %v\n%s", name, err, b)
	}
}

// TestSchemaChangeKeepsReads: documents stored before their store's
// definition changed (a required field added, a type changed, a field
// removed) stay readable by get, list and query, whose results still match
// the advertised output schema and say which documents do not fit the
// current definition, and why.
func TestSchemaChangeKeepsReads(t *testing.T) {
	dir := t.TempDir()
	agent := map[string]string{"agents/a/agent.json": `{"name": "A", "stores": {"tasks": "rw"}}`}
	before := loadProjectFiles(t, dir, map[string]string{
		"stores/tasks.json":   `{"name": "tasks", "history": {"versions": 2}, "entity": {"name": "Task", "key": "{id}", "schema": {"id": {"type": "string"}, "title": {"type": "string"}, "priority": {"type": "number"}}}}`,
		"agents/a/agent.json": agent["agents/a/agent.json"],
	})
	st := newStore(t)
	ctx := context.Background()
	for _, d := range []string{`{"id": "t1", "title": "one", "priority": 1}`, `{"id": "t1", "title": "one", "priority": 2}`} {
		if _, err := ProjectCollections(st, before).Call(ctx, Identity{Scope: "acme", Agent: "a"}, "store__tasks__set", []byte(d)); err != nil {
			t.Fatal(err)
		}
	}
	after := loadProjectFiles(t, dir, map[string]string{
		"stores/tasks.json": `{"name": "tasks", "history": {"versions": 2}, "entity": {"name": "Task", "key": "{id}", "schema": {"id": {"type": "string"}, "priority": {"type": "string"}, "due": {"type": "datetime"}}}}`,
	})
	c, _ := newClient(t, Config{Store: st, Collections: ProjectCollections(st, after), Scope: "acme", Agent: "a"})
	c.ok("store__tasks__set", map[string]any{"id": "t2", "priority": "high", "due": "2026-12-06T10:00:00Z"})
	lt, err := c.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]*mcp.Tool{}
	for _, tl := range lt.Tools {
		tools[tl.Name] = tl
	}
	why := []any{"priority: must be a string, not a number", "due: required field is missing", "title: unknown field (fields here: id, priority, due)"}

	r := c.call("store__tasks__get", map[string]any{"key": "t1", "history": true})
	checkOutput(t, tools, "store__tasks__get", r)
	if got := structured(t, r)["does_not_fit"]; !reflect.DeepEqual(got, why) {
		t.Errorf("get t1: does_not_fit = %#v, want %#v", got, why)
	}
	r = c.call("store__tasks__get", map[string]any{"key": "t2"})
	checkOutput(t, tools, "store__tasks__get", r)
	if got, ok := structured(t, r)["does_not_fit"]; ok {
		t.Errorf("get t2 (it fits): does_not_fit = %v", got)
	}
	for _, name := range []string{"store__tasks__list", "store__tasks__query"} {
		r := c.call(name, map[string]any{})
		checkOutput(t, tools, name, r)
		got := structured(t, r)["does_not_fit"]
		if !reflect.DeepEqual(got, map[string]any{"t1": why}) {
			t.Errorf("%s: does_not_fit = %#v", name, got)
		}
		if docs, _ := structured(t, r)["documents"].([]any); len(docs) != 2 {
			t.Errorf("%s: %d documents", name, len(docs))
		}
	}
}
