package inspector

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/satchel-dev/satchel"
)

// TestBrowserApprovesReview: an agent under review changes a file; the
// local user and an agent's token see the review with no buttons; an
// operator signs in with a token, opens the review from the scope's
// reviews, reads its diff, and approves it: the page says so and the
// thread's head has the change.
func TestBrowserApprovesReview(t *testing.T) {
	ctx := browser(t)
	f := newFixture(t)
	u := f.srv.URL
	bg := context.Background()
	agent := satchel.Actor{Agent: "research", Credential: "0123456789abcdef", Via: "mcp:str_replace"}
	rw, err := f.st.Workspace(bg, "acme", "main", satchel.ForReview("s1"), satchel.WorkspaceActor(agent))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rw.StrReplace(bg, "notes/plan.md", "3. write", "3. write it up, reviewed", false); err != nil {
		t.Fatal(err)
	}
	rs, err := f.st.ListReviews(bg, satchel.ReviewQuery{Scope: "acme", State: satchel.ReviewOpen})
	if err != nil || len(rs) != 1 {
		t.Fatalf("%d reviews, %v", len(rs), err)
	}
	id := rs[0].ID
	main, _ := f.st.Workspace(bg, "acme", "main")
	head, err := main.Head(bg)
	if err != nil {
		t.Fatal(err)
	}
	before := head.Seq
	reviewLink := `a[href="/s/acme/reviews/` + id + `"]`
	buttons := `document.querySelectorAll('form[action$="/approve"], form[action$="/reject"], input[name="csrf"]').length`

	// The local user (no token exists yet) reads the review, with no buttons.
	do(t, ctx, "the local user opens the reviews", chromedp.Navigate(u+"/s/acme/reviews"), chromedp.WaitVisible(chromedp.CSS(reviewLink)))
	follow(t, ctx, "the local user opens the review", chromedp.Click(chromedp.CSS(reviewLink)), chromedp.WaitVisible(chromedp.CSS(`table.diff`)))
	if n := eval[int](t, ctx, buttons); n != 0 {
		t.Errorf("the local user sees %d review buttons", n)
	}

	// Tokens: the open inspector now asks for one.
	agentSecret, _, err := f.st.CreateToken(bg, satchel.TokenSpec{Agent: "research", Scope: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	opSecret, opTok, err := f.st.CreateToken(bg, satchel.TokenSpec{Operator: true})
	if err != nil {
		t.Fatal(err)
	}
	signIn := func(who, secret string) {
		t.Helper()
		do(t, ctx, who+" is asked to sign in", chromedp.Navigate(u+"/s/acme/reviews"), chromedp.WaitVisible(chromedp.CSS(`#token`)))
		do(t, ctx, who+" signs in",
			chromedp.SendKeys(chromedp.CSS(`#token`), secret),
			chromedp.Submit(chromedp.CSS(`#token`)),
			chromedp.WaitVisible(chromedp.CSS(reviewLink)))
		if p := eval[string](t, ctx, `location.pathname`); p != "/s/acme/reviews" {
			t.Errorf("%s signed in, at %s", who, p)
		}
	}

	// An agent's token: the review, no buttons.
	signIn("the agent", agentSecret)
	follow(t, ctx, "the agent opens the review", chromedp.Click(chromedp.CSS(reviewLink)), chromedp.WaitVisible(chromedp.CSS(`table.diff`)))
	if n := eval[int](t, ctx, buttons); n != 0 {
		t.Errorf("an agent's token sees %d review buttons", n)
	}
	follow(t, ctx, "the agent signs out", chromedp.Click(chromedp.CSS(`form[action="/signout"] button`)), chromedp.WaitVisible(chromedp.CSS(`#token`)))

	// The operator: open the review, read its diff, approve.
	signIn("the operator", opSecret)
	follow(t, ctx, "the operator opens the review", chromedp.Click(chromedp.CSS(reviewLink)), chromedp.WaitVisible(chromedp.CSS(`table.diff`)))
	if s := eval[string](t, ctx, `Array.from(document.querySelectorAll('table.diff tr.add td.code')).map(e => e.textContent).join('|')`); !strings.Contains(s, "3. write it up, reviewed") {
		t.Errorf("the review's diff adds %q", s)
	}
	if n := eval[int](t, ctx, buttons); n != 4 {
		t.Errorf("the operator sees %d of the approve and reject forms and their CSRF token fields, want 4", n)
	}
	follow(t, ctx, "approve",
		chromedp.Click(chromedp.CSS(`form[action$="/approve"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`p[role="status"]`)))
	if s := eval[string](t, ctx, `document.querySelector('p[role="status"]').textContent`); !strings.HasPrefix(s, "Review "+id+" approved: merged review-"+id+"@") {
		t.Errorf("after approving, the page says %q", s)
	}
	if s := eval[string](t, ctx, `document.querySelector('dl.meta').textContent`); !strings.Contains(s, "approved by operator token "+opTok.ID+" (inspector)") {
		t.Errorf("the approved review's record:\n%s", s)
	}
	if n := eval[int](t, ctx, buttons); n != 0 {
		t.Errorf("the approved review still shows %d buttons", n)
	}

	// The store: the review is approved, main's head has the change.
	r, err := f.st.Review(bg, id)
	if err != nil || r.State != satchel.ReviewApproved || r.Merge <= before {
		t.Errorf("the review after approval: %+v, %v (head was %d)", r, err, before)
	}
	main, _ = f.st.Workspace(bg, "acme", "main")
	if got, err := main.Read(bg, "notes/plan.md"); err != nil || !strings.Contains(got, "3. write it up, reviewed") {
		t.Errorf("main's head after the approval: %q, %v", got, err)
	}
	if h, err := main.Head(bg); err != nil || h.Seq != r.Merge {
		t.Errorf("main's head is %d (%v), the merge commit %d", h.Seq, err, r.Merge)
	}
	// The merge commit's page links from the review's record.
	follow(t, ctx, "the merge commit", chromedp.Click(chromedp.CSS(`dl.meta a[href^="/s/acme/t/main/c/"]`)), chromedp.WaitVisible(chromedp.CSS(`table.diff`)))
	if s := eval[string](t, ctx, `document.querySelector('table.diff').textContent`); !strings.Contains(s, "3. write it up, reviewed") {
		t.Errorf("the merge commit's diff:\n%s", s)
	}
}
