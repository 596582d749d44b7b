package satcheltest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/satchel-dev/satchel"
)

// review: a caller under review (ForReview) never changes its thread; its
// changes go to a review thread, which an operator approves (a merge) or
// rejects (archived), and the caller is told.
func (s *suite) review(t *testing.T, st *satchel.Store, ws *satchel.Workspace) {
	write(t, ws, "notes/plan.md", "draft\n", "keep.md", "keep\n")
	base, _ := ws.Head(bg)
	agent := satchel.Actor{Agent: "research", Credential: "0123456789abcdef", Via: "mcp:write_file"}
	open := func(key string) *satchel.Workspace {
		rw, err := st.Workspace(bg, "default", "main", satchel.ForReview(key), satchel.TrackReads(), satchel.WorkspaceActor(agent))
		must(t, "open under review", err)
		return rw
	}
	rw := open("session-1")
	if !rw.UnderReview() || ws.UnderReview() {
		t.Errorf("UnderReview: %v and %v, want true and false", rw.UnderReview(), ws.UnderReview())
	}

	// Reads before any change read the thread, and open no review.
	got, err := rw.Read(bg, "notes/plan.md")
	must(t, "read", err)
	equal(t, "read before a change", got, "draft\n")
	equal(t, "no notice for a read", len(rw.Notices()), 0)
	rs, err := st.ListReviews(bg, satchel.ReviewQuery{Scope: "default"})
	must(t, "list", err)
	equal(t, "no review before a change", len(rs), 0)

	// The first change opens a review; the thread's head does not move.
	h := rw.ForActor(agent)
	_, err = h.StrReplace(bg, "notes/plan.md", "draft", "final", false)
	must(t, "edit under review", err)
	rs, err = st.ListReviews(bg, satchel.ReviewQuery{Scope: "default"})
	must(t, "list", err)
	if len(rs) != 1 {
		t.Fatalf("%d reviews, want 1", len(rs))
	}
	r := rs[0]
	if satchel.ValidReviewID(r.ID) != nil {
		t.Errorf("review ID %q", r.ID)
	}
	equalSlice(t, "notices", h.Notices(), []string{"your changes wait for review " + r.ID})
	equal(t, "notices once", len(h.Notices()), 0)
	equal(t, "review thread", r.ReviewThread, "review-"+r.ID)
	equal(t, "thread", r.Thread, "main")
	equal(t, "agent", r.Agent, "research")
	equal(t, "token", r.Token, "0123456789abcdef")
	equal(t, "state", r.State, satchel.ReviewOpen)
	equal(t, "base", r.Base, base.Seq)
	equal(t, "files", r.Files, 1)
	head, _ := ws.Head(bg)
	equal(t, "the thread's head is unchanged", head.Seq, base.Seq)
	got, _ = ws.Read(bg, "notes/plan.md")
	equal(t, "the thread's file is unchanged", got, "draft\n")

	// The caller reads its own changes, and later changes join the review.
	got, _ = rw.Read(bg, "notes/plan.md")
	equal(t, "the caller reads its change", got, "final\n")
	h = rw.ForActor(agent)
	must(t, "write", h.Write(bg, "new.md", "new\n"))
	equalSlice(t, "notices", h.Notices(), []string{"your changes wait for review " + r.ID})
	r, err = st.Review(bg, r.ID)
	must(t, "review", err)
	equal(t, "files", r.Files, 2)
	rs, _ = st.ListReviews(bg, satchel.ReviewQuery{})
	equal(t, "still one review", len(rs), 1)
	// A caller whose rules hide notes/ counts the files it sees.
	rs, err = st.ListReviews(bg, satchel.ReviewQuery{Files: []satchel.WorkspaceOption{satchel.WithFileRules(mustRules(t, "notes/**=none,**=read"))}})
	must(t, "list with file rules", err)
	if len(rs) != 1 || rs[0].Files != 1 {
		t.Errorf("a review listed for a caller whose rules hide notes/: %+v, want 1 file", rs)
	}
	cs, err := st.ReviewChanges(bg, r)
	must(t, "changes", err)
	equal(t, "changes", fmt.Sprint(cs), "[{new.md added} {notes/plan.md changed}]")
	d, err := st.ReviewDiff(bg, r)
	must(t, "diff", err)
	if !strings.Contains(d, "-draft\n+final\n") || !strings.Contains(d, "+++ b/new.md\n") {
		t.Errorf("diff %q", d)
	}

	// Another caller (another key) has a review of its own; the same key
	// finds its open review again.
	other := open("session-2")
	must(t, "other write", other.Write(bg, "other.md", "o\n"))
	rs, _ = st.ListReviews(bg, satchel.ReviewQuery{Scope: "default", State: satchel.ReviewOpen})
	equal(t, "two open reviews", len(rs), 2)
	again := open("session-1")
	got, err = again.Read(bg, "new.md")
	must(t, "the same key reads its review", err)
	equal(t, "the same key", got, "new\n")

	// An open review's thread cannot be deleted: the caller's next
	// change would make it anew, empty, and an approval would then merge
	// that.
	refused(t, "deleting an open review's thread", st.DeleteThread(bg, "default", r.ReviewThread), satchel.ErrConflict,
		"thread "+r.ReviewThread+" holds review "+r.ID+", which is open: approve or reject it first (satchel review reject "+r.ID+" archives the thread)")

	// What changes a thread directly is refused.
	_, err = rw.Merge(bg, "review-"+r.ID)
	refused(t, "merge under review", err, satchel.ErrAccessDenied, "your changes wait for review: merge is for an operator (satchel review approve merges a review)")

	// Approve: a merge into the thread, by the operator; the caller is
	// told on its next call, and its next change opens a new review.
	op := satchel.Actor{Via: "cli:review approve"}
	ar, mr, err := st.ApproveReview(bg, r.ID, op)
	must(t, "approve", err)
	equal(t, "approved", ar.State, satchel.ReviewApproved)
	equal(t, "decided by", ar.DecidedBy, "an operator (cli:review approve)")
	equal(t, "merge commit", ar.Merge, mr.Commit.Seq)
	got, _ = ws.Read(bg, "notes/plan.md")
	equal(t, "the thread has the change", got, "final\n")
	hist, _ := ws.History(bg, 0, 1)
	if len(hist) != 1 || hist[0].Op != "merge" || hist[0].Via != "cli:review approve" {
		t.Errorf("the thread's newest commit %+v, want the approval's merge", hist)
	}
	_, _, err = st.ApproveReview(bg, r.ID, op)
	if err == nil || !errors.Is(err, satchel.ErrConflict) || !strings.HasPrefix(err.Error(), "review "+r.ID+" was approved already, by an operator (cli:review approve) at ") {
		t.Errorf("approving twice: %v", err)
	}
	h = rw.ForActor(agent)
	got, err = h.Read(bg, "notes/plan.md")
	must(t, "read after approval", err)
	equal(t, "read after approval", got, "final\n")
	equalSlice(t, "told of the approval", h.Notices(), []string{fmt.Sprintf("review %s was approved: its changes are in thread main (commit %d); your next change starts a new review", r.ID, ar.Merge)})
	h = rw.ForActor(agent)
	must(t, "append after approval", h.Append(bg, "log.md", "one\n"))
	n := h.Notices()
	if len(n) != 1 || n[0] == "your changes wait for review "+r.ID || !strings.HasPrefix(n[0], "your changes wait for review R-") {
		t.Errorf("notices after approval %q, want a new review", n)
	}
	r2 := strings.TrimPrefix(n[0], "your changes wait for review ")

	// Reject: archived; told with the reason; nothing reaches the thread.
	_, err = st.RejectReview(bg, r2, "two\nlines", op)
	refused(t, "a reason of two lines", err, satchel.ErrInvalidArgument, "a reason is one line of at most 1000 bytes")
	rj, err := st.RejectReview(bg, r2, "too broad", satchel.Actor{Credential: "fedcba9876543210", Via: "inspector"})
	must(t, "reject", err)
	equal(t, "rejected", rj.State, satchel.ReviewRejected)
	equal(t, "reason", rj.Reason, "too broad")
	equal(t, "decided by", rj.DecidedBy, "operator token fedcba9876543210 (inspector)")
	ok, _ := ws.Exists(bg, "log.md")
	equal(t, "a rejected change never reaches the thread", ok, false)
	h = rw.ForActor(agent)
	ok, err = h.Exists(bg, "log.md")
	must(t, "exists after rejection", err)
	equal(t, "the caller reads the thread again", ok, false)
	equalSlice(t, "told of the rejection", h.Notices(), []string{"review " + r2 + " was rejected (too broad): its changes were not applied to thread main; your next change starts a new review"})
	_, err = st.RejectReview(bg, r2, "", op)
	refused(t, "reject twice", err, satchel.ErrConflict, "")
	th, err := st.Threads(bg, "default")
	must(t, "threads", err)
	for _, ti := range th {
		if ti.Name == "review-"+r2 && !ti.Archived {
			t.Errorf("the rejected review's thread is not archived")
		}
	}

	// A conflicting approval is refused as a merge is, and the review
	// stays open, its thread writable.
	h = rw.ForActor(agent)
	must(t, "read keep", func() error { _, err := h.Read(bg, "keep.md"); return err }())
	must(t, "write keep", h.Write(bg, "keep.md", "agent\n"))
	r3 := strings.TrimPrefix(h.Notices()[0], "your changes wait for review ")
	write(t, ws, "keep.md", "operator\n")
	_, _, err = st.ApproveReview(bg, r3, op)
	refused(t, "conflicting approval", err, satchel.ErrConflict, "merge of review-"+r3+" into main refused: 1 conflict: keep.md line 1 (both changed)")
	r, err = st.Review(bg, r3)
	must(t, "review", err)
	equal(t, "still open", r.State, satchel.ReviewOpen)
	must(t, "the review thread is writable again", rw.Write(bg, "more.md", "m\n"))

	// While a decision is under way (the review thread archived, the
	// review still open), a change is refused.
	_, err = st.ArchiveThread(bg, "default", "review-"+r3)
	must(t, "archive the review thread", err)
	err = rw.Write(bg, "during.md", "d\n")
	refused(t, "a change while the review is decided", err, satchel.ErrConflict, "review "+r3+" is being decided (its thread is archived meanwhile): try again shortly")
	_, err = st.UnarchiveThread(bg, "default", "review-"+r3)
	must(t, "unarchive", err)

	// A change as the first call after a decision: told, then a new review.
	_, err = st.RejectReview(bg, r3, "", op)
	must(t, "reject", err)
	h = rw.ForActor(agent)
	must(t, "write after the rejection", h.Write(bg, "after.md", "a\n"))
	n = h.Notices()
	if len(n) != 2 || n[0] != "review "+r3+" was rejected: its changes were not applied to thread main; your next change starts a new review" ||
		!strings.HasPrefix(n[1], "your changes wait for review R-") || strings.HasSuffix(n[1], r3) {
		t.Errorf("notices of a write after a rejection: %q", n)
	}
	ok, _ = ws.Exists(bg, "after.md")
	equal(t, "the write went to the new review", ok, false)

	// Unknown and malformed IDs.
	_, err = st.Review(bg, "R-00000000")
	refused(t, "unknown review", err, satchel.ErrNotFound, "review not found: R-00000000")
	_, err = st.Review(bg, "r-1")
	refused(t, "malformed ID", err, satchel.ErrInvalidArgument, `invalid review ID "r-1": a review ID is R- and 8 digits or capital letters, e.g. R-7K2M9Q4X`)

	// The audit trail names who approved and who rejected, and when.
	page, err := st.Audit(bg, satchel.AuditQuery{Scope: "default", Tool: "inspector"})
	must(t, "audit", err)
	found := false
	for _, e := range page.Entries {
		if e.Thread == "review-"+r2 {
			found = e.Summary == "review "+r2+" rejected: too broad" && e.Op == "archive" && e.Credential == "fedcba9876543210" && !e.Time.IsZero()
		}
	}
	if !found {
		t.Errorf("audit of the rejection: %+v", page.Entries)
	}
	page, err = st.Audit(bg, satchel.AuditQuery{Scope: "default", Tool: "cli:review approve"})
	must(t, "audit", err)
	var sums []string
	for _, e := range page.Entries {
		sums = append(sums, e.Op+" "+e.Thread)
	}
	if !strings.Contains(strings.Join(sums, ","), "merge main") || !strings.Contains(strings.Join(sums, ","), "archive review-"+ar.ID) {
		t.Errorf("audit of the approval: %q", sums)
	}

	// A workspace confined to its thread (a thread-bound token) works
	// under review, and still reaches no other thread.
	_, err = ws.Fork(bg, "", "other")
	must(t, "fork other", err)
	bound, err := st.Workspace(bg, "default", "main", satchel.ForReview("bound"), satchel.OnlyThread(), satchel.WorkspaceActor(agent))
	must(t, "open bound", err)
	must(t, "bound write", bound.Write(bg, "bound.md", "b\n"))
	got, err = bound.Read(bg, "bound.md")
	must(t, "bound read", err)
	equal(t, "bound read", got, "b\n")
	_, err = bound.At(bg, "other@1")
	refused(t, "bound reference to another thread", err, satchel.ErrAccessDenied, "this token can use thread main only")
	_, err = bound.At(bg, "main@1")
	must(t, "bound reference to its thread", err)

	// A decided review's thread is the operator's to delete; the review
	// still lists, with no files.
	must(t, "delete a review thread", st.DeleteThread(bg, "default", "review-"+r2))
	r, err = st.Review(bg, r2)
	must(t, "a review without its thread", err)
	equal(t, "files of a review without its thread", r.Files, 0)
	_, err = st.ListReviews(bg, satchel.ReviewQuery{})
	must(t, "list with a review without its thread", err)

	// Concurrent first changes of one caller open one review.
	par := open("parallel")
	before, err := st.ListReviews(bg, satchel.ReviewQuery{})
	must(t, "list", err)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := par.ForActor(agent).Write(bg, fmt.Sprintf("par/%d.md", i), "p\n"); err != nil {
				t.Errorf("concurrent write: %v", err)
			}
		}()
	}
	wg.Wait()
	after, err := st.ListReviews(bg, satchel.ReviewQuery{})
	must(t, "list", err)
	equal(t, "one review for concurrent changes", len(after), len(before)+1)
	known := map[string]bool{}
	for _, r := range before {
		known[r.ID] = true
	}
	for _, r := range after {
		if !known[r.ID] {
			equal(t, "the new review's files", r.Files, 8)
		}
	}

	// Purging the scope deletes its reviews.
	_, err = st.Purge(bg, "default")
	must(t, "purge", err)
	rs, err = st.ListReviews(bg, satchel.ReviewQuery{})
	must(t, "list after purge", err)
	equal(t, "reviews after purge", len(rs), 0)
}

