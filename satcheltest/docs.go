package satcheltest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/internal/backendof"
	"github.com/satchel-dev/satchel/internal/testenv"
)

// RunDocuments checks every behaviour of collections (DESIGN §3) through
// the satchel API on a store over a fresh backend from open for each
// subtest: validation with field paths, keys, history, expiry and the
// sweeper, scopes, shared stores, agents' access, queries (operators, null
// semantics, datetimes, sorts, limits, cursors while documents change),
// remove, refs and the generated tools. The backend must implement
// backend.Documents. The tests of expiry move the backend's clock
// (backend.ClockSetter); they are skipped on a backend without one.
func RunDocuments(t *testing.T, open func(t *testing.T) backend.Backend) {
	d := &docSuite{open: open}
	tests := []struct {
		name string
		fn   func(t *testing.T, st *satchel.Store)
	}{
		{"SeedDefinitions", d.seedDefinitions},
		{"ValidationPaths", d.validationPaths},
		{"NullableAndAbsent", d.nullableAndAbsent},
		{"Keys", d.keys},
		{"ReadBackExact", d.readBackExact},
		{"GoValues", d.goValues},
		{"History", d.history},
		{"Expiry", d.expiry},
		{"ExpiryOverrides", d.expiryOverrides},
		{"ExpiredReplaced", d.expiredReplaced},
		{"Sweep", d.sweep},
		{"Scopes", d.scopes},
		{"SharedStores", d.sharedStores},
		{"Access", d.access},
		{"ScopeUsageAs", d.scopeUsageAs},
		{"RemoveAndDeletable", d.removeAndDeletable},
		{"Refs", d.refs},
		{"QueryOperators", d.queryOperators},
		{"QueryErrors", d.queryErrors},
		{"Sort", d.sort},
		{"Limits", d.limits},
		{"CursorWhileChanging", d.cursorWhileChanging},
		{"ListAll", d.listAll},
		{"Tools", d.tools},
		{"ConcurrentSets", d.concurrentSets},
		{"ConcurrentSetsMany", d.concurrentSetsMany},
		{"NULRefused", d.nulRefused},
		{"Quota", d.quota},
		{"QuotaSweep", d.quotaSweep},
		{"QuotaConcurrent", d.quotaConcurrent},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each behaviour has a backend of its own
			b := d.open(t)
			if _, ok := backend.As[backend.Documents](b); !ok {
				testenv.Skip(t, "%T does not implement backend.Documents", b)
			}
			st := satchel.New(b)
			t.Cleanup(func() { st.Close() })
			tc.fn(t, st)
		})
	}
}

type docSuite struct {
	open func(t *testing.T) backend.Backend
}

// clock is a settable time for a backend.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// setClock gives the store's backend a clock the test moves
// (backend.ClockSetter), or skips.
func setClock(t *testing.T, st *satchel.Store) *clock {
	t.Helper()
	cs, ok := backend.As[backend.ClockSetter](backendof.Store(st))
	if !ok {
		testenv.Skip(t, "%T is not a backend.ClockSetter: expiry is not tested", backendof.Store(st))
	}
	c := &clock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	cs.SetClock(c.Now)
	t.Cleanup(func() { cs.SetClock(nil) })
	return c
}

// The project of the suite.
var docProject = fstest.MapFS{
	"stores/notes.json": {Data: []byte(`{
  "entity": {
    "name": "Note",
    "key": "{company_id}:{topic}",
    "schema": {
      "company_id": { "type": "string" },
      "topic": { "type": "string" },
      "summary": { "type": "string" },
      "confidence": { "type": "number", "min": 0, "max": 1 },
      "updated_at": { "type": "datetime" },
      "status": { "type": "enum", "values": ["draft", "final"] },
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
  "history": { "versions": 3 },
  "deletable": true
}`)},
	"stores/items.json":    {Data: []byte(itemsDef(false))},
	"stores/items-ix.json": {Data: []byte(itemsDef(true))},
	"stores/profiles.json": {Data: []byte(`{
  "shared": true,
  "key": "{company_id}",
  "schema": { "company_id": { "type": "string" }, "name": { "type": "string" } }
}`)},
	"stores/tasks.json": {Data: []byte(`{
  "key": "{id}",
  "schema": {
    "id": { "type": "string" },
    "status": { "type": "enum", "values": ["open", "done", "cancelled", "kept"] }
  },
  "history": { "versions": 2 },
  "ttl": {
    "default": 3600,
    "override": [
      { "condition": "status = 'done'", "ttl": 60 },
      { "condition": "status IN ['done', 'cancelled']", "ttl": 120 },
      { "condition": "status != 'open'", "ttl": 7200 }
    ]
  }
}`)},
	"stores/events.json": {Data: []byte(`{
  "key": "{id}",
  "schema": { "id": { "type": "string" }, "kind": { "type": "string" } },
  "ttl": { "override": [ { "condition": "kind = 'tmp'", "ttl": 10 } ] }
}`)},
	"stores/links.json": {Data: []byte(`{
  "key": "{id}",
  "schema": {
    "id": { "type": "string" },
    "note": { "type": "ref", "store": "notes" },
    "company": { "type": "ref", "store": "profiles", "nullable": true }
  }
}`)},
	"stores/pairs.json": {Data: []byte(`{
  "key": "{a}-{b}",
  "schema": { "a": { "type": "string" }, "b": { "type": "number", "nullable": true } }
}`)},
	"stores/plain.json": {Data: []byte(`{
  "key": "{a}",
  "schema": { "a": { "type": "string" }, "b": { "type": "number", "nullable": true }, "c": { "type": "boolean", "nullable": true } }
}`)},
	"agents/reader/agent.json": {Data: []byte(`{"name": "Reader", "stores": {"notes": "read", "profiles": "read"}}`)},
	"agents/writer/agent.json": {Data: []byte(`{"stores": {"notes": "rw", "profiles": "rw", "plain": "rw", "items": "rw", "tasks": "rw"}}`)},
}

func itemsDef(indexed bool) string {
	ix := ""
	if indexed {
		ix = `,
  "indexes": ["n", "at", "status", "flag", "tag", "meta.src", "meta.who"]`
	}
	return `{
  "key": "{id}",
  "schema": {
    "id": { "type": "string" },
    "n": { "type": "number", "nullable": true },
    "at": { "type": "datetime", "nullable": true },
    "status": { "type": "enum", "values": ["open", "done", "waiting"] },
    "flag": { "type": "boolean" },
    "tag": { "type": "string", "nullable": true },
    "meta": { "type": "object", "nullable": true, "fields": {
      "src": { "type": "string" },
      "who": { "type": "string", "nullable": true }
    } }
  }` + ix + `
}`
}

func project(t *testing.T) *satchel.Project {
	t.Helper()
	p, err := satchel.LoadProjectFS(docProject)
	if err != nil {
		t.Fatalf("load the suite's project: %v", err)
	}
	return p
}

func coll(t *testing.T, st *satchel.Store, p *satchel.Project, scope, store string, opts ...satchel.CollectionOption) *satchel.Collection {
	t.Helper()
	c, err := st.Collection(bg, p, scope, store, opts...)
	if err != nil {
		t.Fatalf("collection %s in %s: %v", store, scope, err)
	}
	return c
}

func note(company, topic string, confidence float64) map[string]any {
	return map[string]any{
		"company_id": company, "topic": topic, "summary": "s " + company + " " + topic,
		"confidence": confidence, "updated_at": "2026-01-31T09:30:00Z", "status": "draft",
		"tags": []any{"a", "b"}, "metadata": map[string]any{"source": "web", "analyst": nil},
	}
}

func set(t *testing.T, c *satchel.Collection, doc any) (string, int64) {
	t.Helper()
	k, v, err := c.Set(bg, doc)
	if err != nil {
		t.Fatalf("set %v: %v", doc, err)
	}
	return k, v
}

func decode(t *testing.T, d satchel.Document) map[string]any {
	t.Helper()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("decode %s: %v", d.JSON, err)
	}
	return m
}

func pageKeys(pg satchel.DocumentPage) []string {
	out := make([]string, len(pg.Documents))
	for i, d := range pg.Documents {
		out[i] = d.Key
	}
	return out
}

// validation returns the violations of a *ValidationError as
// "path: message" strings, or fails.
func validation(t *testing.T, what string, err error) []string {
	t.Helper()
	var ve *satchel.ValidationError
	if !errors.As(err, &ve) || !errors.Is(err, satchel.ErrValidation) {
		t.Fatalf("%s: error %v is not a *ValidationError", what, err)
	}
	var out []string
	for _, v := range ve.Violations {
		out = append(out, v.Path)
	}
	return out
}

