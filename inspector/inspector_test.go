package inspector

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/satchel-dev/satchel"
)

// Every page answers, with the security headers, and never carries the
// planted content unescaped.
func TestPagesEscapeAndSecure(t *testing.T) {
	f := newFixture(t)
	checkPages(t, f)
	// A checkpoint name cannot carry markup at all: it is refused.
	ws, _ := f.st.Workspace(context.Background(), "acme", "main")
	if _, err := ws.Checkpoint(context.Background(), evilScript); !errors.Is(err, satchel.ErrInvalidArgument) {
		t.Errorf("a checkpoint named %q: %v, want a refusal", evilScript, err)
	}
	// The planted text is shown, escaped.
	_, body := f.get(t, "/s/acme/t/main/files/notes/todo.md")
	if !strings.Contains(body, "&lt;script&gt;window.__pwned=1&lt;/script&gt;") {
		t.Errorf("the file's text is not shown escaped:\n%s", body)
	}
	_, body = f.get(t, "/s/acme/t/main/")
	if !strings.Contains(body, "&lt;script&gt;window.__pwned=4&lt;/script&gt;") {
		t.Errorf("the commit's agent is not shown escaped")
	}
}

// checkPages fetches every page of the fixture: each answers 200 with
// the security headers and without the planted content unescaped.
func checkPages(t *testing.T, f *fixture) {
	t.Helper()
	pages := []string{
		"/", "/s/acme/", "/s/acme/tree", "/s/acme/t/main/", "/s/acme/t/main/?before=3",
		"/s/acme/t/main/c/1", "/s/acme/t/main/c/4", "/s/acme/t/main/c/5",
		"/s/acme/t/experiment/c/2", "/s/acme/t/experiment/c/3",
		"/s/acme/t/main/compare?from=draft-1&to=head",
		"/s/acme/t/experiment/compare?from_thread=main&from=2&to=head",
		"/s/acme/t/experiment/compare?from_thread=main&from=2&to=head&path=notes/plan.md",
		"/s/acme/t/main/files/", "/s/acme/t/main/files/notes", "/s/acme/t/main/files/notes/todo.md",
		"/s/acme/t/main/files/src/main.go?at=draft-1",
		"/s/acme/t/experiment/files/evil", "/s/acme/t/experiment/files/" + escapePath(evilPath),
		"/s/acme/t/main/history/notes/plan.md",
		"/s/acme/t/main/search?glob=**/*.md", "/s/acme/t/main/search?grep=window", "/s/acme/t/experiment/search?grep=pwned&under=evil",
		"/s/acme/activity", "/s/acme/activity?hide=appends&agent=research", "/s/acme/search?q=pwned", "/s/acme/search?q=evil",
		"/s/acme/t/main/?agent=" + url.QueryEscape(evilAgent), "/s/acme/t/experiment/?path=evil/**",
		"/s/acme/docs/", "/s/acme/docs/notes/", "/s/acme/docs/notes/?where=score+%3E%3D+2", "/s/acme/docs/notes/doc?key=n1",
	}
	for _, p := range pages {
		resp, body := f.get(t, p)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d\n%s", p, resp.StatusCode, body)
			continue
		}
		if got := resp.Header.Get("Content-Security-Policy"); got != contentSecurityPolicy {
			t.Errorf("GET %s: CSP %q", p, got)
		}
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("GET %s: missing nosniff or frame denial", p)
		}
		for _, evil := range []string{"<script>window", "<img src=x", "<b>bold"} {
			if strings.Contains(body, evil) {
				t.Errorf("GET %s: planted %q is in the page unescaped", p, evil)
			}
		}
		if strings.Count(body, "<script") > 1 {
			t.Errorf("GET %s: more than the inspector's own script", p)
		}
	}
}

