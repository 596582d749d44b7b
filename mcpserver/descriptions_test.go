package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/satchel-dev/satchel"
)

// englishArgs are argument names that are also plain words of the
// descriptions ("add it to the end", "the file's path"): the sibling
// check below cannot tell them from an argument, so it skips them.
var englishArgs = map[string]bool{
	"to": true, "at": true, "from": true, "name": true, "path": true,
	"content": true, "key": true, "history": true, "pattern": true,
}

var (
	snakeWord = regexp.MustCompile(`\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b`)
	wordRE    = regexp.MustCompile(`[A-Za-z0-9_]+`)
)

// TestToolDescriptions checks every tool's description against its
// schema: each argument of the input schema is named in the description;
// every snake_case name the description uses is an argument, a result
// field or a tool; an argument of a sibling tool (another file tool, or
// another tool of the same store) that this tool does not take is not
// named; and the store's own description stands as a sentence of its own.
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
		tools := map[string]bool{}
		family := map[string][]string{} // family -> every argument of its tools
		props := map[string][]string{}
		outputs := map[string][]string{}
		for _, tl := range res.Tools {
			tools[tl.Name] = true
			props[tl.Name] = schemaProps(t, tl.InputSchema)
			outputs[tl.Name] = schemaProps(t, tl.OutputSchema)
			family[familyOf(tl.Name)] = append(family[familyOf(tl.Name)], props[tl.Name]...)
		}
		for _, tl := range res.Tools {
			d := otherToolsArgs(tl.Description, tools)
			allowed := docFields(t, res.Tools, tl.Name)
			words := map[string]bool{}
			for _, w := range wordRE.FindAllString(d, -1) {
				words[w] = true
			}
			in := props[tl.Name]
			for _, a := range in {
				if !words[a] {
					t.Errorf("%s: argument %s is not named in the description:\n%s", tl.Name, a, d)
				}
			}
			for _, w := range snakeWord.FindAllString(d, -1) {
				if !slices.Contains(in, w) && !slices.Contains(outputs[tl.Name], w) && !allowed[w] && !tools[w] && !tools[prefix+w] {
					t.Errorf("%s: the description names %s, which is not an argument, a result field or a tool:\n%s", tl.Name, w, d)
				}
			}
			for _, a := range family[familyOf(tl.Name)] {
				if !englishArgs[a] && !slices.Contains(in, a) && !allowed[a] && words[a] && !tools[a] && !tools[prefix+a] {
					t.Errorf("%s: the description names %s, an argument of another tool that this one does not take:\n%s", tl.Name, a, d)
				}
			}
			if !strings.HasSuffix(strings.TrimSpace(d), ".") {
				t.Errorf("%s: the description does not end a sentence: %q", tl.Name, d)
			}
			if strings.HasPrefix(tl.Name, "store__notes__") {
				i := strings.Index(d, storeDesc)
				if i < 0 || !strings.HasPrefix(d[i+len(storeDesc):], ".") || (i > 0 && !strings.HasSuffix(d[:i], ". ") && !strings.HasSuffix(d[:i], ": ") && !strings.HasSuffix(d[:i], "\n")) {
					t.Errorf("%s: the store's description is not a sentence of its own:\n%s", tl.Name, d)
				}
			}
		}
	}
}

// otherToolsArgs removes from d the arguments it names as another
// tool's: "edit_file's old_text", "the if_hash argument of write_file".
func otherToolsArgs(d string, tools map[string]bool) string {
	d = regexp.MustCompile(`\b([a-z_]+)'s ([a-z_]+)`).ReplaceAllStringFunc(d, func(m string) string {
		if tool, _, _ := strings.Cut(m, "'"); tools[tool] {
			return tool
		}
		return m
	})
	return regexp.MustCompile(`the [a-z_]+ argument of`).ReplaceAllString(d, "an argument of")
}

// docFields are the fields of a store tool's documents, which its
// description names to explain keys and queries; nil for a file tool.
func docFields(t *testing.T, all []*mcp.Tool, name string) map[string]bool {
	rest, ok := strings.CutPrefix(name, "store__")
	if !ok {
		return nil
	}
	store, _, _ := strings.Cut(rest, "__")
	for _, tl := range all {
		if tl.Name != "store__"+store+"__get" {
			continue
		}
		b, _ := json.Marshal(tl.OutputSchema)
		var s struct {
			Properties struct {
				Document struct {
					Properties map[string]json.RawMessage `json:"properties"`
				} `json:"document"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for k := range s.Properties.Document.Properties {
			out[k] = true
		}
		return out
	}
	return nil
}

// familyOf is the group of tools whose arguments a description might
// confuse: the file tools, or the tools of one store.
func familyOf(name string) string {
	if rest, ok := strings.CutPrefix(name, "store__"); ok {
		store, _, _ := strings.Cut(rest, "__")
		return "store " + store
	}
	return "files"
}

func schemaProps(t *testing.T, schema any) []string {
	t.Helper()
	if schema == nil {
		return nil
	}
	b, err := json.Marshal(schema)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	var out []string
	for k := range s.Properties {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
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