// reviewFirst: a review of a thread that had no commits yet: approving it
// makes its files the thread's first commit, unless the thread has
// commits by then.
func (s *suite) reviewFirst(t *testing.T, st *satchel.Store, _ *satchel.Workspace) {
	agent := satchel.Actor{Agent: "research"}
	for _, thread := range []string{"empty", "raced"} {
		rw, err := st.Workspace(bg, "fresh", thread, satchel.ForReview("k-"+thread), satchel.WorkspaceActor(agent))
		must(t, "open", err)
		h := rw.ForActor(agent)
		must(t, "first write", h.Write(bg, "a.md", "a\n"))
		id := strings.TrimPrefix(h.Notices()[0], "your changes wait for review ")
		ws, err := st.Workspace(bg, "fresh", thread)
		must(t, "open thread", err)
		if thread == "raced" {
			write(t, ws, "b.md", "b\n")
			_, _, err = st.ApproveReview(bg, id, satchel.Actor{Via: "test"})
			refused(t, "approving a first review after the thread's first commit", err, satchel.ErrConflict,
				"review "+id+" cannot be approved: thread raced had no commits when the review began and has some now; merge its files by hand, or reject it")
			r, err := st.Review(bg, id)
			must(t, "review", err)
			equal(t, "still open", r.State, satchel.ReviewOpen)
			continue
		}
		r, err := st.Review(bg, id)
		must(t, "review", err)
		equal(t, "files of a first review", r.Files, 1)
		_, m, err := st.ApproveReview(bg, id, satchel.Actor{Via: "test"})
		must(t, "approve a first review", err)
		equal(t, "message", m.Message(), fmt.Sprintf("merged review-%s@%d into empty: commit %d, 1 path changed", id, m.From.Seq, m.Commit.Seq))
		got, err := ws.Read(bg, "a.md")
		must(t, "read", err)
		equal(t, "the thread has the first review's file", got, "a\n")
		archived, err := ws.Archived(bg)
		must(t, "archived", err)
		equal(t, "the thread is not archived", archived, false)
	}
}

