package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel"
)

// TestReview: changes of a caller under review are listed, shown,
// approved into the thread or rejected, by the CLI.
func TestReview(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	h.okIn("a\nb\nc\n", "fs", "write", "notes/plan.md")
	agent := satchel.Actor{Agent: "intern", Credential: "0123456789abcdef"}
	ws, err := h.store.Workspace(ctx, "default", "main", satchel.ForReview("s1"), satchel.WorkspaceActor(agent))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ws.StrReplace(ctx, "notes/plan.md", "b", "B", false); err != nil {
		t.Fatal(err)
	}
	rs := decode[[]satchel.Review](t, h.ok("--json", "review", "list"))
	if len(rs) != 1 {
		t.Fatalf("%d reviews, want 1", len(rs))
	}
	id := rs[0].ID
	equal(t, "list", h.ok("review", "list"), id+"\tdefault\tmain\tintern\t1\t0s\topen\n")
	equal(t, "list of another scope", h.ok("review", "list", "--scope", "other"), "")
	equal(t, "show", h.ok("review", "show", id), fmt.Sprintf("review %s: changes of agent intern to thread main of scope default, 1 file (on review-%s from main@1), open\n", id, id)+
		"--- a/notes/plan.md\n+++ b/notes/plan.md\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n")
	equal(t, "the thread is unchanged", h.ok("fs", "read", "notes/plan.md"), "a\nb\nc\n")
	equal(t, "approve", h.ok("review", "approve", id), fmt.Sprintf("approved review %s: merged review-%s@2 into main: commit 2, 1 path changed\n", id, id))
	equal(t, "the thread has the change", h.ok("fs", "read", "notes/plan.md"), "a\nB\nc\n")
	r := h.run("review", "approve", id)
	if r.Code != 1 || !strings.HasPrefix(r.Err, "review "+id+" was approved already, by an operator (cli:review approve) at ") {
		t.Errorf("approving twice: %+v", r)
	}
	equal(t, "no open review", h.ok("review", "list"), "")
	all := h.ok("review", "list", "--state", "all")
	if !strings.HasSuffix(all, "\tapproved\n") {
		t.Errorf("list --state all: %q", all)
	}

	if err := ws.Write(ctx, "new.md", "x\n"); err != nil {
		t.Fatal(err)
	}
	rs = decode[[]satchel.Review](t, h.ok("--json", "review", "list"))
	id2 := rs[0].ID
	equal(t, "reject", h.ok("review", "reject", id2, "--reason", "not now"), "rejected review "+id2+": thread review-"+id2+" is archived\n")
	h.refused("file not found: new.md", "fs", "read", "new.md")
	show := h.ok("review", "show", id2)
	if !strings.Contains(show, ", rejected by an operator (cli:review reject) at ") || !strings.Contains(show, ": not now\n") {
		t.Errorf("show of a rejected review: %q", show)
	}
	h.refused("review not found: R-00000000", "review", "show", "R-00000000")
	h.refused(`invalid review ID "nope": a review ID is R- and 8 digits or capital letters, e.g. R-7K2M9Q4X`, "review", "approve", "nope")
	h.refused(`state must be open, approved or rejected, was "maybe"`, "review", "list", "--state", "maybe")

	// The audit trail names who decided.
	audit := h.ok("audit", "--tool", "cli:review reject")
	if !strings.Contains(audit, "review "+id2+" rejected: not now") {
		t.Errorf("audit: %q", audit)
	}
}

// TestTokenReview: token create --review makes a review token.
func TestTokenReview(t *testing.T) {
	h := newHarness(t)
	tok := decode[tokenCreated](t, h.ok("--json", "token", "create", "--agent", "intern", "--scope", "acme", "--review"))
	equal(t, "review", tok.Review, true)
	h.usage("token create: --operator takes no --review (an operator's token changes nothing)", "token", "create", "--operator", "--review")
}
