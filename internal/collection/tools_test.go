package collection

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/satchel-dev/satchel/internal/errs"
)

func toolNames(ts []ToolSpec) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

func TestToolsFor(t *testing.T) {
	p := mustLoad(t, map[string]string{
		"stores/research-notes.json":   `{"key": "{id}", "schema": {"id": {"type": "string"}}, "deletable": true}`,
		"stores/company-profiles.json": `{"key": "{id}", "schema": {"id": {"type": "string"}}, "shared": true, "deletable": true}`,
		"stores/logs.json":             `{"key": "{id}", "schema": {"id": {"type": "string"}}}`,
		"agents/writer/agent.json":     `{"stores": {"research-notes": "rw", "company-profiles": "rw", "logs": "rw"}}`,
		"agents/reader/agent.json":     `{"stores": {"research-notes": "read"}}`,
		"agents/none/agent.json":       `{}`,
	})
	tests := map[string][]string{
		"writer": {
			"store__company_profiles__get", "store__company_profiles__query", "store__company_profiles__list", // shared: never set/remove
			"store__logs__get", "store__logs__set", "store__logs__query", "store__logs__list", // not deletable: no remove
			"store__research_notes__get", "store__research_notes__set", "store__research_notes__query", "store__research_notes__list", "store__research_notes__remove",
		},
		"reader": {"store__research_notes__get", "store__research_notes__query", "store__research_notes__list"},
		"none":   nil,
	}
	for agent, want := range tests {
		ts, err := p.ToolsFor(agent)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, toolNames(ts)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", agent, diff)
		}
		for _, tool := range ts {
			if len(tool.Name) > 64 {
				t.Errorf("%s is longer than 64", tool.Name)
			}
			want := map[string][3]bool{OpGet: {true, false, true}, OpQuery: {true, false, true}, OpList: {true, false, true},
				OpSet: {false, true, false}, OpRemove: {false, true, true}}[tool.Op]
			if got := [3]bool{tool.ReadOnly, tool.Destructive, tool.Idempotent}; got != want {
				t.Errorf("%s annotations %v, want %v", tool.Name, got, want)
			}
			if !strings.HasPrefix(tool.Name, ToolPrefix(tool.Store)) || !strings.HasSuffix(tool.Name, "__"+tool.Op) {
				t.Errorf("%s: store %q op %q", tool.Name, tool.Store, tool.Op)
			}
		}
	}
	if _, err := p.ToolsFor("ghost"); !errors.Is(err, errs.ErrNotFound) || err.Error() != `agent "ghost" not found (agents: none, reader, writer)` {
		t.Errorf("unknown agent: %v", err)
	}
	// The longest name gives tool names that fit in 64 characters.
	long := strings.Repeat("a", MaxNameLen)
	lp := mustLoad(t, map[string]string{"stores/" + long + ".json": `{"key": "{id}", "schema": {"id": {"type": "string"}}, "deletable": true}`})
	for _, tool := range lp.Stores[long].Tools(AccessRW) {
		if len(tool.Name) > 64 {
			t.Errorf("%s has %d characters", tool.Name, len(tool.Name))
		}
	}
}

func TestSeedTools(t *testing.T) {
	p := seedProject(t)
	ts, err := p.ToolsFor("research")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"store__company_profiles__get", "store__company_profiles__query", "store__company_profiles__list",
		"store__research_notes__get", "store__research_notes__set", "store__research_notes__query", "store__research_notes__list"}
	if diff := cmp.Diff(want, toolNames(ts)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	byName := map[string]ToolSpec{}
	for _, tool := range ts {
		byName[tool.Name] = tool
		for _, s := range []json.RawMessage{tool.InputSchema, tool.OutputSchema} {
			if !json.Valid(s) {
				t.Errorf("%s: invalid JSON schema %s", tool.Name, s)
			}
		}
	}
	set := byName["store__research_notes__set"]
	wantSet := `{"title":"ResearchNote","type":"object","properties":{"company_id":{"type":"string"},"topic":{"type":"string"},"summary":{"type":"string"},` +
		`"confidence":{"type":"number","minimum":0,"maximum":1},"updated_at":{"type":"string","format":"date-time"},"tags":{"type":"array","items":{"type":"string"}},` +
		`"metadata":{"type":"object","properties":{"source":{"type":"string"},"analyst":{"type":["string","null"]}},"required":["source"],"additionalProperties":false},` +
		`"idempotency_key":{"type":"string","description":"Optional: a key of your choosing (1 to 128 printable ASCII characters, no spaces) that makes this call safe to retry: the same call again with the same key returns the first result and changes nothing; the same key with different arguments is refused."}},` +
		`"required":["company_id","topic","summary","confidence","updated_at","tags","metadata"],"additionalProperties":false}`
	if string(set.InputSchema) != wantSet {
		t.Errorf("set input schema:\n got %s\nwant %s", set.InputSchema, wantSet)
	}
	for _, phrase := range []string{"{company_id}:{topic}", `must not contain ":"`, "3 versions", "confidence (number 0 to 1)", "metadata (object {source: string; analyst: string, or null})"} {
		if !strings.Contains(set.Description, phrase) {
			t.Errorf("set description lacks %q:\n%s", phrase, set.Description)
		}
	}
	q := byName["store__research_notes__query"]
	for _, phrase := range []string{"joined by AND", "''", "IN ['a', 'b']", "<, <=, >, >= on numbers and datetimes", "RFC 3339", "company_id = 'abc' AND confidence >= 0.5",
		"metadata.source (string)", "-field", "the key breaks ties", "1 to 100 (default 20)", "next_cursor", "field = null matches null or missing"} {
		if !strings.Contains(q.Description, phrase) {
			t.Errorf("query description lacks %q:\n%s", phrase, q.Description)
		}
	}
	// Every example in the query description parses and checks.
	rn, _ := p.Store("research-notes")
	for _, ex := range rn.queryExamples() {
		if _, err := rn.ParseQuery(ex); err != nil {
			t.Errorf("example %q: %v", ex, err)
		}
	}
	if !strings.Contains(byName["store__company_profiles__get"].Description, "shared and read-only") {
		t.Error("shared store's description does not say it is read-only")
	}

	// W2 documents validate against the set schema; broken ones do not.
	for i := 0; i < 20; i++ {
		doc, _ := json.Marshal(w2Doc(i*37, i%2))
		if probs, err := checkSchema(set.InputSchema, doc); err != nil || len(probs) > 0 {
			t.Errorf("W2 doc %d: %v %v", i, probs, err)
		}
	}
	for _, bad := range []string{
		`{"company_id": "a", "topic": "t", "summary": "", "confidence": 2, "updated_at": "x", "tags": [], "metadata": {"source": "s"}}`,
		`{"company_id": "a", "topic": "t", "summary": "", "confidence": 1, "updated_at": "x", "tags": [1], "metadata": {"source": "s"}}`,
		`{"company_id": "a", "topic": "t", "summary": "", "confidence": 1, "updated_at": "x", "tags": [], "metadata": {"source": "s"}, "extra": 1}`,
		`{"company_id": "a", "topic": "t", "summary": "", "confidence": 1, "updated_at": "x", "tags": [], "metadata": {}}`,
	} {
		if probs, err := checkSchema(set.InputSchema, []byte(bad)); err != nil || len(probs) == 0 {
			t.Errorf("%s passed the schema (%v)", bad, err)
		}
	}
	in := `{"where": "confidence > 0.5", "sort": "-updated_at", "limit": 100, "cursor": "abc"}`
	if probs, err := checkSchema(q.InputSchema, []byte(in)); err != nil || len(probs) > 0 {
		t.Errorf("query input: %v %v", probs, err)
	}
	if probs, _ := checkSchema(q.InputSchema, []byte(`{"limit": 101, "sort": "tags"}`)); len(probs) != 2 {
		t.Errorf("bad query input: %v", probs)
	}
}

