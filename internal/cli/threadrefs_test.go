package cli

import (
	"strings"
	"testing"
)

// TestThreadRefs: the commands that take a REF take THREAD@REF and THREAD;
// the CLI keeps no read ledger (each command is its own caller).
func TestThreadRefs(t *testing.T) {
	h := newHarness(t)
	h.okIn("main\n", "fs", "write", "a.md")
	h.ok("fork", "try-b")
	h.okIn("b\n", "fs", "write", "a.md", "--thread", "try-b")
	equal(t, "read at try-b@1", h.ok("fs", "read", "a.md", "--at", "try-b@1"), "main\n")
	equal(t, "read at try-b", h.ok("fs", "read", "a.md", "--at", "try-b"), "b\n")
	if out := h.ok("diff", "main", "try-b"); !strings.Contains(out, "a.md") {
		t.Errorf("diff main try-b: %q", out)
	}
	h.refused("thread not found: nope", "fs", "read", "a.md", "--at", "nope@1")
	// Not tracked: a write over a file this command never read applies.
	h.okIn("over\n", "fs", "write", "a.md")
}
