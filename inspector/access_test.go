package inspector

import (
	"context"
	"io"
	"log/slog"
	"maps"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/satchel-dev/satchel"
)

// TestAgentViewFileRules: an agent's token sees in the inspector what its
// rules let it read: a hidden file is not found, and no listing, search,
// commit or history page names it.
func TestAgentViewFileRules(t *testing.T) {
	f := newFixture(t)
	rules, err := satchel.ParseFileRules("notes/todo.md=none,**=read")
	if err != nil {
		t.Fatal(err)
	}
	secret, _, err := f.st.CreateToken(context.Background(), satchel.TokenSpec{Agent: "research", Scope: "acme", Files: rules})
	if err != nil {
		t.Fatal(err)
	}
	_, c := f.signIn(t, secret)
	if c == nil {
		t.Fatal("no session")
	}
	cookie := c.Name + "=" + c.Value
	// A review that changes the hidden file and another.
	rw, err := f.st.Workspace(context.Background(), "acme", "main", satchel.ForReview("s1"))
	if err != nil {
		t.Fatal(err)
	}
	if err := rw.Write(context.Background(), "notes/todo.md", "- reviewed secret\n"); err != nil {
		t.Fatal(err)
	}
	if err := rw.Write(context.Background(), "notes/plan.md", "# Reviewed plan\n"); err != nil {
		t.Fatal(err)
	}
	rs, _ := f.st.ListReviews(context.Background(), satchel.ReviewQuery{Scope: "acme"})
	if len(rs) != 1 {
		t.Fatalf("%d reviews", len(rs))
	}
	if resp, body := f.get(t, "/s/acme/reviews/"+rs[0].ID, "Cookie", cookie); resp.StatusCode != 200 || strings.Contains(body, "todo.md") || strings.Contains(body, "reviewed secret") || !strings.Contains(body, "Reviewed plan") {
		t.Errorf("the review page for a token with file rules: %d\n%s", resp.StatusCode, body)
	}
	// The reviews list counts the files the token sees: one of two.
	if resp, body := f.get(t, "/s/acme/reviews", "Cookie", cookie); resp.StatusCode != 200 || !strings.Contains(body, `<td class="num">1</td>`) || strings.Contains(body, `<td class="num">2</td>`) {
		t.Errorf("the reviews list for a token with file rules: %d\n%s", resp.StatusCode, body)
	}
	// The history of the hidden file, in its thread or walked from a
	// fork, lists no commit.
	for _, p := range []string{"/s/acme/t/main/history/notes/todo.md", "/s/acme/t/experiment/history/notes/todo.md?thread=main"} {
		if resp, body := f.get(t, p, "Cookie", cookie); resp.StatusCode == 200 && strings.Contains(body, "/c/4") {
			t.Errorf("%s lists the commit of the hidden file", p)
		}
	}
	resp, body := f.get(t, "/s/acme/t/main/files/notes/todo.md", "Cookie", cookie)
	if resp.StatusCode != 404 || !strings.Contains(body, "file not found: notes/todo.md") {
		t.Errorf("the hidden file: %d\n%s", resp.StatusCode, body)
	}
	for _, page := range []string{"/s/acme/t/main/files/notes/", "/s/acme/t/main/search?glob=**/*.md", "/s/acme/t/main/search?grep=-",
		"/s/acme/t/main/", "/s/acme/t/main/compare?from=draft-1&to=head", "/s/acme/search?q=todo", "/s/acme/search?q=pwned", "/s/acme/activity", "/s/acme/t/main/?path=notes/**"} {
		resp, body := f.get(t, page, "Cookie", cookie)
		if resp.StatusCode != 200 {
			t.Errorf("%s: %d", page, resp.StatusCode)
		}
		if strings.Contains(body, "todo.md") {
			t.Errorf("%s names the hidden file", page)
		}
	}
	// The commit that wrote only the hidden file is left out of the
	// history, so its page is not found.
	if resp, body := f.get(t, "/s/acme/t/main/c/4", "Cookie", cookie); resp.StatusCode == 200 || strings.Contains(body, "todo.md") {
		t.Errorf("the commit of the hidden file: %d", resp.StatusCode)
	}
	// Without rules, the same pages name it.
	open, _, _ := f.st.CreateToken(context.Background(), satchel.TokenSpec{Agent: "research", Scope: "acme"})
	_, oc := f.signIn(t, open)
	if _, body := f.get(t, "/s/acme/t/main/files/notes/", "Cookie", oc.Name+"="+oc.Value); !strings.Contains(body, "todo.md") {
		t.Errorf("an agent without rules does not see notes/todo.md")
	}
	if _, body := f.get(t, "/s/acme/reviews", "Cookie", oc.Name+"="+oc.Value); !strings.Contains(body, `<td class="num">2</td>`) {
		t.Errorf("the reviews list for an agent without rules does not count both files:\n%s", body)
	}
}