func TestErrorsAndNotFound(t *testing.T) {
	f := newFixture(t)
	cases := []struct {
		path string
		code int
		msg  string
	}{
		{"/s/acme/t/nope/", 404, "thread not found: nope"},
		{"/s/acme/t/main/c/99", 404, "commit not found: 99"},
		{"/s/acme/t/main/c/x", 400, "a commit is a sequence number"},
		{"/s/acme/t/main/files/missing.md", 404, "file not found: missing.md"},
		{"/s/acme/t/main/files/?at=nope", 404, "checkpoint not found: nope"},
		{"/s/acme/t/main/search?glob=a%5Bb", 400, "invalid pattern"},
		{"/s/acme/t/main/search?grep=%28", 400, "invalid regex"},
		{"/s/acme/docs/notes/?where=score+%3D%3D+1", 400, ""},
		{"/s/acme/docs/nope/", 404, ""},
		{"/s/acme/t/main/?before=-1", 400, "before must be a non-negative integer"},
		{"/s/Bad Scope/", 400, "invalid scope"},
		{"/nope", 404, "no such page"},
	}
	for _, c := range cases {
		resp, body := f.get(t, c.path)
		if resp.StatusCode != c.code || !strings.Contains(body, c.msg) {
			t.Errorf("GET %s: %d, want %d with %q\n%s", c.path, resp.StatusCode, c.code, c.msg, body)
		}
	}
	// The query box shows a refusal verbatim.
	ctx := context.Background()
	p, _ := satchel.LoadProjectFS(projectFS)
	col, _ := f.st.Collection(ctx, p, "acme", "notes")
	_, want := col.Query(ctx, satchel.QueryRequest{Where: "score == 1"})
	_, body := f.get(t, "/s/acme/docs/notes/?where=score+%3D%3D+1")
	if want == nil || !strings.Contains(body, htmlEscape(want.Error())) {
		t.Errorf("the query's refusal %v is not on the page:\n%s", want, body)
	}
}

func htmlEscape(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;")
	return r.Replace(s)
}

// The inspector only reads, and refuses what a page of another origin, or
// a rebound DNS name, would send.
func TestOriginHostAndMethods(t *testing.T) {
	f := newFixture(t)
	resp, _ := f.get(t, "/", "Host", "evil.example:80")
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a foreign Host on loopback: %d, want 403", resp.StatusCode)
	}
	resp, _ = f.get(t, "/s/acme/", "Origin", "http://evil.example")
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a foreign Origin: %d, want 403", resp.StatusCode)
	}
	resp, _ = f.get(t, "/s/acme/", "Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "cors")
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a cross-site fetch: %d, want 403", resp.StatusCode)
	}
	resp, _ = f.get(t, "/s/acme/", "Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "navigate")
	if resp.StatusCode != http.StatusOK {
		t.Errorf("a link followed from another site: %d, want 200", resp.StatusCode)
	}
	resp, _ = f.get(t, "/s/acme/", "Origin", f.srv.URL)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("our own Origin: %d", resp.StatusCode)
	}
	for _, m := range []string{"POST", "PUT", "DELETE", "PATCH"} {
		req, _ := http.NewRequest(m, f.srv.URL+"/s/acme/t/main/", nil)
		req.Header.Set("Origin", f.srv.URL)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s: %d, want 405", m, resp.StatusCode)
		}
	}
	// A sign-in posted from another origin, or with no Origin at all.
	for _, origin := range []string{"http://evil.example", ""} {
		req, _ := http.NewRequest("POST", f.srv.URL+"/signin", strings.NewReader("token=x"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("sign-in with Origin %q: %d, want 403", origin, resp.StatusCode)
		}
	}
}

