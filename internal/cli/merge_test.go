package cli

import (
	"strings"
	"testing"

	"github.com/satchel-dev/satchel"
)

func TestMerge(t *testing.T) {
	h := newHarness(t)
	h.okIn("a\nb\nc\n", "fs", "write", "notes/plan.md")
	h.ok("fork", "try-b")
	h.okIn("a\nB\nc\n", "--thread", "try-b", "fs", "write", "notes/plan.md")
	h.okIn("new\n", "--thread", "try-b", "fs", "write", "new.md")
	equal(t, "dry run", h.ok("merge", "try-b", "--dry-run"), "merge of try-b@3 into main would change 2 paths, without conflicts\n")
	equal(t, "merge", h.ok("merge", "try-b"), "merged try-b@3 into main: commit 2, 2 paths changed\n")
	equal(t, "read", h.ok("fs", "read", "notes/plan.md"), "a\nB\nc\n")
	equal(t, "again", h.ok("merge", "try-b"), "unchanged: main already has every change of try-b@3\n")
	r := decode[satchel.MergeResult](t, h.ok("--json", "merge", "try-b"))
	equal(t, "json unchanged", r.Unchanged, true)

	h.okIn("a\nmain\nc\n", "fs", "write", "notes/plan.md")
	h.okIn("a\ntheirs\nc\n", "--thread", "try-b", "fs", "write", "notes/plan.md")
	h.refused("merge of try-b into main refused: 1 conflict: notes/plan.md line 2 (both changed)", "merge", "try-b")
	equal(t, "dry run with conflicts", h.ok("merge", "try-b", "--dry-run"), "merge of try-b@4 into main would change 1 path and meet 1 conflict: notes/plan.md line 2 (both changed)\n")
	h.refused("invalid --conflicts maybe: refuse or markers", "merge", "try-b", "--conflicts", "maybe")
	equal(t, "markers", h.ok("merge", "try-b", "--conflicts", "markers"), "merged try-b@4 into main: commit 4, 1 path changed, 1 conflict marked: notes/plan.md line 2 (both changed)\n")
	equal(t, "marked", h.ok("fs", "read", "notes/plan.md"), "a\n<<<<<<< main\nmain\n=======\ntheirs\n>>>>>>> try-b\nc\n")
	equal(t, "into", h.ok("merge", "main", "--into", "try-b"), "merged main@4 into try-b: commit 5, 1 path changed\n")
	log := h.ok("log", "--limit", "1")
	if want := "merged try-b@4"; !strings.Contains(log, want) {
		t.Errorf("log %q does not show %q", log, want)
	}
}
