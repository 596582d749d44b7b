package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// seedProject writes the stores and agent of the seed into a directory.
func seedProject(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"stores/research-notes.json": `{
  "name": "research-notes",
  "entity": {
    "name": "ResearchNote",
    "key": "{company_id}:{topic}",
    "schema": {
      "company_id": { "type": "string" },
      "topic": { "type": "string" },
      "summary": { "type": "string" },
      "confidence": { "type": "number", "min": 0, "max": 1 },
      "updated_at": { "type": "datetime" },
      "tags": { "type": "array", "item": { "type": "string" } },
      "metadata": {
        "type": "object",
        "fields": {
          "source": { "type": "string" },
          "analyst": { "type": "string", "nullable": true }
        }
      }
    }
  },
  "history": { "versions": 3 }
}`,
		"stores/company-profiles.json": `{
  "name": "company-profiles",
  "shared": true,
  "entity": {
    "name": "CompanyProfile",
    "key": "{company_id}",
    "schema": {
      "company_id": { "type": "string" },
      "name": { "type": "string" }
    }
  }
}`,
		"agents/research/agent.json": `{"name": "Research", "stores": {"company-profiles": "read", "research-notes": "rw"}}`,
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func noteJSON(company, topic string, confidence float64) string {
	return fmt.Sprintf(`{"company_id": %q, "topic": %q, "summary": "s", "confidence": %v, "updated_at": "2026-01-31T10:30:00+01:00", "tags": ["a"], "metadata": {"source": "web", "analyst": null}}`,
		company, topic, confidence)
}

const storedNote = `{"company_id":"acme","confidence":0.5,"metadata":{"analyst":null,"source":"web"},"summary":"s","tags":["a"],"topic":"pricing","updated_at":"2026-01-31T09:30:00Z"}`

func TestDocSetGet(t *testing.T) {
	h := newHarness(t)
	dir := seedProject(t)
	equal(t, "set", h.ok("doc", "--dir", dir, "set", "research-notes", noteJSON("acme", "pricing", 0.5)), "acme:pricing version 1\n")
	equal(t, "set from stdin", h.okIn(noteJSON("acme", "pricing", 0.5), "doc", "--dir", dir, "set", "research-notes", "--json"), `{"key":"acme:pricing","version":2}`+"\n")
	equal(t, "get --json", h.ok("doc", "--dir", dir, "get", "research-notes", "acme:pricing", "--json"), storedNote+"\n")
	plain := h.ok("doc", "--dir", dir, "get", "research-notes", "acme:pricing")
	if !strings.HasPrefix(plain, "{\n  \"company_id\": \"acme\",") {
		t.Errorf("plain get is not indented JSON: %q", plain)
	}
	equal(t, "get --history", h.ok("doc", "--dir", dir, "get", "research-notes", "acme:pricing", "--history", "--json"),
		`{"document":`+storedNote+`,"history":[{"version":1,"document":`+storedNote+`}]}`+"\n")

	h.refused("document not found: acme:nothing", "doc", "--dir", dir, "get", "research-notes", "acme:nothing")
	h.refused(`store "nope" not found (stores: company-profiles, research-notes)`, "doc", "--dir", dir, "get", "nope", "x")

	r := h.run("doc", "--dir", dir, "set", "research-notes", `{"company_id": "acme", "topic": 1, "confidence": 2, "tags": [1], "metadata": {"source": null}}`)
	if r.Code != 1 || r.Out != "" {
		t.Fatalf("invalid set: exit %d, stdout %q", r.Code, r.Out)
	}
	for _, path := range []string{"topic:", "confidence:", "tags[0]:", "metadata.source:", "summary:", "updated_at:"} {
		if !strings.Contains(r.Err, path) {
			t.Errorf("the refusal does not name %s: %s", path, r.Err)
		}
	}
	h.usage("satchel doc get: missing KEY", "doc", "get", "research-notes")
}

func TestDocQueryList(t *testing.T) {
	h := newHarness(t)
	dir := seedProject(t)
	for i := 0; i < 25; i++ {
		h.ok("doc", "--dir", dir, "set", "research-notes", noteJSON(fmt.Sprintf("c%02d", i), "t", float64(i)/100))
	}
	r := h.run("doc", "--dir", dir, "query", "research-notes", "--where", "confidence >= 0.1", "--sort", "-confidence", "--limit", "3")
	if r.Code != 0 {
		t.Fatalf("query: %d %s", r.Code, r.Err)
	}
	lines := strings.Split(strings.TrimSuffix(r.Out, "\n"), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], `"company_id":"c24"`) || !strings.Contains(lines[2], `"company_id":"c22"`) {
		t.Fatalf("query output: %q", r.Out)
	}
	cursor, ok := strings.CutPrefix(strings.TrimSpace(r.Err), "more documents: --cursor ")
	if !ok {
		t.Fatalf("no cursor on stderr: %q", r.Err)
	}
	out := h.ok("doc", "--dir", dir, "query", "research-notes", "--where", "confidence >= 0.1", "--sort", "-confidence", "--limit", "3", "--cursor", cursor, "--json")
	pg := decode[docPageResult](t, out)
	if len(pg.Documents) != 3 || pg.NextCursor == nil || !strings.Contains(string(pg.Documents[0]), `"c21"`) {
		t.Errorf("second page: %s", out)
	}
	out = h.ok("doc", "--dir", dir, "query", "research-notes", "--where", "company_id = 'c03'", "--json")
	equal(t, "one result", out, `{"documents":[{"company_id":"c03","confidence":0.03,"metadata":{"analyst":null,"source":"web"},"summary":"s","tags":["a"],"topic":"t","updated_at":"2026-01-31T09:30:00Z"}],"next_cursor":null}`+"\n")

	h.refused("--limit must be between 1 and 100, was 101", "doc", "--dir", dir, "query", "research-notes", "--limit", "101")
	h.refused("--limit must be between 1 and 100, was 0", "doc", "--dir", dir, "list", "research-notes", "--limit", "0")
	r = h.run("doc", "--dir", dir, "query", "research-notes", "--where", "colour = 'red'")
	if r.Code != 1 || !strings.Contains(r.Err, "colour") {
		t.Errorf("query on an unknown field: %d %q", r.Code, r.Err)
	}

	var all []string
	cursor = ""
	for {
		args := []string{"doc", "--dir", dir, "list", "research-notes", "--limit", "10", "--json"}
		if cursor != "" {
			args = append(args, "--cursor", cursor)
		}
		pg := decode[docPageResult](t, h.ok(args...))
		for _, d := range pg.Documents {
			var m map[string]any
			json.Unmarshal(d, &m)
			all = append(all, m["company_id"].(string))
		}
		if pg.NextCursor == nil {
			break
		}
		cursor = *pg.NextCursor
	}
	if len(all) != 25 || all[0] != "c00" || all[24] != "c24" {
		t.Errorf("list: %v", all)
	}
}