// Once a token exists every request needs a session; agents see their
// scope, operators every scope; a revoked token ends its sessions.
func TestAccess(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	resp, _ := f.get(t, "/s/globex/")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("open on loopback with no token: %d", resp.StatusCode)
	}
	agent, tok, err := f.st.CreateToken(ctx, satchel.TokenSpec{Agent: "research", Scope: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	resp, _ = f.get(t, "/s/acme/t/main/?before=3")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/signin?next=%2Fs%2Facme%2Ft%2Fmain%2F%3Fbefore%3D3" {
		t.Errorf("no session once a token exists: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, body := f.get(t, "/signin")
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `name="token"`) {
		t.Errorf("the sign-in page: %d", resp.StatusCode)
	}
	if resp, c := f.signIn(t, "stk_wrong"); resp.StatusCode != http.StatusUnauthorized || c != nil {
		t.Errorf("a wrong token signs in: %d %v", resp.StatusCode, c)
	}
	resp, c := f.signIn(t, agent)
	if c == nil || resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in: %d, cookie %v", resp.StatusCode, c)
	}
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || strings.Contains(c.Value, agent) {
		t.Errorf("session cookie %+v: want HttpOnly, SameSite=Strict, not the secret", c)
	}
	cookie := c.Name + "=" + c.Value
	for path, code := range map[string]int{
		"/s/acme/t/main/": 200, "/s/acme/t/experiment/files/": 200, "/s/acme/docs/notes/doc?key=n1": 200,
		"/s/globex/": 404, "/s/globex/t/main/files/secret.md": 404, "/s/globex/tree": 404,
		"/s/acme/t/experiment/compare?from_thread=main&from=1&to=head": 200,
	} {
		if resp, _ := f.get(t, path, "Cookie", cookie); resp.StatusCode != code {
			t.Errorf("agent token, GET %s: %d, want %d", path, resp.StatusCode, code)
		}
	}
	if _, body := f.get(t, "/", "Cookie", cookie); strings.Contains(body, "globex") || !strings.Contains(body, "acme") {
		t.Errorf("the agent's scope list shows another scope:\n%s", body)
	}
	// A token bound to a thread sees only that thread.
	bound, _, _ := f.st.CreateToken(ctx, satchel.TokenSpec{Agent: "research", Scope: "acme", Thread: "experiment"})
	_, bc := f.signIn(t, bound)
	bcookie := bc.Name + "=" + bc.Value
	if resp, _ := f.get(t, "/s/acme/t/main/", "Cookie", bcookie); resp.StatusCode != 404 {
		t.Errorf("a thread-bound token reads another thread: %d", resp.StatusCode)
	}
	if resp, _ := f.get(t, "/s/acme/t/experiment/compare?from_thread=main&from=1&to=head", "Cookie", bcookie); resp.StatusCode != 404 {
		t.Errorf("a thread-bound token compares with another thread: %d", resp.StatusCode)
	}

	op, _, _ := f.st.CreateToken(ctx, satchel.TokenSpec{Operator: true})
	_, oc := f.signIn(t, op)
	if resp, _ := f.get(t, "/s/globex/t/main/files/secret.md", "Cookie", oc.Name+"="+oc.Value); resp.StatusCode != 200 {
		t.Errorf("an operator reads another scope: %d", resp.StatusCode)
	}

	if err := f.st.RevokeToken(ctx, tok.ID); err != nil {
		t.Fatal(err)
	}
	if resp, _ := f.get(t, "/s/acme/", "Cookie", cookie); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("a revoked token's session: %d, want a redirect to sign in", resp.StatusCode)
	}
}

func TestCheckExposure(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if err := CheckExposure(ctx, f.st, "127.0.0.1:0"); err != nil {
		t.Errorf("loopback: %v", err)
	}
	err := CheckExposure(ctx, f.st, "0.0.0.0:0")
	if err == nil || !strings.Contains(err.Error(), "refusing to listen on 0.0.0.0:0") {
		t.Errorf("a non-loopback address with no token: %v", err)
	}
	if _, _, err := f.st.CreateToken(ctx, satchel.TokenSpec{Operator: true}); err != nil {
		t.Fatal(err)
	}
	if err := CheckExposure(ctx, f.st, "0.0.0.0:0"); err != nil {
		t.Errorf("with a token: %v", err)
	}
}

