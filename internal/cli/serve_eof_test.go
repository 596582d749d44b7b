package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeAnswersBeforeEOF runs `satchel serve < requests.jsonl`: every
// request read before the end of input is answered before serve exits.
func TestServeAnswersBeforeEOF(t *testing.T) {
	in, err := os.Open(filepath.Join("testdata", "requests.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	db := filepath.Join(t.TempDir(), "pipe.db")
	var out, errb bytes.Buffer
	if code := Main([]string{"--db", db, "serve"}, in, &out, &errb); code != 0 {
		t.Fatalf("serve: exit %d, stderr %q", code, errb.String())
	}
	answered := map[float64]json.RawMessage{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m struct {
			ID     float64         `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil || m.Result == nil {
			t.Fatalf("not a result: %q (%v)", line, err)
		}
		answered[m.ID] = m.Result
	}
	for _, id := range []float64{1, 2, 3, 4} {
		if answered[id] == nil {
			t.Errorf("request %v not answered; stdout %q", id, out.String())
		}
	}
	if !strings.Contains(string(answered[3]), `wrote 6 bytes to a.md`) {
		t.Errorf("write_file: %s", answered[3])
	}
}
