package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/satchel-dev/satchel/spill"
)

func TestSpillFS(t *testing.T) {
	h := newHarness(t)
	root := t.TempDir()
	content := "line one\nline two <b>\n"
	out := h.okIn(content, "spill", "save", "--owner", "session-1", "--name", "my output.txt", "--root", root)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("spill save printed %q, want the locator and the hint", out)
	}
	loc, hint := lines[0], lines[1]
	dir := filepath.Join(root, spill.SessionDir("session-1"))
	if filepath.Dir(loc) != dir || !regexp.MustCompile(`^[A-Za-z0-9_-]{12}-my-output\.txt$`).MatchString(filepath.Base(loc)) {
		t.Errorf("locator %q is not in %s with a random prefix and a safe name", loc, dir)
	}
	if !strings.Contains(hint, loc) || !strings.Contains(hint, "read_file") {
		t.Errorf("hint %q does not name the file's full path and the tool", hint)
	}
	got, err := os.ReadFile(loc)
	if err != nil || string(got) != content {
		t.Errorf("spill file = %q, %v", got, err)
	}

	equal(t, "fetch", h.ok("spill", "fetch", loc, "--root", root), content)
	equal(t, "fetch --json", h.ok("spill", "fetch", loc, "--root", root, "--json"), `{"text":"line one\nline two <b>\n"}`+"\n")
	r := h.run("spill", "fetch", filepath.Join(dir, "AAAAAAAAAAAA-gone.txt"), "--root", root)
	if r.Code != 1 || !strings.Contains(r.Err, "no such file or directory") {
		t.Errorf("fetch of a missing spill = %+v", r)
	}
	r = h.run("spill", "fetch", "/etc/passwd", "--root", root)
	if r.Code != 1 || r.Out != "" {
		t.Errorf("fetch outside the root = %+v", r)
	}

	type saved struct {
		Locator string `json:"locator"`
		Hint    string `json:"hint"`
	}
	s := decode[saved](t, h.okIn("x", "spill", "save", "--owner", "session-1", "--root", root, "--json"))
	if !strings.HasSuffix(s.Locator, "-result.txt") || !strings.Contains(s.Hint, s.Locator) {
		t.Errorf("spill save --json = %+v", s)
	}

	// prune: only what is older than --older-than.
	equal(t, "prune none", h.ok("spill", "prune", "--older-than", "1h", "--root", root), "removed 0 files\n")
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(loc, old, old); err != nil {
		t.Fatal(err)
	}
	equal(t, "prune old", h.ok("spill", "prune", "--older-than", "1h", "--root", root, "--json"), `{"removed":1}`+"\n")
	if _, err := os.Stat(loc); !os.IsNotExist(err) {
		t.Errorf("pruned spill still there: %v", err)
	}
	equal(t, "prune all", h.ok("spill", "prune", "--older-than", "0s", "--root", root), "removed 1 files\n")
	h.refused("olderThan must not be negative, was -1h0m0s", "spill", "prune", "--older-than", "-1h", "--root", root)
	if len(h.dsns) != 0 {
		t.Errorf("the fs backend opened the database: %q", h.dsns)
	}
}

func TestSpillWorkspace(t *testing.T) {
	h := newHarness(t)
	content := strings.Repeat("row\n", 10)
	out := h.okIn(content, "--thread", "agent", "spill", "save", "--name", "rows.txt", "--backend", "workspace")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2 || !regexp.MustCompile(`^spill/[A-Za-z0-9_-]{12}-rows\.txt$`).MatchString(lines[0]) ||
		!strings.Contains(lines[1], lines[0]) {
		t.Fatalf("spill save --backend workspace printed %q", out)
	}
	loc := lines[0]
	equal(t, "a spill reads at its path", h.ok("--thread", "agent", "fs", "read", loc), content)
	equal(t, "but is not a file of the thread", h.ok("--thread", "agent", "fs", "ls"), "")
	equal(t, "fetch", h.ok("--thread", "agent", "spill", "fetch", loc, "--backend", "workspace"), content)
	h.refused("file not found: "+loc, "spill", "fetch", loc, "--backend", "workspace")
	r := h.run("--thread", "agent", "spill", "fetch", "notes/a.md", "--backend", "workspace")
	if r.Code != 1 || r.Out != "" {
		t.Errorf("fetch of a file that is not a spill = %+v", r)
	}
}