// Long lists come a page at a time, and the pages together hold every
// item once.
func TestPaging(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	ws, _ := f.st.Workspace(ctx, "acme", "long")
	n := commitsPerPage*2 + 7
	for i := 0; i < n; i++ {
		if err := ws.Write(ctx, fmt.Sprintf("d%03d/f.md", i%30), fmt.Sprint(i)); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	next, pages := "/s/acme/t/long/", 0
	for next != "" {
		pages++
		_, body := f.get(t, next)
		for _, line := range strings.Split(body, "\n") {
			if i := strings.Index(line, `<tr data-seq="`); i >= 0 {
				seq := line[i+len(`<tr data-seq="`):]
				seq = seq[:strings.IndexByte(seq, '"')]
				if seen[seq] {
					t.Errorf("commit %s on two pages", seq)
				}
				seen[seq] = true
			}
		}
		next = ""
		if i := strings.Index(body, `rel="next"`); i >= 0 {
			href := body[strings.LastIndex(body[:i], `href="`)+6:]
			next = strings.ReplaceAll(href[:strings.IndexByte(href, '"')], "&amp;", "&")
		}
	}
	if len(seen) != n || pages != 3 {
		t.Errorf("%d commits on %d pages, want %d on 3", len(seen), pages, n)
	}
}

// listDir lists a directory's children a page at a time, a subdirectory
// once, in path order, also when a file's name sorts between a directory
// and its contents.
func TestListDir(t *testing.T) {
	ctx := context.Background()
	st, _ := satchel.Open(ctx, "memory:")
	defer st.Close()
	ws, _ := st.Workspace(ctx, "s", "t")
	for _, p := range []string{"a/x.md", "a!", "a/y/z.md", "b.md", "c/d/e.md", "c/f.md", "c!d", "e", "e!f", "top/deep/er/x"} {
		if err := ws.Write(ctx, p, "x"); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 150; i++ {
		if err := ws.Write(ctx, fmt.Sprintf("many/f%03d", i), "x"); err != nil {
			t.Fatal(err)
		}
	}
	snap, _ := ws.At(ctx, "head")
	var names []string
	after := ""
	for pages := 0; ; pages++ {
		items, next, err := listDir(ctx, snap, "", after, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			name := it.Name
			if it.Dir {
				name += "/"
			}
			names = append(names, name)
		}
		if next == "" {
			break
		}
		if pages > 20 {
			t.Fatal("no end")
		}
		after = next
	}
	if got, want := strings.Join(names, " "), "a! a/ b.md c!d c/ e e!f many/ top/"; got != want {
		t.Errorf("children: %s, want %s", got, want)
	}
	items, next, err := listDir(ctx, snap, "many", "", entriesPerPage)
	if err != nil || len(items) != 150 || next != "" {
		t.Errorf("many: %d items, next %q, %v", len(items), next, err)
	}
	items, next, _ = listDir(ctx, snap, "many", "", 100)
	rest, next2, _ := listDir(ctx, snap, "many", next, 100)
	if len(items) != 100 || next != "f099" || len(rest) != 50 || next2 != "" || rest[0].Name != "f100" {
		t.Errorf("many in pages of 100: %d then %d (next %q, %q)", len(items), len(rest), next, next2)
	}
}

// A live stream reports a commit made after it opened, and ends (its
// handler returns) when the client goes away.
func TestLiveStreamEnds(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ws, _ := f.st.Workspace(ctx, "acme", "main")
	head, _ := ws.At(ctx, "head")
	req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("%s/s/acme/t/main/events?after=%d", f.srv.URL, head.Commit().Seq), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Scan() // the opening comment: the stream is open
	if err := ws.Write(ctx, "live.md", "new"); err != nil {
		t.Fatal(err)
	}
	var event, data string
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "event: "); ok {
			event = v
		}
		if v, ok := strings.CutPrefix(line, "data: "); ok {
			data = v
			break
		}
	}
	if event != "commit" || !strings.Contains(data, `"summary":"write live.md"`) || !strings.Contains(data, fmt.Sprintf(`"seq":%d`, head.Commit().Seq+1)) {
		t.Errorf("event %q data %q", event, data)
	}
	cancel()
	resp.Body.Close()
	done := make(chan struct{})
	go func() { f.in.streams.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the stream's handler is still running after the client left")
	}
	// The handler's deferred Done runs a moment before its goroutine
	// returns: wait for the goroutine to be gone, not for a set time.
	buf := make([]byte, 1<<20)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		stacks := string(buf[:runtime.Stack(buf, true)])
		if !strings.Contains(stacks, "(*Inspector).events") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a goroutine of the stream is left:\n%s", stacks)
		}
	}
}

// A fork's first commit changes nothing against the commit it forked
// from, and the page says what it compares with.
func TestForkCommitAgainstOrigin(t *testing.T) {
	f := newFixture(t)
	_, body := f.get(t, "/s/acme/t/experiment/c/1")
	if !strings.Contains(body, `main@2</a>, the commit it forked from`) || !strings.Contains(body, "0 files changed") {
		t.Errorf("the fork's first commit:\n%s", body)
	}
}

