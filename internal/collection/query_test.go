package collection

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/satchel-dev/satchel/internal/errs"
)

func TestParseQuery(t *testing.T) {
	tests := []struct {
		src  string
		want string // String() of the parsed query
	}{
		{"", ""},
		{"   ", ""},
		{"company_id = 'acme'", "company_id = 'acme'"},
		{"a='x'and b!=2", "a = 'x' AND b != 2"},
		{"topic IN ['t001','t002'] and confidence > 0.5", "topic IN ['t001', 't002'] AND confidence > 0.5"},
		{"topic in ['it''s']", "topic IN ['it''s']"},
		{"m.source <= -1.5e3 AND x >= 0 AND y < 1 AND z = true AND w = FALSE AND v != Null", "m.source <= -1.5e3 AND x >= 0 AND y < 1 AND z = true AND w = false AND v != null"},
		{"\ta\n=\r''", "a = ''"},
		{"x = 'é' AND y = 1", "x = 'é' AND y = 1"},
		{"first-name = 'a'", "first-name = 'a'"},
		{"x IN [null, 1, 'a', true]", "x IN [null, 1, 'a', true]"},
	}
	for _, tc := range tests {
		q, err := ParseQuery(tc.src)
		if err != nil {
			t.Errorf("ParseQuery(%q): %v", tc.src, err)
			continue
		}
		if got := q.String(); got != tc.want {
			t.Errorf("ParseQuery(%q).String() = %q, want %q", tc.src, got, tc.want)
		}
	}
	q, _ := ParseQuery("a = 'x' AND b IN [1, 2]")
	want := []Cond{
		{Field: "a", Op: "=", Pos: 1, Values: []Value{{Kind: KindString, Str: "x", Pos: 5}}},
		{Field: "b", Op: "IN", Pos: 13, Values: []Value{{Kind: KindNumber, Num: 1, raw: "1", Pos: 19}, {Kind: KindNumber, Num: 2, raw: "2", Pos: 22}}},
	}
	if diff := cmp.Diff(want, q.Conds, cmp.AllowUnexported(Value{}, Cond{})); diff != "" {
		t.Errorf("Conds (-want +got):\n%s", diff)
	}
}

func TestParseQueryErrors(t *testing.T) {
	tests := []struct{ src, msg string }{
		{"company_id = AND", `invalid query at position 14: expected a value (a 'quoted' string, a number, true, false or null), found "AND"`},
		{"company_id =", `invalid query at position 13: expected a value (a 'quoted' string, a number, true, false or null), found the end of the query`},
		{"= 'a'", `invalid query at position 1: expected a field name, found "="`},
		{"a 'x'", `invalid query at position 3: expected an operator (=, !=, <, <=, >, >= or IN), found 'x'`},
		{"a = 'x' b = 1", `invalid query at position 9: expected AND or the end of the query, found "b"`},
		{"a = 'x' OR b = 1", `invalid query at position 9: OR is not supported: use field IN [a, b] for alternatives on one field, or run one query for each`},
		{"a = 'x' AND", `invalid query at position 12: expected a field name, found the end of the query`},
		{"a = 'unterminated", `invalid query at position 5: unterminated string (a string ends with ', and a ' inside it is written '')`},
		{`a = "x"`, `invalid query at position 5: strings are written in single quotes, like 'text', not double quotes`},
		{"a == 1", `invalid query at position 3: use = to compare, not ==`},
		{"a <> 1", `invalid query at position 3: use != for "not equal", not <>`},
		{"a IN 'x'", `invalid query at position 6: expected [ after IN (a list such as IN ['a', 'b']), found 'x'`},
		{"a IN ['x' 'y']", `invalid query at position 11: expected , or ] in the IN list, found 'y'`},
		{"a IN []", `invalid query at position 7: expected a value (a 'quoted' string, a number, true, false or null), found "]"`},
		{"a IN ['x',]", `invalid query at position 11: expected a value (a 'quoted' string, a number, true, false or null), found "]"`},
		{"(a = 1)", `invalid query at position 1: parentheses are not supported: a query is conditions joined by AND`},
		{"NOT a = 1", `invalid query at position 1: NOT is not supported: use != for "not equal"`},
		{"a = 01", `invalid query at position 5: invalid number "01" (numbers are written like 42, -3.5 or 1e6)`},
		{"a = 1.", `invalid query at position 5: invalid number "1." (numbers are written like 42, -3.5 or 1e6)`},
		{"a = 1x", `invalid query at position 5: invalid number "1x" (numbers are written like 42, -3.5 or 1e6)`},
		{"a = -", `invalid query at position 5: invalid number "-" (numbers are written like 42, -3.5 or 1e6)`},
		{"a = 1e999", `invalid query at position 5: number 1e999 is out of range`},
		{"é = 1", `invalid query at position 1: unexpected character 'é'`},
		{"x = 'é' AND ü", `invalid query at position 13: unexpected character 'ü'`},
		{"a = 1 AND and = 2", `invalid query at position 11: expected a field name, found "and"`},
		{"a ! 1", `invalid query at position 3: unexpected character '!'`},
		{"a = yes", `invalid query at position 5: expected a value (a 'quoted' string, a number, true, false or null), found "yes"`},
	}
	for _, tc := range tests {
		_, err := ParseQuery(tc.src)
		if err == nil {
			t.Errorf("ParseQuery(%q) succeeded", tc.src)
			continue
		}
		if !errors.Is(err, errs.ErrInvalidArgument) || err.Error() != tc.msg {
			t.Errorf("ParseQuery(%q):\n got %v\nwant %s", tc.src, err, tc.msg)
		}
	}
	if _, err := ParseQuery(string(make([]byte, MaxQueryLen+1))); err == nil || err.Error() != "invalid query: longer than 8192 bytes" {
		t.Errorf("long query: %v", err)
	}
	if _, err := ParseQuery("a = '\xff'"); err == nil || err.Error() != "invalid query: not valid UTF-8" {
		t.Errorf("bad UTF-8: %v", err)
	}
}

