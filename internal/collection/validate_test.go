package collection

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/satchel-dev/satchel/internal/errs"
)

func seedProject(t testing.TB) *Project {
	t.Helper()
	p, err := LoadProject("testdata/seed")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func researchNotes(t testing.TB) *Store {
	t.Helper()
	s, err := seedProject(t).Store("research-notes")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// decode parses a JSON document as a backend or the MCP server would.
func decode(t testing.TB, s string) map[string]any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return m
}

const goodNote = `{"company_id": "acme", "topic": "pricing", "summary": "s", "confidence": 0.5,
	"updated_at": "2026-01-31T09:30:00+01:00", "tags": ["a", "b"], "metadata": {"source": "call", "analyst": null}}`

func TestValidateOK(t *testing.T) {
	s := researchNotes(t)
	for _, doc := range []string{
		goodNote,
		// analyst absent means null; empty arrays are arrays.
		`{"company_id": "a", "topic": "t", "summary": "", "confidence": 1, "updated_at": "2026-01-01T00:00:00Z", "tags": [], "metadata": {"source": "x"}}`,
		`{"company_id": "a", "topic": "t", "summary": "", "confidence": 0, "updated_at": "2026-01-01T00:00:00.123456789-07:00", "tags": [], "metadata": {"source": "x", "analyst": "bo"}}`,
	} {
		if err := s.Validate(decode(t, doc), nil); err != nil {
			t.Errorf("Validate(%s) = %v", doc, err)
		}
	}
	// float64 and Go integers are accepted as numbers, too.
	d := decode(t, goodNote)
	for _, n := range []any{0.25, 1, int64(0), uint8(1), float32(0.5)} {
		d["confidence"] = n
		if err := s.Validate(d, nil); err != nil {
			t.Errorf("confidence %T %v: %v", n, n, err)
		}
	}
	for i := 0; i < 50; i++ {
		if err := s.Validate(w2Doc(i, i%3), nil); err != nil {
			t.Fatalf("W2 doc %d: %v", i, err)
		}
	}
}

func TestValidateViolations(t *testing.T) {
	p := mustLoad(t, map[string]string{
		"stores/companies.json": `{"key": "{id}", "schema": {"id": {"type": "string"}}}`,
		"stores/all.json": `{"key": "{id}", "schema": {
			"id": {"type": "string"},
			"n": {"type": "number", "min": -1, "max": 10},
			"b": {"type": "boolean"},
			"d": {"type": "datetime", "nullable": true},
			"e": {"type": "enum", "values": ["open", "done"]},
			"tags": {"type": "array", "item": {"type": "string"}},
			"m": {"type": "object", "fields": {"source": {"type": "string"}, "deep": {"type": "object", "nullable": true, "fields": {"x": {"type": "number"}}}}},
			"c": {"type": "ref", "store": "companies"},
			"cs": {"type": "array", "item": {"type": "ref", "store": "companies"}},
			"grid": {"type": "array", "item": {"type": "array", "item": {"type": "number", "min": 0}}}
		}}`,
	})
	s := p.Stores["all"]
	refs := func(store, key string) (bool, error) { return store == "companies" && key == "acme", nil }
	ok := `{"id": "x", "n": 10, "b": false, "d": null, "e": "open", "tags": [], "m": {"source": "s", "deep": {"x": 1}}, "c": "acme", "cs": ["acme"], "grid": [[0, 1], []]}`
	if err := s.Validate(decode(t, ok), refs); err != nil {
		t.Fatalf("valid document: %v", err)
	}
	tests := []struct {
		name string
		doc  string
		want []errs.Violation
	}{
		{"wrong types", `{"id": 1, "n": "1", "b": "true", "d": 5, "e": 1, "tags": "a", "m": [], "c": 3, "cs": {}, "grid": [1]}`, []errs.Violation{
			{Path: "id", Msg: "must be a string, not a number"},
			{Path: "n", Msg: "must be a number, not a string"},
			{Path: "b", Msg: "must be true or false, not a string"},
			{Path: "d", Msg: `must be an RFC 3339 datetime (a string such as "2026-01-31T09:30:00Z"), not a number`},
			{Path: "e", Msg: `must be one of "open", "done", not a number`},
			{Path: "tags", Msg: "must be an array, not a string"},
			{Path: "m", Msg: "must be an object, not an array"},
			{Path: "c", Msg: `must be the key of a document of store "companies" (a string), not a number`},
			{Path: "cs", Msg: "must be an array, not an object"},
			{Path: "grid[0]", Msg: "must be an array, not a number"},
		}},
		{"missing and null", `{"id": null, "b": true, "d": null, "e": null, "tags": [null, "x", 3], "m": {"deep": null}, "c": "acme", "cs": [], "grid": [[1, -1]]}`, []errs.Violation{
			{Path: "id", Msg: "must not be null (the field is not nullable)"},
			{Path: "n", Msg: "required field is missing"},
			{Path: "e", Msg: "must not be null (the field is not nullable)"},
			{Path: "tags[0]", Msg: "must not be null (the field is not nullable)"},
			{Path: "tags[2]", Msg: "must be a string, not a number"},
			{Path: "m.source", Msg: "required field is missing"},
			{Path: "grid[0][1]", Msg: "must be at least 0, not -1"},
		}},
		{"ranges enum datetime refs unknown", `{"id": "x", "n": 10.5, "b": true, "d": "2026-02-30T00:00:00Z", "e": "closed", "tags": [], "m": {"source": "s", "deep": {"x": 1, "y": 2}, "z": 0}, "c": "nope", "cs": ["acme", "", "gone"], "grid": [], "zzz": 1, "aaa": 2}`, []errs.Violation{
			{Path: "n", Msg: "must be at most 10, not 10.5"},
			{Path: "d", Msg: `must be an RFC 3339 datetime, such as "2026-01-31T09:30:00Z", not "2026-02-30T00:00:00Z"`},
			{Path: "e", Msg: `must be one of "open", "done", not "closed"`},
			{Path: "m.deep.y", Msg: "unknown field (fields here: x)"},
			{Path: "m.z", Msg: "unknown field (fields here: source, deep)"},
			{Path: "c", Msg: `no document "nope" in store "companies"`},
			{Path: "cs[1]", Msg: `must be the key of a document of store "companies", not empty`},
			{Path: "cs[2]", Msg: `no document "gone" in store "companies"`},
			{Path: "aaa", Msg: "unknown field (fields here: id, n, b, d, e, tags, m, c, cs, grid)"},
			{Path: "zzz", Msg: "unknown field (fields here: id, n, b, d, e, tags, m, c, cs, grid)"},
		}},
		{"below min", `{"id": "x", "n": -1.5, "b": true, "e": "done", "tags": [], "m": {"source": "s"}, "c": "acme", "cs": [], "grid": []}`, []errs.Violation{
			{Path: "n", Msg: "must be at least -1, not -1.5"},
		}},
		{"datetime forms", `{"id": "x", "n": 0, "b": true, "d": "2026-01-31 09:30:00Z", "e": "done", "tags": [], "m": {"source": "s"}, "c": "acme", "cs": [], "grid": []}`, []errs.Violation{
			{Path: "d", Msg: `must be an RFC 3339 datetime, such as "2026-01-31T09:30:00Z", not "2026-01-31 09:30:00Z"`},
		}},
		{"date only", `{"id": "x", "n": 0, "b": true, "d": "2026-01-31", "e": "done", "tags": [], "m": {"source": "s"}, "c": "acme", "cs": [], "grid": []}`, []errs.Violation{
			{Path: "d", Msg: `must be an RFC 3339 datetime, such as "2026-01-31T09:30:00Z", not "2026-01-31"`},
		}},
		{"huge number", `{"id": "x", "n": 1e400, "b": true, "e": "done", "tags": [], "m": {"source": "s"}, "c": "acme", "cs": [], "grid": []}`, []errs.Violation{
			{Path: "n", Msg: "must be a finite number"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := s.Validate(decode(t, tc.doc), refs)
			if diff := cmp.Diff(tc.want, violations(t, err)); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
			var ve *errs.ValidationError
			errors.As(err, &ve)
			if ve.What != "document" {
				t.Errorf("What = %q", ve.What)
			}
		})
	}

	// Go values that JSON does not produce.
	d := decode(t, ok)
	d["n"] = math.NaN()
	d["tags"] = []string{"a"}
	d["b"] = json.Number("0x10")
	want := []errs.Violation{
		{Path: "n", Msg: "must be a finite number"},
		{Path: "b", Msg: "must be true or false, not a number"},
		{Path: "tags", Msg: "must be an array, not a Go []string (documents hold JSON values only)"},
	}
	if diff := cmp.Diff(want, violations(t, s.Validate(d, refs))); diff != "" {
		t.Errorf("Go values (-want +got):\n%s", diff)
	}
	d = decode(t, ok)
	d["n"] = json.Number("0x10")
	if diff := cmp.Diff([]errs.Violation{{Path: "n", Msg: "must be a number, not a number"}}, violations(t, s.Validate(d, refs))); diff != "" {
		t.Errorf("bad json.Number (-want +got):\n%s", diff)
	}

	// The callback's own error is returned as is.
	boom := errors.New("db down")
	if err := s.Validate(decode(t, ok), func(string, string) (bool, error) { return false, boom }); err != boom {
		t.Errorf("refExists error: got %v", err)
	}
	// Validate never modifies the document.
	d = decode(t, ok)
	before := decode(t, ok)
	s.Validate(d, refs)
	if diff := cmp.Diff(before, d); diff != "" {
		t.Errorf("document changed: %s", diff)
	}
}

func TestValidateViolationCap(t *testing.T) {
	s := researchNotes(t)
	d := decode(t, goodNote)
	tags := make([]any, 150)
	for i := range tags {
		tags[i] = i
	}
	d["tags"] = tags
	got := violations(t, s.Validate(d, nil))
	if len(got) != 101 || got[100].Msg != "and 50 more violations" || got[99].Path != "tags[99]" {
		t.Errorf("got %d violations, last %+v", len(got), got[len(got)-1])
	}
}

func TestNormalize(t *testing.T) {
	s := researchNotes(t)
	d := decode(t, goodNote)
	n := s.Normalize(d)
	if got := n["updated_at"]; got != "2026-01-31T08:30:00.000000000Z" {
		t.Errorf("updated_at = %v", got)
	}
	if d["updated_at"] != "2026-01-31T09:30:00+01:00" {
		t.Errorf("Normalize changed its input")
	}
	// An already canonical document comes back as is (no copy).
	n2 := s.Normalize(n)
	if n2["updated_at"] != n["updated_at"] || len(n2) != len(n) {
		t.Errorf("second Normalize = %v", n2)
	}
	// Datetimes inside arrays and objects.
	p := mustLoad(t, map[string]string{"stores/e.json": `{"key": "{id}", "schema": {"id": {"type": "string"},
		"at": {"type": "array", "item": {"type": "datetime"}}, "o": {"type": "object", "fields": {"t": {"type": "datetime", "nullable": true}}}}}`})
	e := p.Stores["e"]
	d = decode(t, `{"id": "x", "at": ["2026-01-01T00:00:00Z", "2026-01-01T00:00:00.5-00:30"], "o": {"t": "2025-12-31T23:59:59.999999999+00:00"}}`)
	want := decode(t, `{"id": "x", "at": ["2026-01-01T00:00:00.000000000Z", "2026-01-01T00:30:00.500000000Z"], "o": {"t": "2025-12-31T23:59:59.999999999Z"}}`)
	if diff := cmp.Diff(want, e.Normalize(d)); diff != "" {
		t.Errorf("nested (-want +got):\n%s", diff)
	}
	// Canonical text order is time order.
	a, _ := canonicalDatetime("2026-01-01T00:00:00.9Z")
	b, _ := canonicalDatetime("2026-01-01T00:00:01+00:00")
	c, _ := canonicalDatetime("2026-01-01T01:00:00.5+02:00")
	if !(c < a && a < b) {
		t.Errorf("order: %s %s %s", c, a, b)
	}
	if _, ok := parseDatetime("0000-01-01T00:00:00+01:00"); ok {
		t.Errorf("a datetime before year 0 in UTC was accepted")
	}
}

func TestKeyOf(t *testing.T) {
	s := researchNotes(t)
	key, err := s.KeyOf(decode(t, goodNote))
	if err != nil || key != "acme:pricing" {
		t.Errorf("KeyOf = %q, %v", key, err)
	}
	key, _ = s.KeyOf(w2Doc(12345, 0))
	if key != "c0345:t012" {
		t.Errorf("W2 key = %q", key)
	}
	p := mustLoad(t, map[string]string{"stores/k.json": `{"key": "k/{n}-{b}/{e}:{s}.", "schema": {
		"n": {"type": "number"}, "b": {"type": "boolean"}, "e": {"type": "enum", "values": ["x", "y"]}, "s": {"type": "string", "nullable": true}}}`})
	k := p.Stores["k"]
	key, err = k.KeyOf(decode(t, `{"n": 1.50, "b": true, "e": "x", "s": "a-b"}`))
	if err != nil || key != "k/1.5-true/x:a-b." {
		t.Errorf("KeyOf = %q, %v", key, err)
	}
	key, _ = k.KeyOf(decode(t, `{"n": 1e3, "b": false, "e": "y", "s": "z"}`))
	if key != "k/1000-false/y:z." {
		t.Errorf("KeyOf = %q", key)
	}
	tests := []struct {
		doc  string
		want []errs.Violation
	}{
		{`{"b": true, "e": "x", "s": null}`, []errs.Violation{
			{Path: "n", Msg: "key field is missing: the key k/{n}-{b}/{e}:{s}. needs it"},
			{Path: "s", Msg: "key field is null: the key k/{n}-{b}/{e}:{s}. needs a value"},
		}},
		{`{"n": 1, "b": true, "e": "x", "s": ""}`, []errs.Violation{
			{Path: "s", Msg: "key field must not be empty: the key k/{n}-{b}/{e}:{s}. needs a value"},
		}},
		{`{"n": [1], "b": true, "e": "x:y", "s": "a/b"}`, []errs.Violation{
			{Path: "n", Msg: "key field must be a string, number or boolean, not an array"},
			{Path: "e", Msg: `key field must not contain ":": it separates the parts of the key k/{n}-{b}/{e}:{s}.`},
		}},
		{`{"n": 1, "b": true, "e": "x", "s": "a:b"}`, []errs.Violation{
			{Path: "s", Msg: `key field must not contain ":": it separates the parts of the key k/{n}-{b}/{e}:{s}.`},
		}},
	}
	for _, tc := range tests {
		_, err := k.KeyOf(decode(t, tc.doc))
		if diff := cmp.Diff(tc.want, violations(t, err)); diff != "" {
			t.Errorf("KeyOf(%s) (-want +got):\n%s", tc.doc, diff)
		}
	}
	d := decode(t, goodNote)
	d["company_id"] = "a:b"
	if _, err := s.KeyOf(d); err == nil || !strings.Contains(err.Error(), `company_id: key field must not contain ":"`) {
		t.Errorf("separator in company_id: %v", err)
	}
	d["company_id"] = strings.Repeat("x", 1100)
	if _, err := s.KeyOf(d); err == nil || !strings.Contains(err.Error(), "the key is longer than 1024 bytes") {
		t.Errorf("long key: %v", err)
	}
}

func TestExpiresAt(t *testing.T) {
	p := mustLoad(t, map[string]string{
		"stores/none.json": `{"key": "{id}", "schema": {"id": {"type": "string"}}}`,
		"stores/flat.json": `{"key": "{id}", "schema": {"id": {"type": "string"}}, "ttl": 60}`,
		"stores/ov.json": `{"key": "{id}", "schema": {"id": {"type": "string"}, "status": {"type": "string", "nullable": true}, "pri": {"type": "number"}},
			"ttl": {"default": 86400, "override": [
				{"condition": "status = 'done'", "ttl": 3600},
				{"condition": "status IN ['done', 'failed']", "ttl": 10},
				{"condition": "pri != 1", "ttl": 20},
				{"condition": "status = null", "ttl": 30}]}}`,
		"stores/nodef.json": `{"key": "{id}", "schema": {"id": {"type": "string"}, "status": {"type": "string"}},
			"ttl": {"override": [{"condition": "status != 'keep'", "ttl": 5}]}}`,
	})
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		store, doc string
		want       time.Duration // 0: never
	}{
		{"none", `{"id": "a"}`, 0},
		{"flat", `{"id": "a"}`, time.Minute},
		{"ov", `{"id": "a", "status": "done", "pri": 2}`, time.Hour}, // first match wins
		{"ov", `{"id": "a", "status": "failed", "pri": 1}`, 10 * time.Second},
		{"ov", `{"id": "a", "status": "open", "pri": 2}`, 20 * time.Second},
		{"ov", `{"id": "a", "pri": 1}`, 30 * time.Second},
		{"ov", `{"id": "a", "status": "open", "pri": 1}`, 24 * time.Hour},
		{"nodef", `{"id": "a", "status": "x"}`, 5 * time.Second},
		{"nodef", `{"id": "a", "status": "keep"}`, 0},
	}
	for _, tc := range tests {
		at, ok := p.Stores[tc.store].ExpiresAt(decode(t, tc.doc), now)
		if tc.want == 0 {
			if ok {
				t.Errorf("%s %s: expires at %v, want never", tc.store, tc.doc, at)
			}
			continue
		}
		if !ok || at.Sub(now) != tc.want {
			t.Errorf("%s %s: got %v %v, want %v", tc.store, tc.doc, at.Sub(now), ok, tc.want)
		}
	}
}

func TestPrepare(t *testing.T) {
	s := researchNotes(t)
	now := time.Now()
	p, err := s.Prepare(decode(t, goodNote), nil, now)
	if err != nil {
		t.Fatal(err)
	}
	if p.Key != "acme:pricing" || p.Doc["updated_at"] != "2026-01-31T08:30:00.000000000Z" || !p.ExpiresAt.IsZero() {
		t.Errorf("Prepare = %+v", p)
	}
	d := decode(t, goodNote)
	delete(d, "topic")
	d["confidence"] = json.Number("2")
	want := []errs.Violation{
		{Path: "topic", Msg: "required field is missing"},
		{Path: "confidence", Msg: "must be at most 1, not 2"},
	}
	_, err = s.Prepare(d, nil, now)
	if diff := cmp.Diff(want, violations(t, err)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	d = decode(t, goodNote)
	d["company_id"] = "a:b"
	_, err = s.Prepare(d, nil, now)
	if diff := cmp.Diff([]errs.Violation{{Path: "company_id", Msg: `key field must not contain ":": it separates the parts of the key {company_id}:{topic}`}}, violations(t, err)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func BenchmarkValidateW2(b *testing.B) {
	s := researchNotes(b)
	docs := make([]map[string]any, 64)
	for i := range docs {
		docs[i] = w2Doc(i*997, i%3)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.Validate(docs[i%len(docs)], nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPrepareW2(b *testing.B) {
	s := researchNotes(b)
	docs := make([]map[string]any, 64)
	for i := range docs {
		docs[i] = w2Doc(i*997, i%3)
	}
	now := time.Now()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.Prepare(docs[i%len(docs)], nil, now); err != nil {
			b.Fatal(err)
		}
	}
}

// PrepareCopy returns what Prepare returns, errors included, and a
// document that shares no map or slice with its input.
func TestPrepareCopy(t *testing.T) {
	p := mustLoad(t, map[string]string{
		"stores/companies.json": `{"key": "{id}", "schema": {"id": {"type": "string"}}}`,
		"stores/e.json": `{"key": "{id}", "schema": {"id": {"type": "string"},
			"at": {"type": "array", "item": {"type": "datetime"}}, "o": {"type": "object", "nullable": true, "fields": {"t": {"type": "datetime", "nullable": true},
			"grid": {"type": "array", "item": {"type": "array", "item": {"type": "number"}}}}}, "c": {"type": "ref", "store": "companies", "nullable": true}}}`,
	})
	e := p.Stores["e"]
	rn := researchNotes(t)
	refs := func(store, key string) (bool, error) { return key == "acme", nil }
	now := time.Now()
	tests := []struct {
		s   *Store
		doc string
	}{
		{rn, goodNote},
		{rn, `{"company_id": "acme", "topic": "pricing", "summary": "s", "confidence": 0.5, "updated_at": "2026-01-31T09:30:00.000000000Z", "tags": [], "metadata": {"source": "call"}}`},
		{rn, `{"company_id": "a:b", "summary": 1, "confidence": 2, "updated_at": "2026-02-30T00:00:00Z", "tags": [1], "metadata": {"x": 1}, "zz": 0}`},
		{rn, `{}`},
		{e, `{"id": "x", "at": ["2026-01-01T00:00:00Z", "2026-01-01T00:00:00.5-00:30", "2026-01-01T00:00:00.000000000Z"], "o": {"t": "2025-12-31T23:59:59.999999999+00:00", "grid": [[1, 2], []]}, "c": "acme"}`},
		{e, `{"id": "x", "at": [], "o": null}`},
		{e, `{"id": "x", "at": [], "o": {"grid": []}, "c": "nope"}`},
		{e, `{"id": "x", "at": ["2026-01-01"], "o": {"t": 5, "grid": [[true]]}}`},
	}
	for _, tc := range tests {
		want, werr := tc.s.Prepare(decode(t, tc.doc), refs, now)
		in := decode(t, tc.doc)
		got, gerr := tc.s.PrepareCopy(in, refs, now)
		if diff := cmp.Diff(fmt.Sprint(werr), fmt.Sprint(gerr)); diff != "" {
			t.Errorf("%s: errors (-Prepare +PrepareCopy):\n%s", tc.doc, diff)
		}
		if werr != nil {
			continue
		}
		if diff := cmp.Diff(*want, got); diff != "" {
			t.Errorf("%s: (-Prepare +PrepareCopy):\n%s", tc.doc, diff)
		}
		if shared := sharedParts(got.Doc, in); shared != "" {
			t.Errorf("%s: the copy shares %s with its input", tc.doc, shared)
		}
		if diff := cmp.Diff(decode(t, tc.doc), in); diff != "" {
			t.Errorf("%s: PrepareCopy changed its input: %s", tc.doc, diff)
		}
	}
	boom := errors.New("db down")
	if _, err := e.PrepareCopy(decode(t, `{"id": "x", "at": [], "c": "acme"}`), func(string, string) (bool, error) { return false, boom }, now); err != boom {
		t.Errorf("refExists error: got %v", err)
	}
}

// sharedParts names a map or slice that a and b share (by address), or
// returns "".
func sharedParts(a, b any) string {
	seen := map[uintptr]string{}
	var walk func(v any, path string, record bool) string
	walk = func(v any, path string, record bool) string {
		var ptr uintptr
		switch x := v.(type) {
		case map[string]any:
			ptr = reflect.ValueOf(x).Pointer()
			for k, e := range x {
				if s := walk(e, path+"."+k, record); s != "" {
					return s
				}
			}
		case []any:
			if cap(x) == 0 {
				return ""
			}
			ptr = reflect.ValueOf(x).Pointer()
			for i, e := range x {
				if s := walk(e, fmt.Sprintf("%s[%d]", path, i), record); s != "" {
					return s
				}
			}
		default:
			return ""
		}
		if record {
			seen[ptr] = path
		} else if p, ok := seen[ptr]; ok {
			return p + " (as " + path + ")"
		}
		return ""
	}
	walk(a, "doc", true)
	return walk(b, "input", false)
}

func BenchmarkPrepareCopyW2(b *testing.B) {
	s := researchNotes(b)
	docs := make([]map[string]any, 64)
	for i := range docs {
		docs[i] = w2Doc(i*997, i%3)
	}
	now := time.Now()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.PrepareCopy(docs[i%len(docs)], nil, now); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMisfitW2 is the check a read tool makes of each document it
// returns: decode the stored JSON and validate it.
func BenchmarkMisfitW2(b *testing.B) {
	s := researchNotes(b)
	docs := make([][]byte, 64)
	for i := range docs {
		var err error
		if docs[i], err = json.Marshal(w2Doc(i*997, i%3)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if why := s.Misfit(docs[i%len(docs)]); why != nil {
			b.Fatal(why)
		}
	}
}
