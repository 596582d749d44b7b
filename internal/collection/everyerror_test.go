package collection

import (
	"strings"
	"testing"
)

// TestEveryErrorOfADefinition: a refused field does not hide the errors of
// the key, ttl and indexes that name other fields.
func TestEveryErrorOfADefinition(t *testing.T) {
	_, err := loadFiles(t, map[string]string{"stores/tasks.json": `{
  "entity": {"name": "Task", "key": "{nosuch}", "schema": {
    "id": {"type": "strin"},
    "status": {"type": "string"},
    "n": {"type": "number"}}},
  "ttl": {"default": 60, "override": [{"condition": "gone = 'x'", "ttl": 5}, {"condition": "id = 'x'", "ttl": 5}]},
  "indexes": ["missing", "id"]
}`})
	var got []string
	for _, v := range violations(t, err) {
		got = append(got, v.Path+": "+v.Msg)
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{"entity.schema.id.type", "entity.key: {nosuch} names no field", "ttl.override[0].condition", "indexes[0]: \"missing\" names no field"} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q in:\n%s", want, all)
		}
	}
	// A field whose definition is refused is not reported again where it
	// is named.
	if strings.Contains(all, "ttl.override[1]") || strings.Contains(all, "indexes[1]") {
		t.Errorf("the refused field is reported again:\n%s", all)
	}
}