// The seed's store definitions and agent load as written, and give the
// agent exactly its tools.
func (d *docSuite) seedDefinitions(t *testing.T, st *satchel.Store) {
	p, err := satchel.LoadProjectFS(fstest.MapFS{
		"stores/research-notes.json": {Data: []byte(`{
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
}`)},
		"stores/company-profiles.json": {Data: []byte(`{
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
}`)},
		"agents/research/agent.json": {Data: []byte(`{
  "name": "Research",
  "stores": {
    "company-profiles": "read",
    "research-notes": "rw"
  }
}`)},
	})
	if err != nil {
		t.Fatalf("the seed's definitions: %v", err)
	}
	tools, err := st.CollectionTools(p, "research")
	must(t, "tools", err)
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	equalSlice(t, "tools of research", names, []string{
		"store__company_profiles__get", "store__company_profiles__query", "store__company_profiles__list",
		"store__research_notes__get", "store__research_notes__set", "store__research_notes__query", "store__research_notes__list",
	})

	// An operator populates the shared catalog; the agent reads it from
	// any scope, and cannot write it even if it declared rw.
	profiles := coll(t, st, p, "ops", "company-profiles")
	set(t, profiles, `{"company_id": "acme", "name": "Acme"}`)
	agentProfiles := coll(t, st, p, "tenant-1", "company-profiles", satchel.AsAgent("research"))
	if got, err := agentProfiles.Get(bg, "acme", false); err != nil || string(got.JSON) != `{"company_id":"acme","name":"Acme"}` {
		t.Errorf("shared profile from another scope: %s, %v", got.JSON, err)
	}
	_, _, err = agentProfiles.Set(bg, `{"company_id": "x", "name": "X"}`)
	refused(t, "agent set on company-profiles", err, satchel.ErrReadOnly, `store "company-profiles" is shared (read-only): writes are not allowed`)

	notes := coll(t, st, p, "tenant-1", "research-notes", satchel.AsAgent("research"))
	seedNote := note("acme", "pricing", 0.8)
	delete(seedNote, "status")
	key, v := set(t, notes, seedNote)
	equal(t, "key", key, "acme:pricing")
	equal(t, "version", v, int64(1))
	_, err = notes.Remove(bg, key)
	refused(t, "agent remove on research-notes", err, satchel.ErrAccessDenied, `store "research-notes" is not deletable`)
}

// A set validates the whole document and reports every violation with its
// field path; nothing is written.
func (d *docSuite) validationPaths(t *testing.T, st *satchel.Store) {
	p := project(t)
	c := coll(t, st, p, "s1", "notes")
	bad := `{
  "company_id": "acme",
  "topic": 7,
  "confidence": 1.5,
  "updated_at": "yesterday",
  "status": "published",
  "tags": ["ok", 3, null],
  "metadata": { "source": null, "extra": 1 },
  "colour": "red"
}`
	_, _, err := c.Set(bg, bad)
	paths := validation(t, "set of a bad document", err)
	want := []string{"topic", "summary", "confidence", "updated_at", "status", "tags[1]", "tags[2]", "metadata.source", "metadata.extra", "colour"}
	for _, w := range want {
		if !slices.Contains(paths, w) {
			t.Errorf("no violation at %s; violations: %q (%v)", w, paths, err)
		}
	}
	if !strings.Contains(err.Error(), "metadata.source") || !strings.Contains(err.Error(), "tags[1]") {
		t.Errorf("message does not name the paths: %v", err)
	}
	pg, err := c.List(bg, 0, "")
	must(t, "list", err)
	equal(t, "documents after refused sets", len(pg.Documents), 0)

	for _, in := range []any{`[1, 2]`, `"text"`, `{"a": `, `{} {}`, 42} {
		_, _, err := c.Set(bg, in)
		if !errors.Is(err, satchel.ErrValidation) && !errors.Is(err, satchel.ErrInvalidArgument) {
			t.Errorf("set %v: %v, want a refusal", in, err)
		}
	}
}

// A nullable field may be absent (absent is null); any other must be
// present, and null only where nullable.
func (d *docSuite) nullableAndAbsent(t *testing.T, st *satchel.Store) {
	p := project(t)
	c := coll(t, st, p, "s1", "plain")
	set(t, c, `{"a": "x"}`)
	set(t, c, `{"a": "y", "b": null, "c": true}`)
	_, _, err := c.Set(bg, `{"b": 1}`)
	equalSlice(t, "missing a", validation(t, "missing a", err), []string{"a"})
	_, _, err = c.Set(bg, `{"a": null}`)
	if paths := validation(t, "null a", err); !slices.Contains(paths, "a") {
		t.Errorf("null a: %q", paths)
	}
	got, err := c.Get(bg, "x", false)
	must(t, "get", err)
	equal(t, "absent field stays absent", string(got.JSON), `{"a":"x"}`)
	got, err = c.Get(bg, "y", false)
	must(t, "get", err)
	equal(t, "null field stays null", string(got.JSON), `{"a":"y","b":null,"c":true}`)
}

// Keys come from the template; a missing or null key field is refused.
func (d *docSuite) keys(t *testing.T, st *satchel.Store) {
	p := project(t)
	c := coll(t, st, p, "s1", "pairs")
	k, _ := set(t, c, `{"a": "x", "b": 12}`)
	equal(t, "key", k, "x-12")
	k, _ = set(t, c, `{"a": "x", "b": 1.5}`)
	equal(t, "key", k, "x-1.5")
	_, _, err := c.Set(bg, `{"a": "x"}`)
	if paths := validation(t, "absent key field", err); !slices.Contains(paths, "b") {
		t.Errorf("absent key field b: %q", paths)
	}
	_, _, err = c.Set(bg, `{"a": "x", "b": null}`)
	if paths := validation(t, "null key field", err); !slices.Contains(paths, "b") {
		t.Errorf("null key field b: %q", paths)
	}
	_, _, err = c.Set(bg, `{"a": "", "b": 1}`)
	if paths := validation(t, "empty key field", err); !slices.Contains(paths, "a") {
		t.Errorf("empty key field a: %q", paths)
	}

	n := coll(t, st, p, "s1", "notes")
	k, _ = set(t, n, note("acme", "pricing", 0.5))
	equal(t, "notes key", k, "acme:pricing")
	_, err = n.Get(bg, "acme:nothing", false)
	refused(t, "get of a missing key", err, satchel.ErrNotFound, "document not found: acme:nothing")
	_, err = n.Get(bg, "", false)
	if !errors.Is(err, satchel.ErrInvalidArgument) {
		t.Errorf("get of an empty key: %v", err)
	}
}

// A document reads back as it was written: numbers as sent (no rounding),
// strings exact, only datetimes normalized to UTC.
func (d *docSuite) readBackExact(t *testing.T, st *satchel.Store) {
	p := project(t)
	c := coll(t, st, p, "s1", "items")
	in := `{"id": "é<&>\u2028\"\\", "n": 12345678901234567890, "at": "2026-01-31T10:30:00.5+01:00", "status": "open", "flag": false, "tag": "line\nbreak", "meta": {"src": "x", "who": null}}`
	k, v := set(t, c, in)
	equal(t, "key", k, "é<&>\u2028\"\\")
	equal(t, "version", v, int64(1))
	got, err := c.Get(bg, k, false)
	must(t, "get", err)
	want := `{"at":"2026-01-31T09:30:00.5Z","flag":false,"id":"é<&>\u2028\"\\","meta":{"src":"x","who":null},"n":12345678901234567890,"status":"open","tag":"line\nbreak"}`
	equal(t, "document", string(got.JSON), want)
	m := decode(t, got)
	equal(t, "big number", m["n"].(json.Number).String(), "12345678901234567890")
	if got.Updated.IsZero() || !got.Expires.IsZero() {
		t.Errorf("updated %v, expires %v", got.Updated, got.Expires)
	}
}