// Mounted under a base path (serve --http --ui), every link, the cookie
// and the redirects keep it.
func TestMountedUnderBase(t *testing.T) {
	f := newFixture(t)
	in, err := New(Config{Store: f.st, Base: "/ui/"})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/ui/", in.Handler())
	srv := httptest.NewServer(mux)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/ui/s/acme/t/main/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	body := string(b)
	if resp.StatusCode != 200 || !strings.Contains(body, `href="/ui/static/style.css"`) || !strings.Contains(body, `href="/ui/s/acme/t/main/c/5"`) ||
		!strings.Contains(body, `content="/ui/s/acme/t/main/events?after=5"`) || strings.Contains(body, `href="/s/`) {
		t.Errorf("links under /ui/: %d\n%s", resp.StatusCode, body)
	}
	if resp, err := http.Get(srv.URL + "/ui/static/live.js"); err != nil || resp.StatusCode != 200 {
		t.Errorf("the script under /ui/: %v %v", resp, err)
	}
	if _, _, err := f.st.CreateToken(context.Background(), satchel.TokenSpec{Operator: true}); err != nil {
		t.Fatal(err)
	}
	resp, err = noRedirect.Get(srv.URL + "/ui/s/acme/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || loc != "/ui/signin?next=%2Fs%2Facme%2F" {
		t.Errorf("sign-in redirect under /ui/: %d %q", resp.StatusCode, loc)
	}
}

// A long diff comes in pages of rows, and the pages hold every row once.
func TestDiffRowPages(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	ws, _ := f.st.Workspace(ctx, "acme", "big-diff")
	var a, b strings.Builder
	n := maxDiffRows + maxDiffRows/2
	for i := 0; i < n; i++ {
		fmt.Fprintf(&a, "old %d\n", i)
		fmt.Fprintf(&b, "new %d\n", i)
	}
	_ = ws.Write(ctx, "f.txt", a.String())
	_ = ws.Write(ctx, "f.txt", b.String())
	next, total, pages := "/s/acme/t/big-diff/c/2", 0, 0
	for next != "" {
		pages++
		_, body := f.get(t, next)
		rows := strings.Count(body, `<tr class="del">`) + strings.Count(body, `<tr class="add">`) + strings.Count(body, `<tr class="hunk">`)
		if rows > maxDiffRows {
			t.Errorf("page %d has %d rows", pages, rows)
		}
		total += rows
		next = ""
		if i := strings.Index(body, "The next rows of this diff"); i >= 0 {
			href := body[strings.LastIndex(body[:i], `href="`)+6:]
			next = strings.ReplaceAll(href[:strings.IndexByte(href, '"')], "&amp;", "&")
		}
		if pages > 5 {
			t.Fatal("no end")
		}
	}
	if want := 2*n + 1; total != want || pages != 4 {
		t.Errorf("%d rows in %d pages, want %d (every del and add row and the hunk header) in 4", total, pages, want)
	}
}

// Revoking a token ends the live streams its sessions opened.
func TestLiveStreamEndsOnRevocation(t *testing.T) {
	f := newFixture(t)
	f.in.recheck = 0 // check at every poll
	ctx := context.Background()
	secret, tok, err := f.st.CreateToken(ctx, satchel.TokenSpec{Agent: "research", Scope: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	_, c := f.signIn(t, secret)
	req, _ := http.NewRequest("GET", f.srv.URL+"/s/acme/t/main/events?after=0", nil)
	req.AddCookie(c)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() && !strings.HasPrefix(sc.Text(), "event: commit") {
	}
	if err := f.st.RevokeToken(ctx, tok.ID); err != nil {
		t.Fatal(err)
	}
	last := ""
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "event: ") {
			last = sc.Text()
		}
	}
	// The stream ended (the scanner saw its end) with a signed-out event.
	if last != "event: signed-out" {
		t.Errorf("the stream's last event: %q, want signed-out", last)
	}
}

// A grep that reaches its deadline says so above the matches it found.
func TestSearchSaysGrepStopped(t *testing.T) {
	f := newFixture(t)
	_, body := f.get(t, "/s/acme/t/main/search?grep=window")
	if strings.Contains(body, "grep stopped") {
		t.Fatalf("a grep within its deadline says it stopped:\n%s", body)
	}
	ws, err := f.st.Workspace(t.Context(), "acme", "main")
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.Write(t.Context(), "big.txt", strings.Repeat("x", 1<<16)+"\n"); err != nil {
		t.Fatal(err)
	}
	f.in.cfg.GrepTimeout = time.Nanosecond
	resp, body := f.get(t, "/s/acme/t/main/search?grep=.%7B100%7D.%7B100%7Dz")
	if resp.StatusCode != 200 || !strings.Contains(body, "grep stopped after 1ns") {
		t.Fatalf("a grep past its deadline: status %d, no notice that it stopped:\n%s", resp.StatusCode, body)
	}
}
