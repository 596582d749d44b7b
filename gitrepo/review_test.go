package gitrepo_test

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/gitrepo"
)

// TestReviewPush: a --review token's push goes to its review thread, the
// thread's head stays where it was, a second push from the same clone
// goes to the same review, and approving the review brings the pushed
// changes to the thread.
func TestReviewPush(t *testing.T) {
	for _, name := range []string{"memory", "sqlite"} {
		t.Run(name, func(t *testing.T) { testReviewPush(t, backends()[name](t)) })
	}
}

func testReviewPush(t *testing.T, st *satchel.Store) {
	g := newGitEnv(t)
	ctx := t.Context()
	main, err := st.Workspace(ctx, "team", "main")
	must(t, err)
	plain, _, err := st.CreateToken(ctx, satchel.TokenSpec{Agent: "research", Scope: "team"})
	must(t, err)
	review, _, err := st.CreateToken(ctx, satchel.TokenSpec{Agent: "intern", Scope: "team", Review: true})
	must(t, err)
	srv := httptest.NewServer(gitrepo.New(gitrepo.Config{Store: st, MaxRequestBytes: 1 << 20}))
	defer srv.Close()
	dir := t.TempDir()

	must(t, main.Write(ctx, "intro.md", "hello\n"))
	must(t, main.Write(ctx, "intro.md", "hello again\n"))

	// A normal token's push lands on the thread.
	g.must(dir, "clone", "-q", cloneURL(srv.URL, plain, "team/main.git"), "plain")
	prepo := filepath.Join(dir, "plain")
	must(t, os.WriteFile(filepath.Join(prepo, "a.txt"), []byte("one\n"), 0o644))
	g.must(prepo, "add", "-A")
	g.must(prepo, "commit", "-qm", "one")
	g.must(prepo, "push", "-q", "origin", "main")
	if got, _ := main.Read(ctx, "a.txt"); got != "one\n" {
		t.Fatalf("a.txt after a normal push: %q", got)
	}
	head, err := main.Head(ctx)
	must(t, err)

	// The review token's push is accepted and waits for review.
	g.must(dir, "clone", "-q", cloneURL(srv.URL, review, "team/main.git"), "rev")
	repo := filepath.Join(dir, "rev")
	must(t, os.WriteFile(filepath.Join(repo, "a.txt"), []byte("one\ntwo\n"), 0o644))
	g.must(repo, "commit", "-qam", "two")
	g.must(repo, "push", "origin", "main")
	if h, err := main.Head(ctx); err != nil || h.Seq != head.Seq {
		t.Fatalf("the thread's head moved under review: %d, was %d (%v)", h.Seq, head.Seq, err)
	}
	if got, _ := main.Read(ctx, "a.txt"); got != "one\n" {
		t.Fatalf("a.txt on the thread after a push under review: %q", got)
	}
	open := func() satchel.Review {
		t.Helper()
		rs, err := st.ListReviews(ctx, satchel.ReviewQuery{Scope: "team", State: satchel.ReviewOpen})
		must(t, err)
		if len(rs) != 1 || rs[0].Thread != "main" || rs[0].Agent != "intern" {
			t.Fatalf("open reviews: %+v, want one of intern's on main", rs)
		}
		return rs[0]
	}
	r := open()
	rw, err := st.Workspace(ctx, "team", r.ReviewThread)
	must(t, err)
	if got, _ := rw.Read(ctx, "a.txt"); got != "one\ntwo\n" {
		t.Fatalf("a.txt on the review thread: %q", got)
	}
	cs, err := rw.History(ctx, 0, 1)
	must(t, err)
	local := strings.TrimSpace(g.must(repo, "rev-parse", "HEAD"))
	if cs[0].Agent != "intern" || cs[0].Via != "git:push" || cs[0].Git == nil || cs[0].Git.Hash != local {
		t.Fatalf("the review thread's commit: %+v (local head %s)", cs[0], local)
	}

	// A second push from the same clone goes to the same review, though
	// the thread moved meanwhile: it fast-forwards the review.
	must(t, main.Write(ctx, "other.txt", "other\n"))
	head, err = main.Head(ctx)
	must(t, err)
	must(t, os.WriteFile(filepath.Join(repo, "b.txt"), []byte("bee\n"), 0o644))
	g.must(repo, "add", "-A")
	g.must(repo, "commit", "-qm", "bee")
	g.must(repo, "push", "origin", "main")
	if r2 := open(); r2.ID != r.ID || r2.Files != 2 {
		t.Fatalf("after a second push: review %+v, want %s with 2 files", r2, r.ID)
	}
	if got, _ := rw.Read(ctx, "b.txt"); got != "bee\n" {
		t.Fatalf("b.txt on the review thread: %q", got)
	}
	if h, _ := main.Head(ctx); h.Seq != head.Seq {
		t.Fatalf("the thread's head moved under review: %d, was %d", h.Seq, head.Seq)
	}

	// A clone that lacks the review's pushed commits cannot push to it:
	// git asks it to fetch them first (they are on the review's thread,
	// not on the branch a fetch brings).
	g.must(dir, "clone", "-q", cloneURL(srv.URL, review, "team/main.git"), "rev2")
	repo2 := filepath.Join(dir, "rev2")
	must(t, os.WriteFile(filepath.Join(repo2, "d.txt"), []byte("dee\n"), 0o644))
	g.must(repo2, "add", "-A")
	g.must(repo2, "commit", "-qm", "dee")
	if out, ok := g.run(repo2, "push", "origin", "main"); ok || !strings.Contains(out, "! [rejected]") {
		t.Fatalf("push to a review from a clone without its commits: ok=%v\n%s", ok, out)
	}
	if r2 := open(); r2.Files != 2 {
		t.Fatalf("a refused push changed the review: %+v", r2)
	}

	// Approval brings the changes to the thread as a merge of the review
	// thread, whose commits are the pushed ones after its fork commit
	// (other hashes): a rebase finds them upstream and drops them.
	_, _, err = st.ApproveReview(ctx, r.ID, satchel.Actor{})
	must(t, err)
	if a, _ := main.Read(ctx, "a.txt"); a != "one\ntwo\n" {
		t.Fatalf("a.txt after approval: %q", a)
	}
	if b, _ := main.Read(ctx, "b.txt"); b != "bee\n" {
		t.Fatalf("b.txt after approval: %q", b)
	}
	if o, _ := main.Read(ctx, "other.txt"); o != "other\n" {
		t.Fatalf("other.txt after approval: %q", o)
	}
	g.must(repo, "pull", "-q", "--rebase")
	if got, want := g.must(repo, "rev-parse", "HEAD"), g.must(repo, "rev-parse", "origin/main"); got != want {
		t.Fatalf("after approval and pull --rebase, HEAD %s is not origin/main %s", got, want)
	}

	// The next push after a decision starts a new review.
	must(t, os.WriteFile(filepath.Join(repo, "c.txt"), []byte("sea\n"), 0o644))
	g.must(repo, "add", "-A")
	g.must(repo, "commit", "-qm", "sea")
	g.must(repo, "push", "origin", "main")
	if r3 := open(); r3.ID == r.ID || r3.Files != 1 {
		t.Fatalf("after approval, a push's review: %+v", r3)
	}
	if ok, _ := main.Exists(ctx, "c.txt"); ok {
		t.Fatal("c.txt reached the thread without review")
	}
}

