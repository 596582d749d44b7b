package mcpserver

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel"
)

// TestReviewToken: a session of a review token changes a review thread of
// its own, reads its changes, is told when a person decides, and cannot
// merge; the thread moves only when the review is approved.
func TestReviewToken(t *testing.T) {
	f := newHTTP(t, Config{})
	ctx := context.Background()
	free, _ := token(t, f.st, satchel.TokenSpec{Agent: "writer", Scope: "acme"})
	rev, tok := token(t, f.st, satchel.TokenSpec{Agent: "writer", Scope: "acme", Review: true})
	if !tok.Review {
		t.Fatal("the token is not a review token")
	}
	m := mustDial(t, f.url, free, "")
	m.ok("write_file", map[string]any{"path": "a.md", "content": "main\n"})

	r := mustDial(t, f.url, rev, "")
	r.is("read_file", map[string]any{"path": "a.md", "numbered": false}, "main\n")
	res := r.call("edit_file", map[string]any{"path": "a.md", "old_text": "main", "new_text": "mine"})
	ts := texts(t, res)
	if res.IsError || len(ts) != 2 || !strings.HasPrefix(ts[1], "your changes wait for review R-") {
		t.Fatalf("edit under review: %q", ts)
	}
	id := strings.TrimPrefix(ts[1], "your changes wait for review ")
	r.is("read_file", map[string]any{"path": "a.md", "numbered": false}, "mine\n")
	m.is("read_file", map[string]any{"path": "a.md", "numbered": false}, "main\n")
	r.is("write_file", map[string]any{"path": "b.md", "content": "b\n"}, "wrote 2 bytes to b.md", "your changes wait for review "+id)
	r.refused("merge", map[string]any{"from": "review-" + id}, "your changes wait for review: merge is for an operator (satchel review approve merges a review)")

	if _, _, err := f.st.ApproveReview(ctx, id, satchel.Actor{Via: "cli:review approve"}); err != nil {
		t.Fatal(err)
	}
	m.is("read_file", map[string]any{"path": "a.md", "numbered": false}, "mine\n")
	ws, _ := f.st.Workspace(ctx, "acme", "main")
	head, _ := ws.Head(ctx)
	r.is("glob", map[string]any{"pattern": "*.md"}, "a.md\nb.md",
		"review "+id+" was approved: its changes are in thread main (commit "+itoa(head.Seq)+"); your next change starts a new review")

	res = r.call("append_file", map[string]any{"path": "log.md", "content": "x\n"})
	ts = texts(t, res)
	if res.IsError || len(ts) != 2 || ts[1] == "your changes wait for review "+id {
		t.Fatalf("append after the approval: %q", ts)
	}
	id2 := strings.TrimPrefix(ts[1], "your changes wait for review ")
	if _, err := f.st.RejectReview(ctx, id2, "not now", satchel.Actor{Via: "cli:review reject"}); err != nil {
		t.Fatal(err)
	}
	r.refused2("read_file", map[string]any{"path": "log.md"}, "file not found: log.md",
		"review "+id2+" was rejected (not now): its changes were not applied to thread main; your next change starts a new review")
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// refused2 checks that a tool is refused with exactly msg, followed by
// the notices.
func (c *client) refused2(name string, args any, msg string, notices ...string) {
	c.t.Helper()
	r := c.call(name, args)
	ts := texts(c.t, r)
	if !r.IsError || !equal(ts, append([]string{msg}, notices...)) {
		c.t.Errorf("%s %s:\n got %q (error %v)\nwant refusal %q and %q", name, short(args), short(ts), r.IsError, msg, notices)
	}
}