func queryStore(t testing.TB) *Store {
	t.Helper()
	p := mustLoad(t, map[string]string{
		"stores/c.json": `{"key": "{id}", "schema": {"id": {"type": "string"}}}`,
		"stores/q.json": `{"key": "{id}", "schema": {
			"id": {"type": "string"},
			"n": {"type": "number"},
			"b": {"type": "boolean", "nullable": true},
			"at": {"type": "datetime", "nullable": true},
			"status": {"type": "enum", "values": ["open", "done"], "nullable": true},
			"tags": {"type": "array", "item": {"type": "string"}},
			"m": {"type": "object", "nullable": true, "fields": {"source": {"type": "string"}, "score": {"type": "number", "nullable": true}}},
			"c": {"type": "ref", "store": "c", "nullable": true}
		}, "indexes": ["n", "m.source", "at", "status", "b"]}`,
	})
	return p.Stores["q"]
}

func TestCheckQueryErrors(t *testing.T) {
	s := queryStore(t)
	tests := []struct{ src, msg string }{
		{"nope = 1", `invalid query at position 1: unknown field "nope" (fields: id, n, b, at, status, tags, m, m.source, m.score, c)`},
		{"m.nope = 1", `invalid query at position 1: unknown field "m.nope" (fields: id, n, b, at, status, tags, m, m.source, m.score, c)`},
		{"id.x = 1", `invalid query at position 1: unknown field "id.x" (fields: id, n, b, at, status, tags, m, m.source, m.score, c)`},
		{"id < 'b'", `invalid query at position 1: < compares numbers and datetimes only, and id is a string field`},
		{"status >= 'open'", `invalid query at position 1: >= compares numbers and datetimes only, and status is an enum field`},
		{"n = '1'", `invalid query at position 5: n is a number field: expected a number, found '1' (write it unquoted: 1)`},
		{"id = 1", `invalid query at position 6: id is a string field: expected a 'quoted' string or null, found 1`},
		{"c IN ['a', 2]", `invalid query at position 12: c is a string field: expected a 'quoted' string or null, found 2`},
		{"b = 'true'", `invalid query at position 5: b is a boolean field: expected true or false, found 'true' (write it unquoted: true)`},
		{"status = 'closed'", `invalid query at position 10: status is an enum field: expected one of 'open', 'done', found 'closed'`},
		{"at > 'yesterday'", `invalid query at position 6: at is a datetime field: expected a quoted RFC 3339 datetime such as '2026-01-31T09:30:00Z', found 'yesterday'`},
		{"at > 5", `invalid query at position 6: at is a datetime field: expected a quoted RFC 3339 datetime such as '2026-01-31T09:30:00Z', found 5`},
		{"n < null", `invalid query at position 5: < cannot compare with null: use n = null or n != null`},
		{"tags = 'ai'", `invalid query at position 1: tags is an array field: it can only be compared with = null or != null`},
		{"m IN [null]", `invalid query at position 1: m is an object field: it can only be compared with = null or != null`},
	}
	for _, tc := range tests {
		_, err := s.ParseQuery(tc.src)
		if err == nil || !errors.Is(err, errs.ErrInvalidArgument) || err.Error() != tc.msg {
			t.Errorf("ParseQuery(%q):\n got %v\nwant %s", tc.src, err, tc.msg)
		}
	}
	for _, ok := range []string{"m = null", "tags != null", "at >= '2026-01-01T00:00:00+02:00'", "status IN ['open', null]", "b = true", "m.score > 1"} {
		if _, err := s.ParseQuery(ok); err != nil {
			t.Errorf("ParseQuery(%q): %v", ok, err)
		}
	}
	q, _ := s.ParseQuery("at < '2026-01-01T02:00:00+02:00'")
	if got := q.Conds[0].Values[0].Str; got != "2026-01-01T00:00:00.000000000Z" {
		t.Errorf("datetime value not canonical: %q", got)
	}
}

