package satchel_test

import (
	"context"
	"encoding/json"
	"errors"
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