// reviewHidden: a caller whose file rules hide secrets/ sees a review as
// it sees a file. A review that changes hidden files only is neither
// listed nor found; a rejection's reason, an operator's text that may
// name hidden files, is ReasonHidden in the listing, the review, the
// notice its caller is given and the review thread's archive entry.
func (s *suite) reviewHidden(t *testing.T, st *satchel.Store, ws *satchel.Workspace) {
	write(t, ws, "pub.md", "p\n", "secrets/plan.md", "s\n")
	agent := satchel.Actor{Agent: "research"}
	rules := []satchel.WorkspaceOption{satchel.WithFileRules(mustRules(t, "secrets/**=none,**=read"))}
	under := func(key string, opts ...satchel.WorkspaceOption) *satchel.Workspace {
		rw, err := st.Workspace(bg, "default", "main", append([]satchel.WorkspaceOption{satchel.ForReview(key), satchel.WorkspaceActor(agent)}, opts...)...)
		must(t, "open under review", err)
		return rw
	}
	reviewOf := func(w *satchel.Workspace) string {
		n := w.Notices()
		if len(n) == 0 {
			t.Fatalf("no notice of a review")
		}
		return strings.TrimPrefix(n[len(n)-1], "your changes wait for review ")
	}
	hw := under("hidden").ForActor(agent)
	must(t, "write a hidden file under review", hw.Write(bg, "secrets/plan.md", "launch on 5 May\n"))
	hidden := reviewOf(hw)
	pw := under("public").ForActor(agent)
	must(t, "write under review", pw.Write(bg, "pub.md", "q\n"))
	public := reviewOf(pw)
	_, err := st.RejectReview(bg, public, "conflicts with secrets/plan.md", satchel.Actor{Via: "cli:review reject"})
	must(t, "reject", err)

	rs, err := st.ListReviews(bg, satchel.ReviewQuery{Files: rules})
	must(t, "list with rules", err)
	if len(rs) != 1 || rs[0].ID != public || rs[0].Files != 1 || rs[0].Reason != satchel.ReasonHidden {
		t.Errorf("reviews listed with rules: %+v, want %s only, with 1 file and the reason hidden", rs, public)
	}
	_, err = st.Review(bg, hidden, rules...)
	refused(t, "a review of hidden files, with rules", err, satchel.ErrNotFound, "review not found: "+hidden)
	r, err := st.Review(bg, public, rules...)
	must(t, "review with rules", err)
	equal(t, "reason with rules", r.Reason, satchel.ReasonHidden)
	equal(t, "files with rules", r.Files, 1)
	hist, err := st.Workspace(bg, "default", "review-"+public, rules...)
	must(t, "open the review thread with rules", err)
	h, err := hist.History(bg, 0, 1)
	must(t, "history of the review thread", err)
	if len(h) != 1 || h[0].Summary != "review "+public+" rejected" {
		t.Errorf("the rejection's archive entry with rules: %+v, want summary %q", h, "review "+public+" rejected")
	}
	page, err := st.Audit(bg, satchel.AuditQuery{Scope: "default", Thread: "review-" + public, Files: rules})
	must(t, "audit with rules", err)
	for _, e := range page.Entries {
		if strings.Contains(e.Summary, "secrets") {
			t.Errorf("audit with rules: %q", e.Summary)
		}
	}

	// Without rules: both, the reason whole.
	rs, err = st.ListReviews(bg, satchel.ReviewQuery{})
	must(t, "list", err)
	equal(t, "reviews without rules", len(rs), 2)
	r, err = st.Review(bg, public)
	must(t, "review", err)
	equal(t, "reason without rules", r.Reason, "conflicts with secrets/plan.md")
	r, err = st.Review(bg, hidden)
	must(t, "a review of hidden files, without rules", err)
	equal(t, "its files", r.Files, 1)

	// The caller of a review, its rules hiding secrets/, is told of the
	// rejection without the reason.
	aw := under("author", satchel.WithFileRules(mustRules(t, "secrets/**=none,**=rw")))
	ah := aw.ForActor(agent)
	must(t, "write under review with rules", ah.Write(bg, "pub2.md", "a\n"))
	own := reviewOf(ah)
	_, err = st.RejectReview(bg, own, "see secrets/plan.md", satchel.Actor{Via: "cli:review reject"})
	must(t, "reject", err)
	h2 := aw.ForActor(agent)
	_, err = h2.Exists(bg, "pub2.md")
	must(t, "a call after the rejection", err)
	equalSlice(t, "told of the rejection", h2.Notices(), []string{"review " + own + " was rejected (" + satchel.ReasonHidden + "): its changes were not applied to thread main; your next change starts a new review"})

	// A review whose thread was deleted changes no file: it lists, with
	// none, for every caller.
	must(t, "delete a review thread", st.DeleteThread(bg, "default", "review-"+public))
	r, err = st.Review(bg, public, rules...)
	must(t, "a review without its thread, with rules", err)
	equal(t, "its files", r.Files, 0)
}