// TestAgentViewHiddenReviews: to an agent's token, a review that changes
// only files its rules hide is as a hidden file is: not listed, and its
// page not found; a rejection's reason, which may name hidden files, is
// not shown to it. An operator sees both whole.
func TestAgentViewHiddenReviews(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	rules, err := satchel.ParseFileRules("notes/todo.md=none,**=read")
	if err != nil {
		t.Fatal(err)
	}
	secret, _, err := f.st.CreateToken(ctx, satchel.TokenSpec{Agent: "research", Scope: "acme", Files: rules})
	if err != nil {
		t.Fatal(err)
	}
	_, c := f.signIn(t, secret)
	cookie := c.Name + "=" + c.Value
	opSecret, _, _ := f.st.CreateToken(ctx, satchel.TokenSpec{Operator: true})
	_, oc := f.signIn(t, opSecret)
	ocookie := oc.Name + "=" + oc.Value
	review := func(key, path string) string {
		t.Helper()
		rw, err := f.st.Workspace(ctx, "acme", "main", satchel.ForReview(key))
		if err != nil {
			t.Fatal(err)
		}
		if err := rw.Write(ctx, path, "- reviewed "+key+"\n"); err != nil {
			t.Fatal(err)
		}
		n := rw.Notices()
		return strings.TrimPrefix(n[len(n)-1], "your changes wait for review ")
	}
	hidden := review("hidden", "notes/todo.md")
	seen := review("seen", "notes/plan.md")
	if _, err := f.st.RejectReview(ctx, seen, "merge it into notes/todo.md instead", satchel.Actor{Via: "cli:review reject"}); err != nil {
		t.Fatal(err)
	}

	for _, page := range []string{"/s/acme/reviews", "/s/acme/reviews?state=all"} {
		resp, body := f.get(t, page, "Cookie", cookie)
		if resp.StatusCode != 200 || strings.Contains(body, hidden) {
			t.Errorf("%s lists the review of the hidden file for the agent: %d\n%s", page, resp.StatusCode, body)
		}
	}
	if _, body := f.get(t, "/s/acme/reviews?state=all", "Cookie", cookie); !strings.Contains(body, seen) {
		t.Errorf("the agent's reviews do not list %s", seen)
	}
	if resp, body := f.get(t, "/s/acme/reviews/"+hidden, "Cookie", cookie); resp.StatusCode != 404 || strings.Contains(body, "todo") {
		t.Errorf("the review of the hidden file for the agent: %d\n%s", resp.StatusCode, body)
	}
	resp, body := f.get(t, "/s/acme/reviews/"+seen, "Cookie", cookie)
	if resp.StatusCode != 200 || strings.Contains(body, "todo") || !strings.Contains(body, satchel.ReasonHidden) {
		t.Errorf("the rejected review for the agent: %d\n%s", resp.StatusCode, body)
	}
	// The review thread's history shows the rejection without its reason.
	if _, body := f.get(t, "/s/acme/t/review-"+seen+"/", "Cookie", cookie); strings.Contains(body, "todo") || !strings.Contains(body, "review "+seen+" rejected") {
		t.Errorf("the rejected review's thread for the agent:\n%s", body)
	}

	if _, body := f.get(t, "/s/acme/reviews?state=all", "Cookie", ocookie); !strings.Contains(body, hidden) || !strings.Contains(body, seen) {
		t.Errorf("the operator's reviews do not list both:\n%s", body)
	}
	if resp, body := f.get(t, "/s/acme/reviews/"+hidden, "Cookie", ocookie); resp.StatusCode != 200 || !strings.Contains(body, "todo.md") {
		t.Errorf("the review of the hidden file for the operator: %d", resp.StatusCode)
	}
	if _, body := f.get(t, "/s/acme/reviews/"+seen, "Cookie", ocookie); !strings.Contains(body, "merge it into notes/todo.md instead") {
		t.Errorf("the rejected review for the operator shows no reason:\n%s", body)
	}
}

