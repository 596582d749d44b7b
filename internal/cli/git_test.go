package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGitExportImport(t *testing.T) {
	h := newHarness(t)
	h.ok("fs", "write", "a.txt", "one\n")
	h.ok("fs", "write", "dir/b.txt", "two\n")
	h.ok("checkpoint", "v1")
	dir := t.TempDir()
	exp := filepath.Join(dir, "exp")
	out := h.ok("--thread", "main", "git", "export", exp)
	head, _, ok := strings.Cut(out, " refs/heads/main\n")
	if !ok || len(head) < 40 {
		t.Fatalf("git export printed %q", out)
	}
	head = head[len(head)-40:]
	if b, err := os.ReadFile(filepath.Join(exp, "dir", "b.txt")); err != nil || string(b) != "two\n" {
		t.Fatalf("exported work tree: %q %v", b, err)
	}
	h.usage("satchel git import needs --thread T: the new thread to make", "git", "import", exp)
	if got := h.ok("--thread", "copy", "git", "import", exp); got != "imported 2 commits into thread copy\n" {
		t.Fatalf("git import printed %q", got)
	}
	var res struct {
		Refs map[string]string `json:"refs"`
	}
	if err := json.Unmarshal([]byte(h.ok("--json", "--thread", "copy", "git", "export", filepath.Join(dir, "again"))), &res); err != nil {
		t.Fatal(err)
	}
	if res.Refs["refs/heads/copy"] != head {
		t.Fatalf("export after import: %v, want copy at %s", res.Refs, head)
	}
	if log := h.ok("--thread", "copy", "log"); !strings.Contains(log, "write dir/b.txt") {
		t.Fatalf("log of the imported thread:\n%s", log)
	}
	// Without --thread: the scope, every thread a branch.
	out = h.ok("git", "export", filepath.Join(dir, "scope"))
	for _, want := range []string{" refs/heads/main\n", " refs/heads/copy\n", " refs/tags/main/v1\n"} {
		if !strings.Contains(out, want) {
			t.Fatalf("scope export lacks %q:\n%s", want, out)
		}
	}
	h.refused(exp+" is not empty: export writes a new repository into a new or empty directory", "git", "export", exp)
	h.usage("--git applies to --http only", "serve", "--git")
}
