package collection

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/satchel-dev/satchel/internal/errs"
)

// An enum of 150,000 values and a schema of 80,000 fields load at once:
// with a scan of the values (or the keys) seen so far for duplicates, 200,000
// values took 82 s and 100,000 fields 44 s.
func TestAttackLargeDefinitionsLoadInLinearTime(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"key": "{id}", "schema": {"id": {"type": "string"}, "status": {"type": "enum", "values": [`)
	const values = 150_000
	for i := range values {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"v%d"`, i)
	}
	b.WriteString(`]}}}`)
	enum := b.String()

	b.Reset()
	b.WriteString(`{"key": "{f0}", "schema": {`)
	const fields = 80_000
	for i := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"f%d":{"type":"string"}`, i)
	}
	b.WriteString(`}}`)
	wide := b.String()
	if len(enum) > MaxDefinitionBytes || len(wide) > MaxDefinitionBytes {
		t.Fatalf("the test's definitions (%d, %d bytes) pass the bound", len(enum), len(wide))
	}

	p, err := LoadProjectFS(fstest.MapFS{
		"stores/enum.json": {Data: []byte(enum)},
		"stores/wide.json": {Data: []byte(wide)},
	})
	if err != nil {
		t.Fatal(err)
	}
	st := p.Stores["enum"]
	if st.Fields["status"].Values[values-1] != fmt.Sprint("v", values-1) || len(p.Stores["wide"].FieldNames) != fields {
		t.Fatal("the large definitions did not load whole")
	}
	if err := st.Validate(map[string]any{"id": "a", "status": "v149999"}, nil); err != nil {
		t.Fatalf("the last enum value: %v", err)
	}
	if err := st.Validate(map[string]any{"id": "a", "status": "nope"}, nil); err == nil {
		t.Fatal("a value outside the enum was accepted")
	}

	// A duplicate far down a large list is still found.
	_, err = LoadProjectFS(fstest.MapFS{"stores/enum.json": {Data: []byte(strings.Replace(enum, `"v149999"`, `"v0"`, 1))}})
	if err == nil || !strings.Contains(err.Error(), `"v0" is listed twice`) {
		t.Fatalf("a duplicate enum value: %v", err)
	}
	_, err = LoadProjectFS(fstest.MapFS{"stores/wide.json": {Data: []byte(strings.Replace(wide, `"f79999"`, `"f0"`, 1))}})
	if err == nil || !strings.Contains(err.Error(), `duplicate key "f0"`) {
		t.Fatalf("a duplicate field: %v", err)
	}
}

// A definition over MaxDefinitionBytes is refused, naming the bound.
func TestAttackDefinitionSizeBound(t *testing.T) {
	big := `{"key": "{id}", "schema": {"id": {"type": "string", "description": "` + strings.Repeat("x", MaxDefinitionBytes) + `"}}}`
	_, err := LoadProjectFS(fstest.MapFS{"stores/big.json": {Data: []byte(big)}})
	if !errors.Is(err, errs.ErrValidation) || !strings.Contains(err.Error(), fmt.Sprintf("over the limit of %d bytes for a definition", MaxDefinitionBytes)) {
		t.Fatalf("an oversized definition: %v", err)
	}
}