// Documents built in Go are accepted (numbers of any Go type, []string),
// and the caller may change them after a set.
func (d *docSuite) goValues(t *testing.T, st *satchel.Store) {
	p := project(t)
	c := coll(t, st, p, "s1", "notes")
	doc := note("acme", "go", 0.25)
	doc["tags"] = []string{"x", "y"}
	set(t, c, doc)
	doc["summary"] = "changed after the set"
	doc["metadata"].(map[string]any)["source"] = "changed"
	got, err := c.Get(bg, "acme:go", false)
	must(t, "get", err)
	m := decode(t, got)
	equal(t, "summary", m["summary"].(string), "s acme go")
	equal(t, "metadata.source", m["metadata"].(map[string]any)["source"].(string), "web")
	equal(t, "tags", fmt.Sprint(m["tags"]), "[x y]")

	type meta struct {
		Source  string  `json:"source"`
		Analyst *string `json:"analyst"`
	}
	type noteT struct {
		CompanyID  string   `json:"company_id"`
		Topic      string   `json:"topic"`
		Summary    string   `json:"summary"`
		Confidence float64  `json:"confidence"`
		UpdatedAt  string   `json:"updated_at"`
		Status     string   `json:"status"`
		Tags       []string `json:"tags"`
		Metadata   meta     `json:"metadata"`
	}
	k, _ := set(t, c, noteT{"acme", "struct", "s", 1, "2026-01-01T00:00:00Z", "final", []string{}, meta{Source: "call"}})
	equal(t, "struct key", k, "acme:struct")
	got, err = c.Get(bg, k, false)
	must(t, "get struct", err)
	var back noteT
	must(t, "decode into a struct", got.Decode(&back))
	equal(t, "struct round trip", back.UpdatedAt, "2026-01-01T00:00:00Z")
}

// A set that replaces a document moves the old one into history, newest
// first, trimmed to history.versions.
func (d *docSuite) history(t *testing.T, st *satchel.Store) {
	p := project(t)
	c := coll(t, st, p, "s1", "notes")
	for i := 1; i <= 5; i++ {
		_, v := set(t, c, note("acme", "h", float64(i)/10))
		equal(t, "version", v, int64(i))
	}
	got, err := c.Get(bg, "acme:h", true)
	must(t, "get with history", err)
	equal(t, "version", got.Version, int64(5))
	equal(t, "confidence", decode(t, got)["confidence"].(json.Number).String(), "0.5")
	var versions []string
	for _, h := range got.History {
		versions = append(versions, fmt.Sprintf("%d:%s", h.Version, decode(t, h)["confidence"]))
	}
	equalSlice(t, "history", versions, []string{"4:0.4", "3:0.3", "2:0.2"})
	plain, err := c.Get(bg, "acme:h", false)
	must(t, "get", err)
	equal(t, "no history unless asked", len(plain.History), 0)

	// A store without history keeps none.
	pl := coll(t, st, p, "s1", "plain")
	set(t, pl, `{"a": "x", "b": 1}`)
	_, v := set(t, pl, `{"a": "x", "b": 1, "c": true}`)
	equal(t, "version without history", v, int64(2))
	got, err = pl.Get(bg, "x", true)
	must(t, "get", err)
	equal(t, "history of a store without versions", len(got.History), 0)

	// A store with versions 2.
	tasks := coll(t, st, p, "s1", "tasks")
	for _, s := range []string{"open", "kept", "open", "kept"} {
		set(t, tasks, `{"id": "t", "status": "`+s+`"}`)
	}
	got, err = tasks.Get(bg, "t", true)
	must(t, "get task", err)
	equal(t, "task history", len(got.History), 2)
	equal(t, "newest first", got.History[0].Version, int64(3))
}

// Expiry is computed at set time from ttl; expired documents are invisible
// to get, query and list; operators see them with IncludeExpired.
func (d *docSuite) expiry(t *testing.T, st *satchel.Store) {
	clk := setClock(t, st)
	p := project(t)
	c := coll(t, st, p, "s1", "tasks")
	t0 := clk.Now()
	set(t, c, `{"id": "a", "status": "open"}`)
	got, err := c.Get(bg, "a", false)
	must(t, "get", err)
	if !got.Expires.Equal(t0.Add(time.Hour)) {
		t.Errorf("expires %v, want %v", got.Expires, t0.Add(time.Hour))
	}
	clk.Add(59 * time.Minute)
	set(t, c, `{"id": "b", "status": "open"}`) // expires at t0+1h59m
	clk.Add(time.Minute - time.Nanosecond)
	if _, err := c.Get(bg, "a", false); err != nil {
		t.Errorf("a is visible until its expiry: %v", err)
	}
	clk.Add(time.Nanosecond) // exactly t0+1h: a has expired
	_, err = c.Get(bg, "a", false)
	refused(t, "get of an expired document", err, satchel.ErrNotFound, "document not found: a")
	pg, err := c.List(bg, 0, "")
	must(t, "list", err)
	equalSlice(t, "list hides expired", pageKeys(pg), []string{"b"})
	pg, err = c.Query(bg, satchel.QueryRequest{Where: "status = 'open'"})
	must(t, "query", err)
	equalSlice(t, "query hides expired", pageKeys(pg), []string{"b"})

	ops := coll(t, st, p, "s1", "tasks", satchel.IncludeExpired())
	got, err = ops.Get(bg, "a", true)
	must(t, "operator get of an expired document", err)
	equal(t, "expired version", got.Version, int64(1))
	pg, err = ops.List(bg, 0, "")
	must(t, "operator list", err)
	equalSlice(t, "operator list shows expired", pageKeys(pg), []string{"a", "b"})
	pg, err = ops.Query(bg, satchel.QueryRequest{Where: "status = 'open'"})
	must(t, "operator query", err)
	equalSlice(t, "operator query shows expired", pageKeys(pg), []string{"a", "b"})

	// Agents cannot ask for expired documents.
	_, err = st.Collection(bg, p, "s1", "tasks", satchel.AsAgent("writer"), satchel.IncludeExpired())
	if !errors.Is(err, satchel.ErrAccessDenied) {
		t.Errorf("agent with IncludeExpired: %v", err)
	}

	// A set computes a fresh expiry.
	set(t, c, `{"id": "b", "status": "open"}`)
	got, err = c.Get(bg, "b", false)
	must(t, "get b", err)
	if !got.Expires.Equal(clk.Now().Add(time.Hour)) {
		t.Errorf("expires after a new set %v, want %v", got.Expires, clk.Now().Add(time.Hour))
	}
}

// The first override whose condition matches wins; without a default, a
// document no override matches never expires.
func (d *docSuite) expiryOverrides(t *testing.T, st *satchel.Store) {
	clk := setClock(t, st)
	p := project(t)
	c := coll(t, st, p, "s1", "tasks")
	t0 := clk.Now()
	for status, ttl := range map[string]time.Duration{"open": time.Hour, "done": time.Minute, "cancelled": 2 * time.Minute, "kept": 2 * time.Hour} {
		set(t, c, `{"id": "`+status+`", "status": "`+status+`"}`)
		got, err := c.Get(bg, status, false)
		must(t, "get", err)
		if !got.Expires.Equal(t0.Add(ttl)) {
			t.Errorf("status %s expires %v, want %v", status, got.Expires, t0.Add(ttl))
		}
	}
	ev := coll(t, st, p, "s1", "events")
	set(t, ev, `{"id": "keep", "kind": "log"}`)
	set(t, ev, `{"id": "tmp", "kind": "tmp"}`)
	clk.Add(365 * 24 * time.Hour)
	if _, err := ev.Get(bg, "keep", false); err != nil {
		t.Errorf("a document no override matches never expires: %v", err)
	}
	_, err := ev.Get(bg, "tmp", false)
	refused(t, "tmp after its ttl", err, satchel.ErrNotFound, "document not found: tmp")
}

// A set on an expired document starts it again: the expired version and
// its history are gone, as if the sweeper had run.
func (d *docSuite) expiredReplaced(t *testing.T, st *satchel.Store) {
	clk := setClock(t, st)
	p := project(t)
	c := coll(t, st, p, "s1", "tasks")
	set(t, c, `{"id": "a", "status": "open"}`)
	set(t, c, `{"id": "a", "status": "open"}`)
	clk.Add(2 * time.Hour)
	_, v := set(t, c, `{"id": "a", "status": "kept"}`)
	equal(t, "version after expiry", v, int64(1))
	got, err := c.Get(bg, "a", true)
	must(t, "get", err)
	equal(t, "history after expiry", len(got.History), 0)
	removed, err := coll(t, st, p, "s1", "tasks", satchel.Force()).Remove(bg, "a")
	must(t, "remove", err)
	equal(t, "removed", removed, true)
}

