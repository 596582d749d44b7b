package satchel_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"testing/fstest"

	"github.com/satchel-dev/satchel"
)

var fuzzProject = fstest.MapFS{"stores/s.json": {Data: []byte(`{
  "key": "{id}",
  "schema": {
    "id": {"type": "string"},
    "n": {"type": "number", "nullable": true},
    "at": {"type": "datetime", "nullable": true},
    "e": {"type": "enum", "values": ["a", "b"], "nullable": true},
    "o": {"type": "object", "nullable": true, "fields": {"x": {"type": "array", "item": {"type": "string"}}}}
  },
  "history": {"versions": 1},
  "indexes": ["n", "e"]
}`)}}

// FuzzSet sets arbitrary input: it is refused with a validation error, or
// stored, and then reads back as JSON that decodes to the same values.
func FuzzSet(f *testing.F) {
	for _, s := range []string{
		`{"id": "a"}`, `{"id": "a", "n": 1.5, "at": "2026-01-01T00:00:00+02:00", "e": "b", "o": {"x": ["\u2028"]}}`,
		`{"id": ""}`, `[]`, `{"id": "a", "n": 1e400}`, `{"id": "a"} x`, `{"id": "é\u0000"}`,
	} {
		f.Add([]byte(s))
	}
	p, err := satchel.LoadProjectFS(fuzzProject)
	if err != nil {
		f.Fatal(err)
	}
	ctx := context.Background()
	st, _ := satchel.Open(ctx, "memory:")
	c, err := st.Collection(ctx, p, "s1", "s")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		key, _, err := c.Set(ctx, json.RawMessage(in))
		if err != nil {
			if !errors.Is(err, satchel.ErrValidation) && !errors.Is(err, satchel.ErrInvalidArgument) {
				t.Fatalf("%q: %v", in, err)
			}
			return
		}
		d, err := c.Get(ctx, key, true)
		if err != nil {
			t.Fatalf("get %q: %v", key, err)
		}
		var back map[string]any
		if err := json.Unmarshal(d.JSON, &back); err != nil || back["id"] != key {
			t.Fatalf("stored %s for %q: %v", d.JSON, in, err)
		}
		if _, err := c.Query(ctx, satchel.QueryRequest{Where: "n > 0 AND e = 'a'", Sort: "-at"}); err != nil {
			t.Fatal(err)
		}
	})
}

// A set keeps nothing of a caller's map: changing the map, its objects or
// its arrays afterwards does not change the stored document.
func TestSetKeepsNothingOfTheCaller(t *testing.T) {
	p, err := satchel.LoadProjectFS(fuzzProject)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := satchel.Open(ctx, "memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c, err := st.Collection(ctx, p, "s1", "s")
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []string{"2026-01-01T00:00:00Z", "2026-01-01T00:00:00.000000000Z"} {
		doc := map[string]any{"id": "k", "n": 1.5, "at": at, "e": "a", "o": map[string]any{"x": []any{"a", "b"}}}
		if _, _, err := c.Set(ctx, doc); err != nil {
			t.Fatal(err)
		}
		doc["n"] = 2.5
		doc["at"] = "2027-01-01T00:00:00Z"
		o := doc["o"].(map[string]any)
		o["x"].([]any)[0] = "changed"
		o["y"] = "added"
		delete(doc, "e")
		got, err := c.Get(ctx, "k", false)
		if err != nil {
			t.Fatal(err)
		}
		want := `{"at":"2026-01-01T00:00:00Z","e":"a","id":"k","n":1.5,"o":{"x":["a","b"]}}`
		if string(got.JSON) != want {
			t.Errorf("at %s: stored %s, want %s", at, got.JSON, want)
		}
		// Queries see the stored document, not the caller's.
		pg, err := c.Query(ctx, satchel.QueryRequest{Where: "n = 1.5 AND e = 'a'"})
		if err != nil || len(pg.Documents) != 1 {
			t.Errorf("at %s: query: %d documents, %v", at, len(pg.Documents), err)
		}
	}
}

// A document with Go values that JSON does not decode to ([]string, a
// map[string]string) is refused or accepted as its JSON would be.
func TestSetGoValuesAsJSON(t *testing.T) {
	p, err := satchel.LoadProjectFS(fuzzProject)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := satchel.Open(ctx, "memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c, err := st.Collection(ctx, p, "s1", "s")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		doc  map[string]any
		json string
	}{
		{map[string]any{"id": "k", "n": "bad", "o": map[string]any{"x": []string{"a"}}}, `{"id": "k", "n": "bad", "o": {"x": ["a"]}}`},
		{map[string]any{"id": "k", "o": map[string]any{"x": []string{"a"}, "y": 1}}, `{"id": "k", "o": {"x": ["a"], "y": 1}}`},
		{map[string]any{"id": "k", "e": "a", "o": map[string]any{"x": []string{"a"}}}, `{"id": "k", "e": "a", "o": {"x": ["a"]}}`},
		{map[string]any{"id": "k", "o": map[string]string{}}, `{"id": "k", "o": {}}`},
	} {
		_, _, gerr := c.Set(ctx, tc.doc)
		_, _, jerr := c.Set(ctx, tc.json)
		if fmt.Sprint(gerr) != fmt.Sprint(jerr) {
			t.Errorf("%v: %v; as JSON: %v", tc.doc, gerr, jerr)
		}
	}
}
