package inspector

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel"
)

// TestAttackNewPages: the activity, search, blame, history, raw,
// snapshot and spill pages escape what agents stored, keep the viewer in
// its scope and thread, and answer an oversized or hostile query with a
// refusal.
func TestAttackNewPages(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	ws, _ := f.st.Workspace(ctx, "acme", "experiment")
	if err := ws.SaveSpill(ctx, "spill/"+strings.ReplaceAll(evilPath, "/", "_"), evilScript); err != nil {
		t.Fatal(err)
	}
	pages := []string{
		"/s/acme/activity", "/s/acme/activity?agent=" + escapePath(evilAgent), "/s/acme/activity?path=evil/**",
		"/s/acme/search?q=" + escapePath(evilScript), "/s/acme/search?q=pwned",
		"/s/acme/t/experiment/blame/" + escapePath(evilPath), "/s/acme/t/experiment/history/" + escapePath(evilPath),
		"/s/acme/t/main/blame/notes/todo.md", "/s/acme/t/experiment/spills/",
		"/s/acme/t/experiment/spills/spill/" + escapePath(strings.ReplaceAll(evilPath, "/", "_")),
		"/s/acme/t/experiment/files/" + escapePath(evilPath), "/s/acme/t/main/c/5?view=split",
		"/s/acme/docs/notes/?fields=text,score", "/s/acme/docs/notes/?fields=" + escapePath(evilScript),
	}
	for _, p := range pages {
		resp, body := f.get(t, p)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d\n%s", p, resp.StatusCode, body)
			continue
		}
		if resp.Header.Get("Content-Security-Policy") != contentSecurityPolicy {
			t.Errorf("GET %s: CSP %q", p, resp.Header.Get("Content-Security-Policy"))
		}
		for _, evil := range []string{"<script>window", "<img src=x", "<b>bold"} {
			if strings.Contains(body, evil) {
				t.Errorf("GET %s: planted %q is in the page unescaped", p, evil)
			}
		}
	}
	// A huge query is refused, not run.
	for _, p := range []string{"/s/acme/search?q=" + strings.Repeat("a", 3000), "/s/acme/activity?path=" + strings.Repeat("*", 2000)} {
		if resp, _ := f.get(t, p); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("GET %s…: %d, want 400", p[:40], resp.StatusCode)
		}
	}

	// Access: an agent's token sees its scope; a thread-bound one its thread.
	agent, _, _ := f.st.CreateToken(ctx, satchel.TokenSpec{Agent: "research", Scope: "acme"})
	_, c := f.signIn(t, agent)
	cookie := c.Name + "=" + c.Value
	bound, _, _ := f.st.CreateToken(ctx, satchel.TokenSpec{Agent: "research", Scope: "acme", Thread: "experiment"})
	_, bc := f.signIn(t, bound)
	bcookie := bc.Name + "=" + bc.Value
	for _, tc := range []struct {
		cookie, path string
		code         int
	}{
		{cookie, "/s/globex/activity", 404}, {cookie, "/s/globex/search?q=globex", 404},
		{cookie, "/s/globex/t/main/raw/secret.md", 404}, {cookie, "/s/globex/t/main/snapshot.tar.gz", 404},
		{cookie, "/s/globex/t/main/blame/secret.md", 404}, {cookie, "/s/globex/t/main/spills/", 404},
		{cookie, "/s/acme/t/main/raw/notes/plan.md", 200},
		{bcookie, "/s/acme/t/main/raw/notes/plan.md", 404}, {bcookie, "/s/acme/t/main/snapshot.tar.gz", 404},
		{bcookie, "/s/acme/activity?thread=main", 404}, {bcookie, "/s/acme/t/experiment/history/src/main.go", 200},
		{bcookie, "/s/acme/t/experiment/history/src/main.go?thread=main", 404},
	} {
		if resp, body := f.get(t, tc.path, "Cookie", tc.cookie); resp.StatusCode != tc.code {
			t.Errorf("GET %s: %d, want %d\n%s", tc.path, resp.StatusCode, tc.code, body)
		}
	}
	// A thread-bound viewer's pages say nothing of the other threads.
	for _, p := range []string{"/s/acme/activity", "/s/acme/search?q=plan", "/s/acme/t/experiment/blame/src/main.go", "/s/acme/t/experiment/history/src/main.go"} {
		_, body := f.get(t, p, "Cookie", bcookie)
		if strings.Contains(body, "/t/main/") {
			t.Errorf("GET %s as a thread-bound token shows thread main", p)
		}
	}
}