// The sweeper deletes expired documents (of every store and scope), with
// their history; after it even operators do not see them.
func (d *docSuite) sweep(t *testing.T, st *satchel.Store) {
	clk := setClock(t, st)
	p := project(t)
	a := coll(t, st, p, "s1", "tasks")
	b := coll(t, st, p, "s2", "tasks")
	set(t, a, `{"id": "done", "status": "done"}`)
	set(t, a, `{"id": "done", "status": "done"}`)
	set(t, b, `{"id": "done", "status": "done"}`)
	set(t, a, `{"id": "open", "status": "open"}`)
	n, err := st.SweepDocuments(bg)
	must(t, "sweep", err)
	equal(t, "swept before expiry", n, int64(0))
	clk.Add(time.Minute)
	n, err = st.SweepDocuments(bg)
	must(t, "sweep", err)
	equal(t, "swept", n, int64(2))
	ops := coll(t, st, p, "s1", "tasks", satchel.IncludeExpired())
	_, err = ops.Get(bg, "done", true)
	refused(t, "operator get after sweep", err, satchel.ErrNotFound, "document not found: done")
	pg, err := ops.List(bg, 0, "")
	must(t, "list", err)
	equalSlice(t, "left after sweep", pageKeys(pg), []string{"open"})
	_, v := set(t, a, `{"id": "done", "status": "open"}`)
	equal(t, "version of a swept key", v, int64(1))
}

// Data is partitioned by scope.
func (d *docSuite) scopes(t *testing.T, st *satchel.Store) {
	p := project(t)
	a := coll(t, st, p, "acme", "notes")
	b := coll(t, st, p, "globex", "notes")
	set(t, a, note("c1", "t", 0.1))
	set(t, a, note("c1", "t", 0.2))
	_, v := set(t, b, note("c1", "t", 0.9))
	equal(t, "version in another scope", v, int64(1))
	set(t, b, note("c2", "t", 0.9))
	got, err := a.Get(bg, "c1:t", false)
	must(t, "get a", err)
	equal(t, "scope acme", decode(t, got)["confidence"].(json.Number).String(), "0.2")
	pg, err := a.List(bg, 0, "")
	must(t, "list a", err)
	equalSlice(t, "acme's documents", pageKeys(pg), []string{"c1:t"})
	pg, err = b.Query(bg, satchel.QueryRequest{Where: "confidence > 0.5"})
	must(t, "query b", err)
	equalSlice(t, "globex's documents", pageKeys(pg), []string{"c1:t", "c2:t"})
	ok, err := coll(t, st, p, "acme", "notes").Remove(bg, "c2:t")
	must(t, "remove", err)
	equal(t, "remove in another scope", ok, false)
	if _, err := st.Collection(bg, p, "bad scope", "notes"); !errors.Is(err, satchel.ErrInvalidArgument) {
		t.Errorf("invalid scope: %v", err)
	}
	// Purging a scope takes its documents (and only its own) with it; a
	// shared store's documents belong to no scope and stay.
	shared := coll(t, st, p, "acme", "profiles")
	set(t, shared, `{"company_id": "acme", "name": "Acme"}`)
	_, err = st.Purge(bg, "acme")
	must(t, "purge", err)
	if _, err := a.Get(bg, "c1:t", false); !errors.Is(err, satchel.ErrNotFound) {
		t.Errorf("a purged scope's document: %v", err)
	}
	pg, err = b.List(bg, 0, "")
	must(t, "list b after purge", err)
	equalSlice(t, "another scope's documents stay", pageKeys(pg), []string{"c1:t", "c2:t"})
	if _, err := coll(t, st, p, "globex", "profiles").Get(bg, "acme", false); err != nil {
		t.Errorf("a shared document after a purge: %v", err)
	}
}

// A shared store is one collection across scopes; agents read it and are
// refused its writes even with rw; operators write it.
func (d *docSuite) sharedStores(t *testing.T, st *satchel.Store) {
	p := project(t)
	ops := coll(t, st, p, "anything", "profiles")
	set(t, ops, `{"company_id": "acme", "name": "Acme"}`)
	set(t, coll(t, st, p, "other", "profiles"), `{"company_id": "globex", "name": "Globex"}`)
	for _, scope := range []string{"s1", "s2"} {
		for _, agent := range []string{"reader", "writer"} {
			c := coll(t, st, p, scope, "profiles", satchel.AsAgent(agent))
			pg, err := c.List(bg, 0, "")
			must(t, "list", err)
			equalSlice(t, "shared list in "+scope, pageKeys(pg), []string{"acme", "globex"})
			got, err := c.Get(bg, "acme", false)
			must(t, "get", err)
			equal(t, "shared get", string(got.JSON), `{"company_id":"acme","name":"Acme"}`)
		}
	}
	w := coll(t, st, p, "s1", "profiles", satchel.AsAgent("writer"))
	_, _, err := w.Set(bg, `{"company_id": "x", "name": "X"}`)
	refused(t, "agent set on a shared store", err, satchel.ErrReadOnly, `store "profiles" is shared (read-only): writes are not allowed`)
	_, err = w.Remove(bg, "acme")
	refused(t, "agent remove on a shared store", err, satchel.ErrReadOnly, `store "profiles" is shared (read-only): writes are not allowed`)
	_, err = st.CallCollectionTool(bg, p, "s1", satchel.Actor{Agent: "writer", Via: "mcp:store__profiles__set"}, "store__profiles__set", json.RawMessage(`{"company_id": "x", "name": "X"}`))
	refused(t, "agent tool set on a shared store", err, satchel.ErrReadOnly, `store "profiles" is shared (read-only): writes are not allowed`)
	_, v := set(t, ops, `{"company_id": "acme", "name": "Acme Inc."}`)
	equal(t, "operator update of a shared store", v, int64(2))
	ok, err := coll(t, st, p, "zzz", "profiles", satchel.Force()).Remove(bg, "globex")
	must(t, "operator remove", err)
	equal(t, "operator removed", ok, true)
}

// Agents see and use only what agent.json grants: read gives get, query,
// list; rw adds set and remove.
func (d *docSuite) access(t *testing.T, st *satchel.Store) {
	p := project(t)
	set(t, coll(t, st, p, "s1", "notes"), note("acme", "a", 0.5))

	r := coll(t, st, p, "s1", "notes", satchel.AsAgent("reader"))
	if _, err := r.Get(bg, "acme:a", false); err != nil {
		t.Errorf("reader get: %v", err)
	}
	if _, err := r.Query(bg, satchel.QueryRequest{Where: "topic = 'a'"}); err != nil {
		t.Errorf("reader query: %v", err)
	}
	if _, err := r.List(bg, 0, ""); err != nil {
		t.Errorf("reader list: %v", err)
	}
	_, _, err := r.Set(bg, note("acme", "b", 0.5))
	refused(t, "reader set", err, satchel.ErrAccessDenied, "")
	_, err = r.Remove(bg, "acme:a")
	refused(t, "reader remove", err, satchel.ErrAccessDenied, "")
	if err != nil && !strings.Contains(err.Error(), "rw") {
		t.Errorf("the refusal should say rw is needed: %v", err)
	}

	_, err = st.Collection(bg, p, "s1", "items", satchel.AsAgent("reader"))
	refused(t, "reader on a store it was not granted", err, satchel.ErrAccessDenied, `agent "reader" has no access to store "items"`)
	_, err = st.Collection(bg, p, "s1", "notes", satchel.AsAgent("nobody"))
	if !errors.Is(err, satchel.ErrNotFound) {
		t.Errorf("unknown agent: %v", err)
	}
	_, err = st.Collection(bg, p, "s1", "nothing")
	if !errors.Is(err, satchel.ErrNotFound) {
		t.Errorf("unknown store: %v", err)
	}
	_, err = st.Collection(bg, p, "s1", "notes", satchel.AsAgent("writer"), satchel.Force())
	if !errors.Is(err, satchel.ErrAccessDenied) {
		t.Errorf("agent with Force: %v", err)
	}

	w := coll(t, st, p, "s1", "notes", satchel.AsAgent("writer"))
	set(t, w, note("acme", "b", 0.5))
	ok, err := w.Remove(bg, "acme:b")
	must(t, "writer remove on a deletable store", err)
	equal(t, "removed", ok, true)
}

