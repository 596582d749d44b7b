package inspector

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel"
)

// post posts a form with an optional session cookie, without following
// redirects.
func (f *fixture) post(t testing.TB, path string, form url.Values, cookie string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", f.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", f.srv.URL)
	if cookie != "" {
		req.Header.Set("Cookie", cookie)
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp, b.String()
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// TestReviews: the review pages list a scope's reviews and show each
// one's diff; an operator's session approves and rejects with its CSRF
// token; an agent, a missing or wrong CSRF token, and a foreign origin
// cannot.
func TestReviews(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	agent := satchel.Actor{Agent: "research", Credential: "0123456789abcdef", Via: "mcp:edit_file"}
	rw, err := f.st.Workspace(ctx, "acme", "main", satchel.ForReview("s1"), satchel.WorkspaceActor(agent))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rw.StrReplace(ctx, "notes/plan.md", "1. read", "1. read <b>twice</b>", false); err != nil {
		t.Fatal(err)
	}
	rs, _ := f.st.ListReviews(ctx, satchel.ReviewQuery{Scope: "acme"})
	if len(rs) != 1 {
		t.Fatalf("%d reviews", len(rs))
	}
	id := rs[0].ID

	// Open (no token yet): the local user reads, and has no buttons.
	resp, body := f.get(t, "/s/acme/reviews")
	if resp.StatusCode != 200 || !strings.Contains(body, `href="/s/acme/reviews/`+id+`"`) || !strings.Contains(body, "<td>research</td>") {
		t.Errorf("reviews page: %d\n%s", resp.StatusCode, body)
	}
	if _, body := f.get(t, "/s/acme/"); !strings.Contains(body, `href="/s/acme/reviews"`) {
		t.Errorf("the threads page does not link the reviews")
	}
	resp, body = f.get(t, "/s/acme/reviews/"+id)
	if resp.StatusCode != 200 || !strings.Contains(body, "&lt;b&gt;twice&lt;/b&gt;") || strings.Contains(body, `name="csrf"`) {
		t.Errorf("review page for the local user: %d\n%s", resp.StatusCode, body)
	}
	if resp, _ := f.get(t, "/s/globex/reviews/"+id); resp.StatusCode != 404 {
		t.Errorf("a review under another scope: %d", resp.StatusCode)
	}
	if resp, _ := f.post(t, "/s/acme/reviews/"+id+"/approve", url.Values{}, ""); resp.StatusCode != http.StatusForbidden {
		t.Errorf("the local user approves: %d", resp.StatusCode)
	}

	// An agent's session sees its scope's reviews, and cannot decide.
	agentSecret, _, _ := f.st.CreateToken(ctx, satchel.TokenSpec{Agent: "research", Scope: "acme"})
	_, ac := f.signIn(t, agentSecret)
	acookie := ac.Name + "=" + ac.Value
	if resp, body := f.get(t, "/s/acme/reviews/"+id, "Cookie", acookie); resp.StatusCode != 200 || strings.Contains(body, `name="csrf"`) {
		t.Errorf("review page for an agent: %d", resp.StatusCode)
	}
	if resp, _ := f.post(t, "/s/acme/reviews/"+id+"/approve", url.Values{"csrf": {csrfToken(ac.Value)}}, acookie); resp.StatusCode != http.StatusForbidden {
		t.Errorf("an agent approves: %d", resp.StatusCode)
	}

	// An operator's session: buttons with the session's CSRF token.
	opSecret, opTok, _ := f.st.CreateToken(ctx, satchel.TokenSpec{Operator: true})
	_, oc := f.signIn(t, opSecret)
	ocookie := oc.Name + "=" + oc.Value
	_, body = f.get(t, "/s/acme/reviews/"+id, "Cookie", ocookie)
	m := csrfField.FindStringSubmatch(body)
	if m == nil || m[1] != csrfToken(oc.Value) {
		t.Fatalf("the operator's review page has no CSRF token:\n%s", body)
	}
	for _, bad := range []string{"", "wrong", csrfToken(ac.Value)} {
		if resp, _ := f.post(t, "/s/acme/reviews/"+id+"/approve", url.Values{"csrf": {bad}}, ocookie); resp.StatusCode != http.StatusForbidden {
			t.Errorf("approve with CSRF token %q: %d", bad, resp.StatusCode)
		}
	}
	req, _ := http.NewRequest("POST", f.srv.URL+"/s/acme/reviews/"+id+"/approve", strings.NewReader("csrf="+m[1]))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "http://evil.example")
	req.Header.Set("Cookie", ocookie)
	if resp, err := noRedirect.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("approve from a foreign origin: %v %v", resp, err)
	}
	if r, _ := f.st.Review(ctx, id); r.State != satchel.ReviewOpen {
		t.Fatalf("the review was decided by a refused request: %+v", r)
	}
	resp, _ = f.post(t, "/s/acme/reviews/"+id+"/approve", url.Values{"csrf": {m[1]}}, ocookie)
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/s/acme/reviews/"+id+"?done=approved") {
		t.Fatalf("approve: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	ws, _ := f.st.Workspace(ctx, "acme", "main")
	if got, _ := ws.Read(ctx, "notes/plan.md"); !strings.Contains(got, "1. read <b>twice</b>") {
		t.Errorf("approved, the thread has %q", got)
	}
	r, _ := f.st.Review(ctx, id)
	if r.State != satchel.ReviewApproved || r.DecidedBy != "operator token "+opTok.ID+" (inspector)" {
		t.Errorf("approved review %+v", r)
	}
	_, body = f.get(t, resp.Header.Get("Location"), "Cookie", ocookie)
	if !strings.Contains(body, "Review "+id+" approved: merged review-"+id+"@") || strings.Contains(body, `name="csrf"`) {
		t.Errorf("after the approval:\n%s", body)
	}
	if resp, body := f.post(t, "/s/acme/reviews/"+id+"/reject", url.Values{"csrf": {m[1]}}, ocookie); resp.StatusCode != http.StatusConflict || !strings.Contains(body, "was approved already") {
		t.Errorf("reject after approval: %d\n%s", resp.StatusCode, body)
	}

	// Reject, with a reason.
	if err := rw.Write(ctx, "extra.md", "x\n"); err != nil {
		t.Fatal(err)
	}
	rs, _ = f.st.ListReviews(ctx, satchel.ReviewQuery{Scope: "acme", State: satchel.ReviewOpen})
	id2 := rs[0].ID
	resp, _ = f.post(t, "/s/acme/reviews/"+id2+"/reject", url.Values{"csrf": {m[1]}, "reason": {"not now"}}, ocookie)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("reject: %d", resp.StatusCode)
	}
	if r, _ := f.st.Review(ctx, id2); r.State != satchel.ReviewRejected || r.Reason != "not now" {
		t.Errorf("rejected review %+v", r)
	}
	if _, body := f.get(t, "/s/acme/reviews?state=all", "Cookie", ocookie); !strings.Contains(body, "<td>rejected</td>") || !strings.Contains(body, "<td>approved</td>") {
		t.Errorf("every review:\n%s", body)
	}
}
