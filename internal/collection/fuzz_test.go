package collection

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/satchel-dev/satchel/internal/errs"
)

// FuzzLoadStore loads random bytes as a store file. It must never panic;
// a failure must be a *errs.ValidationError; a store that loads must
// validate against StoreDefinitionSchema (the editors' schema accepts
// everything the loader accepts) and give valid tool schemas.
func FuzzLoadStore(f *testing.F) {
	for _, p := range []string{"testdata/seed/stores/research-notes.json", "testdata/seed/stores/company-profiles.json"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"key": "{a}-{b}", "schema": {"a": {"type": "number", "min": 1}, "b": {"type": "enum", "values": ["x"]}, "c": {"type": "ref", "store": "other"}},
		"ttl": {"default": 5, "override": [{"condition": "b IN ['x']", "ttl": 1}]}, "indexes": ["a"], "deletable": true}`))
	f.Add([]byte(`{"entity": {"key": "{id}", "schema": {"id": {"type": "string"}, "o": {"type": "object", "nullable": true, "fields": {"d": {"type": "datetime"}}}}}, "indexes": ["o.d"]}`))
	f.Add([]byte(`{"key": "{", "schema": {"x": []}}`))
	storeSchema := StoreDefinitionSchema()
	f.Fuzz(func(t *testing.T, data []byte) {
		fsys := fstest.MapFS{
			"stores/s.json":     {Data: data},
			"stores/other.json": {Data: []byte(`{"key": "{id}", "schema": {"id": {"type": "string"}}}`)},
		}
		p, err := LoadProjectFS(fsys)
		if err != nil {
			var ve *errs.ValidationError
			if !errors.As(err, &ve) || len(ve.Violations) == 0 {
				t.Fatalf("error %v is not a validation error with violations", err)
			}
			for _, v := range ve.Violations {
				if v.File == "" || v.Msg == "" {
					t.Fatalf("violation without file or message: %+v", v)
				}
			}
			return
		}
		s := p.Stores["s"]
		if probs, err := checkSchema(storeSchema, data); err != nil || len(probs) > 0 {
			t.Fatalf("loaded, but the definition schema refuses it: %v %v", probs, err)
		}
		for _, tool := range s.Tools(AccessRW) {
			if !json.Valid(tool.InputSchema) || !json.Valid(tool.OutputSchema) {
				t.Fatalf("%s: invalid schema", tool.Name)
			}
		}
		for _, ex := range s.queryExamples() {
			if _, err := s.ParseQuery(ex); err != nil {
				t.Fatalf("example %q: %v", ex, err)
			}
		}
		s.Validate(map[string]any{}, nil)
		s.KeyOf(map[string]any{})
		s.ExpiresAt(map[string]any{}, time.Now())
		s.IndexExprs(SQLite, "doc")
		s.IndexExprs(Postgres, "doc")
	})
}

// FuzzParseQuery parses random where clauses. A query that parses renders
// to text that parses to the same query; an error is of kind
// ErrInvalidArgument with a position; a query that checks compiles to SQL
// whose text does not depend on the query's values.
func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{"", "company_id = 'acme'", "topic IN ['t001','t002'] and confidence > 0.5", "a = 'it''s' AND b != null",
		"n >= -1.5e3 AND at < '2026-01-01T00:00:00Z'", "m.source = 'x'", "status IN ['open', null]", "x = AND", "b = true"} {
		f.Add(s)
	}
	s := queryStore(f)
	f.Fuzz(func(t *testing.T, src string) {
		q, err := ParseQuery(src)
		if err != nil {
			if !errors.Is(err, errs.ErrInvalidArgument) || !strings.HasPrefix(err.Error(), "invalid query") {
				t.Fatalf("ParseQuery(%q): %v", src, err)
			}
			return
		}
		again, err := ParseQuery(q.String())
		if err != nil {
			t.Fatalf("ParseQuery(%q) gave %q, which does not parse: %v", src, q.String(), err)
		}
		if again.String() != q.String() {
			t.Fatalf("round trip: %q -> %q -> %q", src, q.String(), again.String())
		}
		q.Match(map[string]any{"a": "x", "n": 1.0})
		if err := s.CheckQuery(q); err != nil {
			if !errors.Is(err, errs.ErrInvalidArgument) {
				t.Fatalf("CheckQuery: %v", err)
			}
			return
		}
		q.Match(map[string]any{"id": "x", "n": json.Number("1"), "m": map[string]any{"source": "s"}})
		for _, d := range []Dialect{SQLite, Postgres} {
			w1, a1 := q.SQL(d, "doc", 1)
			// The same query with other values of the same kinds.
			q2 := *q
			q2.Conds = make([]Cond, len(q.Conds))
			for i, c := range q.Conds {
				c.Values = append([]Value(nil), c.Values...)
				for j := range c.Values {
					switch c.Values[j].Kind {
					case KindString:
						c.Values[j].Str = "other"
					case KindNumber:
						c.Values[j].Num = 12345
					case KindBool:
						c.Values[j].Bool = !c.Values[j].Bool
					}
				}
				q2.Conds[i] = c
			}
			w2, a2 := q2.SQL(d, "doc", 1)
			if w1 != w2 || len(a1) != len(a2) {
				t.Fatalf("the SQL text depends on the values:\n%s\n%s", w1, w2)
			}
		}
	})
}

// FuzzSQLValues puts random values in every position of a query: the SQL
// text never changes and never holds them; they are all in the arguments.
func FuzzSQLValues(f *testing.F) {
	f.Add("acme", 0.5)
	f.Add("'; DROP TABLE docs; --", -1e300)
	f.Add("$1 ? ?1 :a @a \\'", 3.0)
	s := queryStore(f)
	want := map[Dialect]string{}
	for _, d := range []Dialect{SQLite, Postgres} {
		q, err := s.ParseQuery("id = 'x' AND m.source != 'x' AND c IN ['x', 'x'] AND n > 1 AND m.score <= 1")
		if err != nil {
			f.Fatal(err)
		}
		want[d], _ = q.SQL(d, "doc", 1)
	}
	f.Fuzz(func(t *testing.T, str string, num float64) {
		lit := Value{Kind: KindString, Str: str}.String()
		n := Value{Kind: KindNumber, Num: num}.String()
		src := "id = " + lit + " AND m.source != " + lit + " AND c IN [" + lit + ", " + lit + "] AND n > " + n + " AND m.score <= " + n
		q, err := s.ParseQuery(src)
		if err != nil {
			return // not valid UTF-8, too long, or a number the grammar cannot write (NaN, Inf)
		}
		for _, d := range []Dialect{SQLite, Postgres} {
			w, args := q.SQL(d, "doc", 1)
			if w != want[d] {
				t.Fatalf("SQL text changed with the values:\n%s", w)
			}
			wantArgs := []any{str, str, str, str, num, num}
			if diff := cmp.Diff(wantArgs, args); diff != "" {
				t.Fatalf("args (-want +got):\n%s", diff)
			}
		}
	})
}

// FuzzValidate validates random JSON documents. It must never panic; a
// document that validates also passes the set tool's JSON Schema, keeps
// validating once normalized, and normalizes to a fixed point.
func FuzzValidate(f *testing.F) {
	f.Add([]byte(goodNote))
	for i := 0; i < 3; i++ {
		b, _ := json.Marshal(w2Doc(i*991, i))
		f.Add(b)
	}
	f.Add([]byte(`{"company_id": 1, "tags": [null, {}], "metadata": {"x": []}, "confidence": 1e400}`))
	s := researchNotes(f)
	var setSchema json.RawMessage
	for _, tool := range s.Tools(AccessRW) {
		if tool.Op == OpSet {
			setSchema = tool.InputSchema
		}
	}
	q, err := s.ParseQuery("company_id = 'c0001' AND confidence > 0.5 AND updated_at <= '2026-01-02T00:00:00Z' AND metadata.analyst = null")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var doc map[string]any
		if dec.Decode(&doc) != nil || doc == nil {
			return
		}
		err := s.Validate(doc, nil)
		// PrepareCopy answers as Prepare does, and keeps nothing of doc.
		now := time.Now()
		want, werr := s.Prepare(doc, nil, now)
		got, gerr := s.PrepareCopy(doc, nil, now)
		if fmt.Sprint(werr) != fmt.Sprint(gerr) {
			t.Fatalf("Prepare: %v\nPrepareCopy: %v", werr, gerr)
		}
		if werr == nil {
			if diff := cmp.Diff(*want, got); diff != "" {
				t.Fatalf("(-Prepare +PrepareCopy):\n%s", diff)
			}
			if shared := sharedParts(got.Doc, doc); shared != "" {
				t.Fatalf("PrepareCopy shares %s with its input", shared)
			}
		}
		q.Match(doc)
		s.ExpiresAt(doc, time.Now())
		if _, kerr := s.KeyOf(doc); kerr != nil {
			var ve *errs.ValidationError
			if !errors.As(kerr, &ve) {
				t.Fatalf("KeyOf: %v", kerr)
			}
		}
		if err != nil {
			var ve *errs.ValidationError
			if !errors.As(err, &ve) || len(ve.Violations) == 0 {
				t.Fatalf("Validate: %v", err)
			}
			return
		}
		if probs, err := checkSchema(setSchema, data); err != nil || len(probs) > 0 {
			t.Fatalf("valid document refused by the set schema: %v %v", probs, err)
		}
		n := s.Normalize(doc)
		if err := s.Validate(n, nil); err != nil {
			t.Fatalf("normalized document does not validate: %v", err)
		}
		if diff := cmp.Diff(n, s.Normalize(n)); diff != "" {
			t.Fatalf("Normalize is not idempotent: %s", diff)
		}
		if q.Match(doc) != q.Match(n) {
			t.Fatalf("Normalize changed Match")
		}
	})
}

// FuzzCursor decodes random cursors and pages with them: a cursor is
// either refused with ErrInvalidArgument or compiles.
func FuzzCursor(f *testing.F) {
	s := queryStore(f)
	base, _ := s.Page(PageRequest{Sort: "-at"})
	f.Add(base.Cursor("k1", map[string]any{"at": "2026-01-01T00:00:00Z"}), "-at")
	f.Add(EncodeCursor(Cursor{Store: "q", Sort: "n", Value: 1.5, Key: "x"}), "n")
	f.Add("", "")
	f.Fuzz(func(t *testing.T, cursor, sort string) {
		p, err := s.Page(PageRequest{Sort: sort, Cursor: cursor})
		if err != nil {
			if !errors.Is(err, errs.ErrInvalidArgument) {
				t.Fatalf("Page: %v", err)
			}
			return
		}
		p.SQL(SQLite, "doc", "key", 1)
		p.SQL(Postgres, "doc", "key", 1)
		p.Match("k", map[string]any{"at": "2026-01-01T00:00:00Z", "n": 1.0})
	})
}

// FuzzLoadAgentFiles loads random JSON as an agent's "files". It must
// never panic; a failure is a validation error at a position of files;
// rules that load are what the definition schema accepts, and give every
// path an access.
func FuzzLoadAgentFiles(f *testing.F) {
	f.Add(`[["secrets/**", "none"], ["notes/**", "rw"], ["**", "read"]]`)
	f.Add(`[["**", "read"], ["notes/**", "rw"]]`)
	f.Add(`[["a?", "rw"]]`)
	f.Add(`[]`)
	f.Add(`[["a", "rw", "x"]]`)
	agentSchema := AgentDefinitionSchema()
	f.Fuzz(func(t *testing.T, files string) {
		data := []byte(`{"files": ` + files + `}`)
		if !json.Valid(data) {
			return
		}
		p, err := LoadProjectFS(fstest.MapFS{"agents/a/agent.json": {Data: data}})
		if err != nil {
			var ve *errs.ValidationError
			if !errors.As(err, &ve) || len(ve.Violations) == 0 {
				t.Fatalf("error %v is not a validation error with violations", err)
			}
			for _, v := range ve.Violations {
				if v.File != "agents/a/agent.json" || v.Msg == "" {
					t.Fatalf("violation %+v", v)
				}
			}
			return
		}
		if probs, err := checkSchema(agentSchema, data); err != nil || len(probs) > 0 {
			t.Fatalf("loaded, but the definition schema refuses it: %v %v", probs, err)
		}
		r := p.Agents["a"].Files
		for _, path := range []string{"a", "notes/a.md", "secrets/k"} {
			r.Of(path)
		}
		if len(r.Shadowed()) > 0 {
			t.Fatalf("loaded with dead pairs: %v", r)
		}
	})
}