// Remove deletes a document and its history; a store without deletable
// refuses it unless an operator forces it.
func (d *docSuite) removeAndDeletable(t *testing.T, st *satchel.Store) {
	p := project(t)
	n := coll(t, st, p, "s1", "notes")
	set(t, n, note("a", "b", 0.1))
	set(t, n, note("a", "b", 0.2))
	ok, err := n.Remove(bg, "a:b")
	must(t, "remove", err)
	equal(t, "removed", ok, true)
	ok, err = n.Remove(bg, "a:b")
	must(t, "remove again", err)
	equal(t, "removed again", ok, false)
	_, err = n.Get(bg, "a:b", false)
	refused(t, "get after remove", err, satchel.ErrNotFound, "document not found: a:b")
	_, v := set(t, n, note("a", "b", 0.3))
	equal(t, "version after remove", v, int64(1))
	got, err := n.Get(bg, "a:b", true)
	must(t, "get", err)
	equal(t, "history after remove", len(got.History), 0)

	pl := coll(t, st, p, "s1", "plain")
	set(t, pl, `{"a": "x", "b": 1}`)
	_, err = pl.Remove(bg, "x")
	refused(t, "operator remove without force", err, satchel.ErrAccessDenied, `store "plain" is not deletable`)
	w := coll(t, st, p, "s1", "plain", satchel.AsAgent("writer"))
	_, err = w.Remove(bg, "x")
	refused(t, "agent remove on a store that is not deletable", err, satchel.ErrAccessDenied, `store "plain" is not deletable`)
	ok, err = coll(t, st, p, "s1", "plain", satchel.Force()).Remove(bg, "x")
	must(t, "forced remove", err)
	equal(t, "forced removed", ok, true)
}

// A ref must name an existing document of its store: in the same scope,
// or in the shared collection of a shared store.
func (d *docSuite) refs(t *testing.T, st *satchel.Store) {
	p := project(t)
	links := coll(t, st, p, "s1", "links")
	_, _, err := links.Set(bg, `{"id": "l1", "note": "acme:x", "company": "acme"}`)
	paths := validation(t, "dangling refs", err)
	if !slices.Contains(paths, "note") || !slices.Contains(paths, "company") {
		t.Errorf("dangling refs: %q", paths)
	}
	set(t, coll(t, st, p, "s1", "notes"), note("acme", "x", 0.5))
	set(t, coll(t, st, p, "ops", "profiles"), `{"company_id": "acme", "name": "Acme"}`)
	set(t, links, `{"id": "l1", "note": "acme:x", "company": "acme"}`)
	set(t, links, `{"id": "l2", "note": "acme:x", "company": null}`)
	_, _, err = coll(t, st, p, "s2", "links").Set(bg, `{"id": "l1", "note": "acme:x"}`)
	if paths := validation(t, "ref into another scope", err); !slices.Contains(paths, "note") {
		t.Errorf("a ref resolves in the document's own scope: %q", paths)
	}
}

// items are the documents of the query tests.
var items = []string{
	`{"id": "a", "n": 1, "at": "2026-01-01T00:00:00Z", "status": "open", "flag": true, "tag": "x", "meta": {"src": "web", "who": "ana"}}`,
	`{"id": "b", "n": 2.5, "at": "2026-01-01T01:00:00+01:00", "status": "done", "flag": false, "tag": null, "meta": {"src": "call", "who": null}}`,
	`{"id": "c", "n": -3, "at": "2026-01-02T00:00:00.000000001Z", "status": "open", "flag": false, "meta": null}`,
	`{"id": "d", "n": null, "at": null, "status": "waiting", "flag": true, "tag": "it's"}`,
	`{"id": "e", "n": 10, "status": "done", "flag": true, "tag": "x", "meta": {"src": "web"}}`,
	`{"id": "f", "n": 2.5, "at": "2025-12-31T23:59:59.999Z", "status": "open", "flag": false, "tag": "y", "meta": {"src": "news", "who": "bo"}}`,
	`{"id": "g", "n": 0, "at": "2026-01-01T00:00:00.000Z", "status": "waiting", "flag": true, "tag": "", "meta": {"src": "web", "who": "bo"}}`,
}

// Every operator, AND, null semantics and datetimes, on a store without
// indexes and on one with indexes on every field: the same answers.
func (d *docSuite) queryOperators(t *testing.T, st *satchel.Store) {
	p := project(t)
	cases := []struct{ where, want string }{
		{"", "a b c d e f g"},
		{"status = 'open'", "a c f"},
		{"status != 'open'", "b d e g"},
		{"status IN ['done', 'waiting']", "b d e g"},
		{"n = 2.5", "b f"},
		{"n = 1.0", "a"},
		{"n != 2.5", "a c d e g"},
		{"n > 1", "b e f"},
		{"n >= 1", "a b e f"},
		{"n < 0", "c"},
		{"n <= 0", "c g"},
		{"n = null", "d"},
		{"n != null", "a b c e f g"},
		{"n IN [1, 10, null]", "a d e"},
		{"flag = true", "a d e g"},
		{"flag != true", "b c f"},
		{"tag = null", "b c"},
		{"tag != 'x'", "b c d f g"},
		{"tag = 'it''s'", "d"},
		{"tag = ''", "g"},
		{"tag IN ['x', null]", "a b c e"},
		{"meta.src = 'web'", "a e g"},
		{"meta.who = null", "b c d e"},
		{"meta.who != null", "a f g"},
		{"meta.src != 'web'", "b c d f"},
		{"meta = null", "c d"},
		{"meta != null", "a b e f g"},
		{"at = '2026-01-01T00:00:00Z'", "a b g"},
		{"at > '2026-01-01T00:00:00Z'", "c"},
		{"at >= '2026-01-01T01:00:00+01:00'", "a b c g"},
		{"at < '2026-01-01T00:00:00.000000001Z'", "a b f g"},
		{"at <= '2025-12-31T23:59:59.999Z'", "f"},
		{"at != null AND at < '2026-01-03T00:00:00Z'", "a b c f g"},
		{"status = 'open' AND n > 0", "a f"},
		{"status = 'open' and flag = false AND n >= -3", "c f"},
		{"n > 100", ""},
		{"id = 'c'", "c"},
		{"id IN ['a', 'zz', 'g']", "a g"},
	}
	for _, store := range []string{"items", "items-ix"} {
		c := coll(t, st, p, "s1", store)
		for _, it := range items {
			set(t, c, it)
		}
		set(t, coll(t, st, p, "s2", store), items[0]) // another scope: never seen
		for _, tc := range cases {
			want := tc.want
			pg, err := c.Query(bg, satchel.QueryRequest{Where: tc.where, Limit: 100})
			if err != nil {
				t.Errorf("%s: %q: %v", store, tc.where, err)
				continue
			}
			if got := strings.Join(pageKeys(pg), " "); got != want {
				t.Errorf("%s: %q: %q, want %q", store, tc.where, got, want)
			}
		}
	}
}

// Malformed queries are refused with ErrInvalidArgument, never answered.
func (d *docSuite) queryErrors(t *testing.T, st *satchel.Store) {
	p := project(t)
	c := coll(t, st, p, "s1", "items")
	for _, where := range []string{
		"nope = 1", "n = 'x'", "status = 'closed'", "tag > 'a'", "n >", "n = 1 OR n = 2",
		"at > 'yesterday'", "meta > 1", "flag < true", "(n = 1)", "n == 1",
	} {
		_, err := c.Query(bg, satchel.QueryRequest{Where: where})
		if !errors.Is(err, satchel.ErrInvalidArgument) {
			t.Errorf("query %q: %v, want ErrInvalidArgument", where, err)
		}
	}
	for _, sort := range []string{"nope", "-meta", "meta", "--n"} {
		_, err := c.Query(bg, satchel.QueryRequest{Sort: sort})
		if !errors.Is(err, satchel.ErrInvalidArgument) {
			t.Errorf("sort %q: %v, want ErrInvalidArgument", sort, err)
		}
	}
}