func TestDocRmSharedSweep(t *testing.T) {
	h := newHarness(t)
	dir := seedProject(t)
	h.ok("doc", "--dir", dir, "--scope", "ops", "set", "company-profiles", `{"company_id": "acme", "name": "Acme"}`)
	equal(t, "shared from another scope", h.ok("doc", "--dir", dir, "--scope", "tenant", "get", "company-profiles", "acme", "--json"), `{"company_id":"acme","name":"Acme"}`+"\n")
	h.refused(`store "company-profiles" is not deletable (--force removes it anyway)`, "doc", "--dir", dir, "rm", "company-profiles", "acme")
	equal(t, "rm --force", h.ok("doc", "--dir", dir, "rm", "company-profiles", "acme", "--force"), "removed acme\n")
	equal(t, "rm again", h.ok("doc", "--dir", dir, "rm", "company-profiles", "acme", "--force", "--json"), `{"removed":false}`+"\n")
	equal(t, "sweep", h.ok("doc", "sweep"), "swept 0 expired documents\n")
	equal(t, "sweep --json", h.ok("doc", "sweep", "--json"), `{"swept":0}`+"\n")
}

func TestDocImport(t *testing.T) {
	h := newHarness(t)
	dir := seedProject(t)
	file := filepath.Join(t.TempDir(), "notes.jsonl")
	content := noteJSON("a", "t", 0.1) + "\n" +
		`{"company_id": "b"}` + "\n" +
		"\n" +
		noteJSON("c", "t", 0.3) + "\n" +
		"not json\n" +
		noteJSON("e", "t", 0.5) // no final newline
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	r := h.run("doc", "--dir", dir, "import", "research-notes", file)
	if r.Code != 1 {
		t.Fatalf("import with bad lines: exit %d, stderr %q", r.Code, r.Err)
	}
	equal(t, "imported", r.Out, "imported 3 documents\n")
	if !strings.HasPrefix(r.Err, "2 of 5 documents of "+file+" refused:\nline 2: document failed validation:") || !strings.Contains(r.Err, "\nline 5: ") {
		t.Errorf("report of the bad lines: %q", r.Err)
	}
	pg := decode[docPageResult](t, h.ok("doc", "--dir", dir, "list", "research-notes", "--json"))
	equal(t, "documents after import", len(pg.Documents), 3)

	out := h.okIn(noteJSON("f", "t", 0.6)+"\n", "doc", "--dir", dir, "import", "research-notes", "-", "--json")
	equal(t, "import from stdin", out, `{"imported":1,"refused":[]}`+"\n")
	h.refused("cannot read "+filepath.Join(dir, "missing.jsonl")+": no such file or directory", "doc", "--dir", dir, "import", "research-notes", filepath.Join(dir, "missing.jsonl"))
}