// TestAgentViewStoreAccess: an agent's token sees in the activity the
// document changes of the stores its agent may read, and no key of
// another store; an operator sees them all.
func TestAgentViewStoreAccess(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	fsys := fstest.MapFS{"stores/ledger.json": {Data: []byte(`{"name": "ledger", "key": "{id}", "schema": {"id": {"type": "string"}}}`)}}
	maps.Copy(fsys, projectFS)
	p, err := satchel.LoadProjectFS(fsys)
	if err != nil {
		t.Fatal(err)
	}
	col, err := f.st.Collection(ctx, p, "acme", "ledger")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := col.Set(ctx, map[string]any{"id": "payroll-2026"}); err != nil {
		t.Fatal(err)
	}
	in, err := New(Config{Store: f.st, Project: p, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	g := &fixture{st: f.st, in: in, srv: httptest.NewServer(in.Handler())}
	t.Cleanup(g.srv.Close)
	signIn := func(spec satchel.TokenSpec) string {
		secret, _, err := f.st.CreateToken(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		_, c := g.signIn(t, secret)
		if c == nil {
			t.Fatal("no session")
		}
		return c.Name + "=" + c.Value
	}
	agent := signIn(satchel.TokenSpec{Agent: "research", Scope: "acme"})
	for _, page := range []string{"/s/acme/activity", "/s/acme/activity?agent=-", "/s/acme/activity?hide=appends", "/s/acme/docs/ledger/doc?key=payroll-2026", "/s/acme/docs/"} {
		resp, body := g.get(t, page, "Cookie", agent)
		if strings.Contains(body, "payroll-2026") || strings.Contains(body, "/docs/ledger") {
			t.Errorf("%s (%d) shows the ledger's document to an agent that may not read it", page, resp.StatusCode)
		}
	}
	if _, body := g.get(t, "/s/acme/activity", "Cookie", agent); !strings.Contains(body, "n2") {
		t.Errorf("the activity does not show the agent the notes it may read")
	}
	operator := signIn(satchel.TokenSpec{Operator: true})
	if _, body := g.get(t, "/s/acme/activity", "Cookie", operator); !strings.Contains(body, "payroll-2026") {
		t.Errorf("the activity does not show an operator the ledger's document")
	}
	// The scopes page counts the documents of the stores the viewer may
	// read: the agent's count leaves the ledger's document out.
	docs := func(cookie string) int {
		t.Helper()
		_, body := g.get(t, "/", "Cookie", cookie)
		m := regexp.MustCompile(`/s/acme/">acme</a>[^<]*, (\d+) documents?`).FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("the scopes page counts no documents of acme:\n%s", body)
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	all, seen := docs(operator), docs(agent)
	if seen != all-1 || seen == 0 {
		t.Errorf("the scopes page counts %d documents of acme for the agent, %d for an operator; want the ledger's one left out", seen, all)
	}
}