// TestFileRulesRefusePush: a token that reads every path but writes none
// clones, and its push is refused naming the path.
func TestFileRulesRefusePush(t *testing.T) {
	g := newGitEnv(t)
	ctx := t.Context()
	st, err := satchel.Open(ctx, "memory:")
	must(t, err)
	defer st.Close()
	main, err := st.Workspace(ctx, "team", "main")
	must(t, err)
	must(t, main.Write(ctx, "notes/a.md", "a\n"))
	rules, err := satchel.ParseFileRules("**=read")
	must(t, err)
	reader, _, err := st.CreateToken(ctx, satchel.TokenSpec{Agent: "reader", Scope: "team", Files: rules})
	must(t, err)
	srv := httptest.NewServer(gitrepo.New(gitrepo.Config{Store: st}))
	defer srv.Close()
	dir := t.TempDir()
	g.must(dir, "clone", "-q", cloneURL(srv.URL, reader, "team/main.git"), "c")
	repo := filepath.Join(dir, "c")
	must(t, os.WriteFile(filepath.Join(repo, "notes", "a.md"), []byte("a\nb\n"), 0o644))
	g.must(repo, "commit", "-qam", "b")
	before, err := main.Head(ctx)
	must(t, err)
	out, ok := g.run(repo, "push", "origin", "main")
	if ok || !strings.Contains(out, "[remote rejected]") || !strings.Contains(out, "notes/a.md is read-only for agent reader") {
		t.Fatalf("push of a read-only path: ok=%v\n%s", ok, out)
	}
	if after, _ := main.Head(ctx); after.Seq != before.Seq {
		t.Fatalf("a refused push moved the head: %d, was %d", after.Seq, before.Seq)
	}
}