func TestCheckAndSchema(t *testing.T) {
	h := newHarness(t)
	dir := seedProject(t)
	equal(t, "check", h.ok("check", "--dir", dir), "ok: 2 stores (company-profiles, research-notes), 1 agent (research)\n")
	equal(t, "check --json", h.ok("check", "--dir", dir, "--json"),
		`{"dir":"`+dir+`","stores":["company-profiles","research-notes"],"agents":["research"]}`+"\n")

	bad := t.TempDir()
	os.MkdirAll(filepath.Join(bad, "stores"), 0o755)
	os.MkdirAll(filepath.Join(bad, "agents", "x"), 0o755)
	os.WriteFile(filepath.Join(bad, "stores", "a.json"), []byte(`{"key": "{id}", "schema": {"id": {"type": "strin"}}}`), 0o644)
	os.WriteFile(filepath.Join(bad, "stores", "b.json"), []byte(`{"name": "c", "key": "{id}", "schema": {"id": {"type": "string"}}}`), 0o644)
	os.WriteFile(filepath.Join(bad, "agents", "x", "agent.json"), []byte(`{"stores": {"zzz": "read"}}`), 0o644)
	r := h.run("check", "--dir", bad)
	if r.Code != 1 || r.Out != "" {
		t.Fatalf("check of a bad project: exit %d, stdout %q", r.Code, r.Out)
	}
	for _, want := range []string{"stores/a.json: ", "stores/b.json: ", "agents/x/agent.json: "} {
		if !strings.Contains(r.Err, want) {
			t.Errorf("check does not report %s:\n%s", want, r.Err)
		}
	}
	r = h.run("check", "--dir", filepath.Join(bad, "nothing"))
	if r.Code != 1 {
		t.Errorf("check of a missing directory: exit %d", r.Code)
	}

	for _, kind := range []string{"store", "agent"} {
		out := h.ok("schema", kind)
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); err != nil || m["$schema"] == nil {
			t.Errorf("schema %s: not a JSON Schema: %v", kind, err)
		}
	}
	h.refusedUsage(`unknown command "nope" for "satchel schema"`+"\n\nRun 'satchel schema --help' for its commands.", "schema", "nope")
}