// Sort on any field, ascending or -descending: nulls first ascending (last
// descending), ties broken by the key.
func (d *docSuite) sort(t *testing.T, st *satchel.Store) {
	p := project(t)
	cases := []struct{ sort, want string }{
		{"", "a b c d e f g"},
		{"n", "d c g a b f e"},
		{"-n", "e f b a g c d"},
		{"at", "d e f a b g c"},
		{"-at", "c g b a f e d"},
		{"status", "b e a c f d g"},
		{"-status", "g d f c a e b"},
		{"flag", "b c f a d e g"},
		{"tag", "b c g d a e f"},
		{"meta.who", "b c d e a f g"},
		{"-meta.src", "g e a f b d c"},
		{"id", "a b c d e f g"},
		{"-id", "g f e d c b a"},
	}
	for _, store := range []string{"items", "items-ix"} {
		c := coll(t, st, p, "s1", store)
		for _, it := range items {
			set(t, c, it)
		}
		for _, tc := range cases {
			for _, limit := range []int{100, 2} {
				var got []string
				cursor := ""
				for i := 0; i < 10; i++ {
					pg, err := c.Query(bg, satchel.QueryRequest{Sort: tc.sort, Limit: limit, Cursor: cursor})
					if err != nil {
						t.Fatalf("%s: sort %q: %v", store, tc.sort, err)
					}
					got = append(got, pageKeys(pg)...)
					if cursor = pg.NextCursor; cursor == "" {
						break
					}
				}
				if g := strings.Join(got, " "); g != tc.want {
					t.Errorf("%s: sort %q, limit %d: %q, want %q", store, tc.sort, limit, g, tc.want)
				}
			}
		}
		pg, err := c.Query(bg, satchel.QueryRequest{Where: "flag = true", Sort: "-n", Limit: 2})
		must(t, "query", err)
		equalSlice(t, store+": where and sort", pageKeys(pg), []string{"e", "a"})
		pg, err = c.Query(bg, satchel.QueryRequest{Where: "flag = true", Sort: "-n", Limit: 2, Cursor: pg.NextCursor})
		must(t, "query", err)
		equalSlice(t, store+": where and sort, page 2", pageKeys(pg), []string{"g", "d"})
		equal(t, store+": last page has no cursor", pg.NextCursor, "")
	}
}

// limit defaults to 20 and is at most 100.
func (d *docSuite) limits(t *testing.T, st *satchel.Store) {
	p := project(t)
	c := coll(t, st, p, "s1", "plain")
	for i := 0; i < 120; i++ {
		set(t, c, fmt.Sprintf(`{"a": "k%03d"}`, i))
	}
	pg, err := c.List(bg, 0, "")
	must(t, "list", err)
	equal(t, "default limit", len(pg.Documents), 20)
	if pg.NextCursor == "" {
		t.Errorf("no next cursor after a full page")
	}
	pg, err = c.Query(bg, satchel.QueryRequest{Limit: 100})
	must(t, "query", err)
	equal(t, "limit 100", len(pg.Documents), 100)
	for _, l := range []int{-1, 101, 1000} {
		_, err := c.Query(bg, satchel.QueryRequest{Limit: l})
		refused(t, fmt.Sprintf("limit %d", l), err, satchel.ErrInvalidArgument, fmt.Sprintf("limit must be between 1 and 100, was %d", l))
		_, err = c.List(bg, l, "")
		refused(t, fmt.Sprintf("list limit %d", l), err, satchel.ErrInvalidArgument, fmt.Sprintf("limit must be between 1 and 100, was %d", l))
	}
	pg, err = c.Query(bg, satchel.QueryRequest{Where: "a = 'k119'", Limit: 1})
	must(t, "query", err)
	equal(t, "one result, no cursor", pg.NextCursor, "")
	for _, cur := range []string{"garbage!", "eyJ9"} {
		_, err = c.List(bg, 5, cur)
		if !errors.Is(err, satchel.ErrInvalidArgument) {
			t.Errorf("cursor %q: %v", cur, err)
		}
	}
	pg, err = c.Query(bg, satchel.QueryRequest{Sort: "-a", Limit: 5})
	must(t, "query", err)
	_, err = c.Query(bg, satchel.QueryRequest{Sort: "a", Limit: 5, Cursor: pg.NextCursor})
	if !errors.Is(err, satchel.ErrInvalidArgument) {
		t.Errorf("a cursor of another sort: %v", err)
	}
	_, err = coll(t, st, p, "s1", "items").List(bg, 5, pg.NextCursor)
	if !errors.Is(err, satchel.ErrInvalidArgument) {
		t.Errorf("a cursor of another store: %v", err)
	}
}

// Cursors stay correct while documents change: a document that stays in
// place is returned exactly once, documents added after the cursor are
// returned, removed ones are not.
func (d *docSuite) cursorWhileChanging(t *testing.T, st *satchel.Store) {
	p := project(t)
	for _, store := range []string{"items", "items-ix"} {
		for si, sortBy := range []string{"", "n", "-n"} {
			scope := fmt.Sprintf("s%d", si)
			c := coll(t, st, p, scope, store)
			for i := 0; i < 40; i += 2 {
				set(t, c, fmt.Sprintf(`{"id": "k%02d", "n": %d, "status": "open", "flag": true}`, i, i))
			}
			seen := map[string]int{}
			cursor := ""
			step := 0
			for {
				pg, err := c.Query(bg, satchel.QueryRequest{Where: "status = 'open'", Sort: sortBy, Limit: 3, Cursor: cursor})
				must(t, "page", err)
				for _, d := range pg.Documents {
					seen[d.Key]++
				}
				step++
				// Add a document on each side of the page, remove one ahead,
				// and update one in place.
				set(t, c, fmt.Sprintf(`{"id": "k%02d", "n": %d, "status": "open", "flag": true}`, 2*step-1, 2*step-1))
				set(t, c, fmt.Sprintf(`{"id": "x%02d", "n": %d, "status": "open", "flag": true}`, step, 100+step))
				if step == 2 {
					_, err := coll(t, st, p, scope, store, satchel.Force()).Remove(bg, "k30")
					must(t, "remove", err)
				}
				set(t, c, fmt.Sprintf(`{"id": "k%02d", "n": %d, "status": "open", "flag": false}`, 20, 20))
				if cursor = pg.NextCursor; cursor == "" {
					break
				}
				if step > 100 {
					t.Fatal("paging does not end")
				}
			}
			for i := 0; i < 40; i += 2 {
				k := fmt.Sprintf("k%02d", i)
				want := 1
				if k == "k30" && sortBy != "-n" {
					want = 0
				}
				if k == "k30" && seen[k] > 1 || k != "k30" && seen[k] != want {
					t.Errorf("%s sort %q: %s seen %d times, want %d", store, sortBy, k, seen[k], want)
				}
			}
			for k, n := range seen {
				if n != 1 {
					t.Errorf("%s sort %q: %s seen %d times", store, sortBy, k, n)
				}
			}
			if sortBy != "-n" && seen["x01"] != 1 {
				t.Errorf("%s sort %q: documents added ahead of the cursor are not returned: %v", store, sortBy, seen)
			}
		}
	}
}

// List pages through every document in key order.
func (d *docSuite) listAll(t *testing.T, st *satchel.Store) {
	p := project(t)
	c := coll(t, st, p, "s1", "plain")
	var want []string
	for i := 0; i < 250; i++ {
		k, _ := set(t, c, fmt.Sprintf(`{"a": "p%d"}`, i*7919%1000))
		want = append(want, k)
	}
	sort.Strings(want)
	var got []string
	cursor := ""
	for {
		pg, err := c.List(bg, 100, cursor)
		must(t, "list", err)
		got = append(got, pageKeys(pg)...)
		if cursor = pg.NextCursor; cursor == "" {
			break
		}
	}
	equalSlice(t, "list", got, want)
}

