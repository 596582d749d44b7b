package mcpserver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/tooldesc"
)

// TestToolDescriptions checks every tool's description against its
// schema (tooldesc.Check), file tools with and without a prefix and the
// generated store tools, and that the store's own description stands as
// a sentence of its own.
func TestToolDescriptions(t *testing.T) {
	const storeDesc = "Findings the research agent records, one per company and topic"
	p := descProject(t, storeDesc)
	st := newStore(t)
	for _, prefix := range []string{"", "ws_"} {
		c, _ := newClient(t, Config{Store: st, Collections: ProjectCollections(st, p), Agent: "writer", ToolPrefix: prefix})
		res, err := c.cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, problem := range tooldesc.Check(res.Tools, prefix) {
			t.Error(problem)
		}
		for _, tl := range res.Tools {
			d := tl.Description
			if strings.HasPrefix(tl.Name, "store__notes__") {
				i := strings.Index(d, storeDesc)
				if i < 0 || !strings.HasPrefix(d[i+len(storeDesc):], ".") || (i > 0 && !strings.HasSuffix(d[:i], ". ") && !strings.HasSuffix(d[:i], ": ") && !strings.HasSuffix(d[:i], "\n")) {
					t.Errorf("%s: the store's description is not a sentence of its own:\n%s", tl.Name, d)
				}
			}
		}
	}
}

func descProject(t *testing.T, storeDesc string) *satchel.Project {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"stores/notes.json": `{"name": "notes", "description": "` + storeDesc + `", "deletable": true, "history": {"versions": 2},
			"ttl": {"default": 60, "override": [{"condition": "status = 'done'", "ttl": 5}]},
			"entity": {"name": "Note", "key": "{company_id}:{topic}", "schema": {
				"company_id": {"type": "string"}, "topic": {"type": "string"}, "status": {"type": "enum", "values": ["draft", "done"]},
				"score": {"type": "number", "min": 0, "max": 1}, "source": {"type": "string", "nullable": true}}}}`,
		"stores/library.json":      `{"name": "library", "shared": true, "description": "Books every tenant reads.", "entity": {"name": "Book", "key": "{isbn}", "schema": {"isbn": {"type": "string"}, "title": {"type": "string"}}}}`,
		"agents/writer/agent.json": `{"name": "Writer", "stores": {"notes": "rw", "library": "rw"}}`,
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