func TestDefinitionSchemas(t *testing.T) {
	for _, s := range [][]byte{StoreDefinitionSchema(), AgentDefinitionSchema()} {
		if !json.Valid(s) {
			t.Fatalf("invalid JSON: %s", s)
		}
	}
	ok := map[string][]byte{}
	for _, f := range []string{"testdata/seed/stores/research-notes.json", "testdata/seed/stores/company-profiles.json"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ok[f] = b
	}
	stores := []string{
		`{"key": "{id}", "schema": {"id": {"type": "string"}}}`,
		`{"$schema": "x", "name": "a", "description": "d", "key": "{id}", "schema": {"id": {"type": "ref", "store": "b", "nullable": true, "description": "x"}},
		  "ttl": {"default": 60, "override": [{"condition": "id = 'x'", "ttl": 5}]}, "deletable": true, "shared": false, "indexes": ["id"]}`,
		`{"entity": {"key": "{id}", "schema": {"id": {"type": "enum", "values": ["a"]}, "o": {"type": "object", "fields": {"a": {"type": "array", "item": {"type": "datetime"}}}}}}, "ttl": 5}`,
	}
	for i, s := range stores {
		ok["extra "+string(rune('0'+i))] = []byte(s)
	}
	for name, b := range ok {
		if probs, err := checkSchema(StoreDefinitionSchema(), b); err != nil || len(probs) > 0 {
			t.Errorf("%s does not validate: %v %v", name, probs, err)
		}
	}
	// Each of these is refused by LoadProject, and by the schema too.
	bad := []string{
		`{"key": "{id}"}`,
		`{"entity": {"key": "{id}", "schema": {"id": {"type": "string"}}}, "key": "{id}"}`,
		`{"key": "{id}", "schema": {"id": {"type": "string", "min": 1}}}`,
		`{"key": "{id}", "schema": {"id": {"type": "strin"}}}`,
		`{"key": "{id}", "schema": {"id": {"type": "enum", "values": []}}}`,
		`{"key": "{id}", "schema": {"id": {"type": "array"}}}`,
		`{"key": "{id}", "schema": {"id": {"type": "string"}}, "versions": 3}`,
		`{"key": "{id}", "schema": {"id": {"type": "string"}}, "history": {"versions": -1}}`,
		`{"key": "{id}", "schema": {"id": {"type": "string"}}, "ttl": 0}`,
		`{"key": "{id}", "schema": {"id": {"type": "string"}}, "ttl": {}}`,
		`{"key": "{id}", "schema": {"id": {"type": "string"}}, "name": "Bad"}`,
		`{"key": "id", "schema": {"id": {"type": "string"}}}`,
		`{"key": "{id}", "schema": {}}`,
	}
	for _, s := range bad {
		if probs, err := checkSchema(StoreDefinitionSchema(), []byte(s)); err != nil || len(probs) == 0 {
			t.Errorf("%s validates (%v)", s, err)
		}
	}
	agent, _ := os.ReadFile("testdata/seed/agents/research/agent.json")
	if probs, err := checkSchema(AgentDefinitionSchema(), agent); err != nil || len(probs) > 0 {
		t.Errorf("seed agent: %v %v", probs, err)
	}
	for _, s := range []string{`{"stores": {"a": "write"}}`, `{"tools": []}`, `{"stores": {"A": "read"}}`, `{"name": 1}`} {
		if probs, err := checkSchema(AgentDefinitionSchema(), []byte(s)); err != nil || len(probs) == 0 {
			t.Errorf("agent %s validates (%v)", s, err)
		}
	}
}