// The generated tools: exactly the granted ones, and the result shapes of
// DESIGN §3.
func (d *docSuite) tools(t *testing.T, st *satchel.Store) {
	p := project(t)
	tools, err := st.CollectionTools(p, "reader")
	must(t, "tools", err)
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
		if len(tl.InputSchema) == 0 || len(tl.OutputSchema) == 0 || tl.Description == "" {
			t.Errorf("%s: empty schema or description", tl.Name)
		}
	}
	equalSlice(t, "reader's tools", names, []string{
		"store__notes__get", "store__notes__query", "store__notes__list",
		"store__profiles__get", "store__profiles__query", "store__profiles__list",
	})
	tools, err = st.CollectionTools(p, "writer")
	must(t, "tools", err)
	names = names[:0]
	for _, tl := range tools {
		if strings.HasPrefix(tl.Name, "store__notes__") || strings.HasPrefix(tl.Name, "store__profiles__") {
			names = append(names, tl.Name)
		}
	}
	equalSlice(t, "writer's tools", names, []string{
		"store__notes__get", "store__notes__set", "store__notes__query", "store__notes__list", "store__notes__remove",
		"store__profiles__get", "store__profiles__query", "store__profiles__list",
	})
	if _, err := st.CollectionTools(p, "nobody"); !errors.Is(err, satchel.ErrNotFound) {
		t.Errorf("tools of an unknown agent: %v", err)
	}

	call := func(agent, tool, args string) string {
		t.Helper()
		out, err := st.CallCollectionTool(bg, p, "s1", satchel.Actor{Agent: agent, Via: "mcp:" + tool}, tool, json.RawMessage(args))
		if err != nil {
			t.Fatalf("%s %s: %v", tool, args, err)
		}
		return string(out)
	}
	doc := `{"company_id":"acme","confidence":0.5,"metadata":{"analyst":null,"source":"web"},"status":"draft","summary":"s","tags":["a"],"topic":"t","updated_at":"2026-01-31T09:30:00Z"}`
	equal(t, "set", call("writer", "store__notes__set", doc), `{"key":"acme:t","version":1}`)
	equal(t, "set again", call("writer", "store__notes__set", doc), `{"key":"acme:t","version":2}`)
	equal(t, "get", call("reader", "store__notes__get", `{"key": "acme:t"}`), `{"found":true,"key":"acme:t","version":2,"document":`+doc+`}`)
	equal(t, "get with history", call("reader", "store__notes__get", `{"key": "acme:t", "history": true}`),
		`{"found":true,"key":"acme:t","version":2,"document":`+doc+`,"history":[{"version":1,"document":`+doc+`}]}`)
	equal(t, "get of a missing key", call("reader", "store__notes__get", `{"key": "nope"}`), `{"found":false}`)
	equal(t, "query", call("reader", "store__notes__query", `{"where": "topic = 't'", "sort": "-confidence", "limit": 5}`), `{"documents":[`+doc+`],"next_cursor":null}`)
	equal(t, "list", call("reader", "store__notes__list", `{}`), `{"documents":[`+doc+`],"next_cursor":null}`)
	equal(t, "list with no arguments", call("reader", "store__notes__list", ``), `{"documents":[`+doc+`],"next_cursor":null}`)
	call("writer", "store__notes__set", strings.Replace(doc, `"topic":"t"`, `"topic":"u"`, 1))
	out := call("reader", "store__notes__list", `{"limit": 1}`)
	var pg struct {
		Documents  []json.RawMessage `json:"documents"`
		NextCursor *string           `json:"next_cursor"`
	}
	must(t, "decode list", json.Unmarshal([]byte(out), &pg))
	if len(pg.Documents) != 1 || pg.NextCursor == nil {
		t.Fatalf("list limit 1: %s", out)
	}
	out = call("reader", "store__notes__list", `{"limit": 1, "cursor": "`+*pg.NextCursor+`"}`)
	if !strings.Contains(out, `"topic":"u"`) || !strings.HasSuffix(out, `"next_cursor":null}`) {
		t.Errorf("second page: %s", out)
	}
	equal(t, "remove", call("writer", "store__notes__remove", `{"key": "acme:t"}`), `{"removed":true}`)
	equal(t, "remove again", call("writer", "store__notes__remove", `{"key": "acme:t"}`), `{"removed":false}`)

	for _, tc := range []struct {
		agent, tool, args string
		kind              error
	}{
		{"reader", "store__notes__set", doc, satchel.ErrAccessDenied},
		{"reader", "store__notes__remove", `{"key": "x"}`, satchel.ErrAccessDenied},
		{"reader", "store__items__get", `{"key": "x"}`, satchel.ErrAccessDenied},
		{"reader", "store__nothing__get", `{"key": "x"}`, satchel.ErrNotFound},
		{"reader", "read_file", `{}`, satchel.ErrNotFound},
		{"writer", "store__plain__remove", `{"key": "x"}`, satchel.ErrAccessDenied},
		{"reader", "store__notes__get", `{"key": "x", "extra": 1}`, satchel.ErrInvalidArgument},
		{"reader", "store__notes__get", `{}`, satchel.ErrInvalidArgument},
		{"reader", "store__notes__get", `{"key": 1}`, satchel.ErrInvalidArgument},
		{"reader", "store__notes__get", `[]`, satchel.ErrInvalidArgument},
		{"reader", "store__notes__query", `{"limit": 0}`, satchel.ErrInvalidArgument},
		{"reader", "store__notes__query", `{"limit": 101}`, satchel.ErrInvalidArgument},
		{"reader", "store__notes__query", `{"limit": "5"}`, satchel.ErrInvalidArgument},
		{"reader", "store__notes__query", `{"where": "x = 1"}`, satchel.ErrInvalidArgument},
		{"reader", "store__notes__list", `{"where": "topic = 't'"}`, satchel.ErrInvalidArgument},
		{"writer", "store__notes__set", `{"company_id": "acme"}`, satchel.ErrValidation},
	} {
		_, err := st.CallCollectionTool(bg, p, "s1", satchel.Actor{Agent: tc.agent, Via: "mcp:" + tc.tool}, tc.tool, json.RawMessage(tc.args))
		if !errors.Is(err, tc.kind) {
			t.Errorf("%s %s %s: %v, want %v", tc.agent, tc.tool, tc.args, err, tc.kind)
		}
	}
}

// Concurrent sets of one key each get their own version, and the history
// holds the versions just before the last, in order.
func (d *docSuite) concurrentSets(t *testing.T, st *satchel.Store) {
	p := project(t)
	c := coll(t, st, p, "s1", "notes")
	const writers, each = 8, 10
	var wg sync.WaitGroup
	versions := make(chan int64, writers*each)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				_, v, err := c.Set(bg, note("acme", "hot", float64(w)/10))
				if err != nil {
					t.Error(err)
					return
				}
				versions <- v
			}
		}()
	}
	wg.Wait()
	close(versions)
	var vs []int64
	for v := range versions {
		vs = append(vs, v)
	}
	slices.Sort(vs)
	for i, v := range vs {
		if v != int64(i+1) {
			t.Fatalf("versions %v: each set must get its own", vs)
		}
	}
	got, err := c.Get(bg, "acme:hot", true)
	must(t, "get", err)
	equal(t, "version", got.Version, int64(writers*each))
	if len(got.History) != 3 || got.History[0].Version != writers*each-1 || got.History[2].Version != writers*each-3 {
		t.Errorf("history after concurrent sets: %d entries", len(got.History))
	}
}

