//go:build unix

package collection

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A FIFO in stores/ or agents/ used to block the load (check, serve)
// forever: special files are skipped, and the project says which.
func TestAttackFIFOInProject(t *testing.T) {
	dir := writeProject(t, map[string]string{
		"stores/notes.json":        `{"key": "{id}", "schema": {"id": {"type": "string"}}}`,
		"agents/writer/agent.json": `{"stores": {"notes": "rw"}}`,
	})
	for _, p := range []string{"stores/fifo.json", "agents/reader/agent.json", "agents/pipe"} {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(full, 0o600); err != nil {
			t.Skipf("cannot make a FIFO: %v", err)
		}
	}
	p, err := LoadProject(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(p.Skipped, "\n")
	want := "stores/fifo.json: skipped: a FIFO, not a regular file\nagents/pipe: skipped: a FIFO, not a directory\nagents/reader/agent.json: skipped: a FIFO, not a regular file"
	if got != want {
		t.Fatalf("skipped:\n%s\nwant:\n%s", got, want)
	}
	if len(p.StoreNames) != 1 || len(p.AgentNames) != 1 {
		t.Fatalf("stores %v, agents %v", p.StoreNames, p.AgentNames)
	}
}