func TestMatch(t *testing.T) {
	s := queryStore(t)
	docs := map[string]string{
		"full":   `{"id": "a", "n": 5, "b": true, "at": "2026-01-01T10:00:00+02:00", "status": "open", "tags": ["x"], "m": {"source": "web", "score": 0.5}, "c": "k"}`,
		"nulls":  `{"id": "b", "n": -1, "b": null, "at": null, "status": null, "tags": [], "m": null, "c": null}`,
		"absent": `{"id": "c", "n": 1e2, "tags": []}`,
		"inner":  `{"id": "d", "n": 0, "tags": [], "m": {"source": "call", "score": null}}`,
	}
	tests := []struct {
		where string
		want  []string
	}{
		{"", []string{"absent", "full", "inner", "nulls"}},
		{"id = 'a'", []string{"full"}},
		{"id != 'a'", []string{"absent", "inner", "nulls"}},
		{"n > 1", []string{"absent", "full"}},
		{"n >= 5 AND n <= 5", []string{"full"}},
		{"n = 100", []string{"absent"}},
		{"n < 0", []string{"nulls"}},
		{"b = true", []string{"full"}},
		{"b != true", []string{"absent", "inner", "nulls"}}, // != matches null
		{"b = null", []string{"absent", "inner", "nulls"}},
		{"b != null", []string{"full"}},
		{"b = false", nil},
		{"at = '2026-01-01T08:00:00Z'", []string{"full"}},           // instants, not text
		{"at > '2026-01-01T09:59:59.999+02:00'", []string{"full"}},  // after
		{"at < '2026-01-01T08:00:00.000000001Z'", []string{"full"}}, // before by 1ns
		{"at < '2027-01-01T00:00:00Z'", []string{"full"}},           // null is never < anything
		{"status IN ['open', 'done']", []string{"full"}},            // null is in no list
		{"status IN ['done', null]", []string{"absent", "inner", "nulls"}},
		{"status != 'open'", []string{"absent", "inner", "nulls"}},
		{"m.source = 'web'", []string{"full"}},
		{"m.source != 'web'", []string{"absent", "inner", "nulls"}},
		{"m.source = null", []string{"absent", "nulls"}}, // under a null or absent object
		{"m.score = null", []string{"absent", "inner", "nulls"}},
		{"m.score > 0", []string{"full"}},
		{"m = null", []string{"absent", "nulls"}},
		{"m != null", []string{"full", "inner"}},
		{"tags != null", []string{"absent", "full", "inner", "nulls"}},
		{"c = 'k' AND n = 5 AND m.source IN ['web']", []string{"full"}},
	}
	for _, tc := range tests {
		q, err := s.ParseQuery(tc.where)
		if err != nil {
			t.Fatalf("%q: %v", tc.where, err)
		}
		var got []string
		for _, name := range sortedKeys(docs) {
			if q.Match(decode(t, docs[name])) {
				got = append(got, name)
			}
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tc.where, diff)
		}
	}
	// float64 documents (decoded without UseNumber) match the same.
	q, _ := s.ParseQuery("n = 5 AND m.score = 0.5")
	if !q.Match(map[string]any{"n": 5.0, "m": map[string]any{"score": 0.5}}) {
		t.Error("float64 document did not match")
	}
	// An unchecked query compares by the kinds of its values.
	uq, _ := ParseQuery("x = 'a' AND y > 2 AND z = true")
	if !uq.Match(map[string]any{"x": "a", "y": 3, "z": true}) || uq.Match(map[string]any{"x": "a", "y": "3", "z": true}) {
		t.Error("unchecked query")
	}
}

func BenchmarkParseQueryW2(b *testing.B) {
	s := researchNotes(b)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := s.ParseQuery("topic IN ['t001','t002'] and confidence > 0.5"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMatchW2(b *testing.B) {
	s := researchNotes(b)
	q, _ := s.ParseQuery("topic IN ['t001','t002'] and confidence > 0.5 AND updated_at > '2026-01-01T00:10:00Z'")
	docs := make([]map[string]any, 64)
	for i := range docs {
		docs[i] = s.Normalize(w2Doc(i*997, 0))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q.Match(docs[i%len(docs)])
	}
}