// Sixteen writers at once (whose sets a backend may store in shared
// transactions) each set documents of their own twice, and one key they
// share, with an invalid document among them: the invalid sets fail
// alone, every other set is acknowledged with its own version, and
// afterwards every document is there with the version, the value and the
// history its last acknowledged set gave it.
func (d *docSuite) concurrentSetsMany(t *testing.T, st *satchel.Store) {
	p := project(t)
	c := coll(t, st, p, "s1", "notes")
	const writers, each = 16, 6
	var wg sync.WaitGroup
	var mu sync.Mutex
	hot := map[int64]bool{}
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := range 2 {
				for i := range each {
					doc := note(fmt.Sprintf("w%d", w), fmt.Sprintf("t%d", i), float64(round)/2)
					key, v, err := c.Set(bg, doc)
					if err != nil || key != fmt.Sprintf("w%d:t%d", w, i) || v != int64(round+1) {
						t.Errorf("writer %d set %d round %d: %s version %d, %v", w, i, round, key, v, err)
						return
					}
					if w%4 == 0 {
						bad := note(fmt.Sprintf("w%d", w), "bad", 2) // confidence above its max
						if _, _, err := c.Set(bg, bad); !errors.Is(err, satchel.ErrValidation) {
							t.Errorf("writer %d: an invalid document: %v", w, err)
						}
					}
					_, v, err = c.Set(bg, note("shared", "hot", float64(w)/100))
					if err != nil {
						t.Errorf("writer %d, shared key: %v", w, err)
						return
					}
					mu.Lock()
					if hot[v] {
						t.Errorf("version %d of the shared key acknowledged twice", v)
					}
					hot[v] = true
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for w := range writers {
		for i := range each {
			key := fmt.Sprintf("w%d:t%d", w, i)
			got, err := c.Get(bg, key, true)
			must(t, "get "+key, err)
			if got.Version != 2 || fmt.Sprint(decode(t, got)["confidence"]) != "0.5" || len(got.History) != 1 || got.History[0].Version != 1 {
				t.Errorf("%s: version %d, %v, %d previous versions", key, got.Version, decode(t, got)["confidence"], len(got.History))
			}
		}
		if _, err := c.Get(bg, fmt.Sprintf("w%d:bad", w), false); !errors.Is(err, satchel.ErrNotFound) {
			t.Errorf("the invalid document of writer %d: %v", w, err)
		}
	}
	got, err := c.Get(bg, "shared:hot", true)
	must(t, "get shared:hot", err)
	equal(t, "versions of the shared key", got.Version, int64(writers*each*2))
	equal(t, "acknowledged versions of the shared key", len(hot), writers*each*2)
	if len(got.History) != 3 || got.History[0].Version != got.Version-1 || got.History[2].Version != got.Version-3 {
		t.Errorf("history of the shared key: %d entries", len(got.History))
	}
}

// U+0000 in a document's key, a value, a query or a cursor is refused the
// same way on every backend, naming the field (PostgreSQL cannot store it;
// it used to answer with a raw server error while SQLite stored it).
func (d *docSuite) nulRefused(t *testing.T, st *satchel.Store) {
	p := project(t)
	c := coll(t, st, p, "s1", "notes")
	doc := note("acme", "a\x00b", 0.5)
	doc["summary"] = "s"
	_, _, err := c.Set(bg, doc)
	if got := validation(t, "a NUL in the key field", err); len(got) != 1 || got[0] != "topic" ||
		!strings.Contains(err.Error(), "must not contain U+0000 (NUL)") {
		t.Errorf("a NUL in a key field: %v", err)
	}
	doc = note("acme", "t", 0.5)
	doc["metadata"] = map[string]any{"source": "w\x00eb", "analyst": nil}
	_, _, err = c.Set(bg, doc)
	if got := validation(t, "a NUL in a nested value", err); len(got) != 1 || got[0] != "metadata.source" {
		t.Errorf("a NUL in a nested value: %v", err)
	}
	doc = note("acme", "t", 0.5)
	doc["tags"] = []any{"ok", "\x00"}
	_, _, err = c.Set(bg, doc)
	if got := validation(t, "a NUL in an array", err); len(got) != 1 || got[0] != "tags[1]" {
		t.Errorf("a NUL in an array item: %v", err)
	}
	set(t, c, note("acme", "t", 0.5))
	for name, call := range map[string]func() error{
		"key":    func() error { _, err := c.Get(bg, "acme:\x00", false); return err },
		"where":  func() error { _, err := c.Query(bg, satchel.QueryRequest{Where: "topic = 'a\x00'"}); return err },
		"sort":   func() error { _, err := c.Query(bg, satchel.QueryRequest{Sort: "topic\x00"}); return err },
		"cursor": func() error { _, err := c.List(bg, 1, "ab\x00"); return err },
	} {
		err := call()
		if !errors.Is(err, satchel.ErrInvalidArgument) || err.Error() != name+" must not contain U+0000 (NUL): not every backend can store it" {
			t.Errorf("a NUL in the %s: %v", name, err)
		}
	}
	if _, err := c.Remove(bg, "\x00"); !errors.Is(err, satchel.ErrInvalidArgument) {
		t.Errorf("a NUL in a removed key: %v", err)
	}
}

// A documents quota refuses a new key at the limit, never a replacement,
// and removals make room again.
func (d *docSuite) quota(t *testing.T, st *satchel.Store) {
	p := project(t)
	a := coll(t, st, p, "acme", "notes")
	set(t, a, note("c1", "t", 0.1))
	must(t, "set quota", st.SetQuota(bg, "acme", satchel.Quota{Documents: 2}))
	set(t, a, note("c2", "t", 0.1))
	set(t, a, note("c1", "t", 0.2))
	_, _, err := a.Set(bg, note("c3", "t", 0.1))
	refused(t, "documents", err, satchel.ErrQuotaExceeded, "quota exceeded: scope acme would hold 3 documents, over its quota of 2")
	_, err = a.Get(bg, "c3:t", false)
	refused(t, "nothing half-written", err, satchel.ErrNotFound, "")
	ok, err := a.Remove(bg, "c1:t")
	must(t, "remove", err)
	equal(t, "removed", ok, true)
	set(t, a, note("c3", "t", 0.1))
	other := coll(t, st, p, "globex", "notes")
	set(t, other, note("c4", "t", 0.1)) // another scope's documents do not count
	q, err := st.Quota(bg, "acme")
	must(t, "quota", err)
	equal(t, "documents counted", q.Used.Documents, int64(2))
	rep, err := st.Check(bg, satchel.InScope("acme"))
	must(t, "check", err)
	equal(t, "faults", len(rep.Faults), 0)
}

// Swept documents leave their scope's counter.
func (d *docSuite) quotaSweep(t *testing.T, st *satchel.Store) {
	clk := setClock(t, st)
	p := project(t)
	a := coll(t, st, p, "s1", "tasks")
	must(t, "set quota", st.SetQuota(bg, "s1", satchel.Quota{Documents: 10}))
	set(t, a, `{"id": "done", "status": "done"}`)
	set(t, a, `{"id": "open", "status": "open"}`)
	clk.Add(time.Minute)
	n, err := st.SweepDocuments(bg)
	must(t, "sweep", err)
	equal(t, "swept", n, int64(1))
	q, err := st.Quota(bg, "s1")
	must(t, "quota", err)
	equal(t, "documents after the sweep", q.Used.Documents, int64(1))
}

// Concurrent sets of new keys in two scopes with documents quotas (sets
// that a backend may store in one batch, one statement) pass exactly up
// to each limit; the rest are refused and leave nothing behind, and a
// sweep of several documents at once gives back their room.
func (d *docSuite) quotaConcurrent(t *testing.T, st *satchel.Store) {
	clk := setClock(t, st)
	p := project(t)
	limits := map[string]int64{"acme": 5, "globex": 3}
	for scope, n := range limits {
		must(t, "set quota", st.SetQuota(bg, scope, satchel.Quota{Documents: n}))
	}
	type outcome struct {
		scope string
		err   error
	}
	const each = 12
	out := make(chan outcome, 2*each)
	var wg sync.WaitGroup
	for _, scope := range []string{"acme", "globex"} {
		c := coll(t, st, p, scope, "tasks")
		for i := range each {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _, err := c.Set(bg, fmt.Sprintf(`{"id": "t%d", "status": "done"}`, i))
				out <- outcome{scope, err}
			}()
		}
	}
	wg.Wait()
	close(out)
	passed := map[string]int64{}
	for o := range out {
		switch {
		case o.err == nil:
			passed[o.scope]++
		case !errors.Is(o.err, satchel.ErrQuotaExceeded):
			t.Errorf("%s: %v, want a set or %v", o.scope, o.err, satchel.ErrQuotaExceeded)
		}
	}
	for scope, n := range limits {
		equal(t, scope+": sets that passed", passed[scope], n)
		page, err := coll(t, st, p, scope, "tasks").List(bg, 100, "")
		must(t, "list", err)
		equal(t, scope+": documents stored", int64(len(page.Documents)), n)
		q, err := st.Quota(bg, scope)
		must(t, "quota", err)
		equal(t, scope+": documents counted", q.Used.Documents, n)
	}
	clk.Add(time.Minute) // every "done" task expires
	swept, err := st.SweepDocuments(bg)
	must(t, "sweep", err)
	equal(t, "swept", swept, limits["acme"]+limits["globex"])
	for scope := range limits {
		q, err := st.Quota(bg, scope)
		must(t, "quota", err)
		equal(t, scope+": documents after the sweep", q.Used.Documents, int64(0))
	}
	rep, err := st.Check(bg)
	must(t, "check", err)
	equal(t, "faults", len(rep.Faults), 0)
}

// scopeUsageAs: an agent's view of the scopes counts the documents of the
// stores its agent may read, no other; a scope that holds only documents
// it may not read is not listed, and without a project nothing is counted.
func (d *docSuite) scopeUsageAs(t *testing.T, st *satchel.Store) {
	p := project(t)
	set(t, coll(t, st, p, "s1", "notes"), note("acme", "a", 0.5))
	set(t, coll(t, st, p, "s1", "plain"), `{"a": "payroll"}`)
	set(t, coll(t, st, p, "s2", "plain"), `{"a": "payroll"}`)
	describe := func(l []satchel.ScopeInfo) string {
		var out []string
		for _, s := range l {
			n := "-"
			if s.Documents != nil {
				n = fmt.Sprint(*s.Documents)
			}
			out = append(out, s.Scope+": "+n)
		}
		return strings.Join(out, ", ")
	}
	all, err := st.ScopeUsage(bg)
	must(t, "ScopeUsage", err)
	seen, err := st.ScopeUsageAs(bg, p, "reader")
	must(t, "ScopeUsageAs", err)
	if len(all) == 0 {
		// A backend that does not count documents (backend.DocCounter)
		// lists the scopes with threads only, for every caller.
		equal(t, "the reader's view without counts", describe(seen), "")
		return
	}
	equal(t, "every store's documents", describe(all), "s1: 2, s2: 1")
	equal(t, "the documents the reader may read", describe(seen), "s1: 1")
	none, err := st.ScopeUsageAs(bg, nil, "reader")
	must(t, "ScopeUsageAs without a project", err)
	equal(t, "no documents without a project", describe(none), "")
}
