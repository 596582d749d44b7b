package inspector

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/sqlitetest"
)

// Hostile content planted in the fixture: if any of it ran, it would set
// window.__pwned (and with CSP it could not, but escaping must hold
// without CSP too: the tests look for it unescaped in the HTML).
const (
	evilScript  = `<script>window.__pwned=1</script>`
	evilImg     = `<img src=x onerror="window.__pwned=2">`
	evilPath    = `evil/<img src=x onerror=window.__pwned=3>.md`
	evilAgent   = `<script>window.__pwned=4</script>`
	evilDocNote = `<script>window.__pwned=5</script><b>bold</b>`
)

// TestMain lets the browser test run this binary as another process that
// commits to a SQLite file: SATCHEL_INSPECTOR_WRITE=db|scope|thread|path|content.
func TestMain(m *testing.M) {
	if spec := os.Getenv("SATCHEL_INSPECTOR_WRITE"); spec != "" {
		f := strings.SplitN(spec, "|", 5)
		ctx := context.Background()
		st, err := satchel.Open(ctx, f[0])
		if err == nil {
			var ws *satchel.Workspace
			if ws, err = st.Workspace(ctx, f[1], f[2], satchel.WorkspaceActor(satchel.Actor{Agent: "other-process", Via: "test:write"})); err == nil {
				err = ws.Write(ctx, f[3], f[4])
			}
			_ = st.Close()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

var projectFS = fstest.MapFS{
	"stores/notes.json":          {Data: []byte(`{"name": "notes", "key": "{id}", "schema": {"id": {"type": "string"}, "text": {"type": "string"}, "score": {"type": "number"}}, "history": {"versions": 5}}`)},
	"agents/research/agent.json": {Data: []byte(`{"stores": {"notes": "read"}}`)},
}

// fixture is a store with two scopes, a fork, checkpoints, hostile
// content and a collection, and an inspector over it.
type fixture struct {
	st  *satchel.Store
	in  *Inspector
	srv *httptest.Server
	db  string
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	return newFixtureAt(t, sqlitetest.NewFileAt(t, filepath.Join(t.TempDir(), "inspector.db")))
}

// newFixtureAt is newFixture on the database db (a SQLite path or a
// postgres:// URL).
func newFixtureAt(t testing.TB, db string) *fixture {
	t.Helper()
	ctx := context.Background()
	st, err := satchel.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	ws, err := st.Workspace(ctx, "acme", "main", satchel.WorkspaceActor(satchel.Actor{Agent: "research", Via: "mcp:write_file"}))
	must(err)
	must(ws.Write(ctx, "notes/plan.md", "# Plan\n1. read\n2. think\n3. write\n"))
	must(ws.Write(ctx, "src/main.go", "package main\n\nfunc main() {}\n"))
	_, err = ws.Checkpoint(ctx, "draft-1")
	must(err)
	_, err = ws.StrReplace(ctx, "notes/plan.md", "2. think", "2. think hard", false)
	must(err)
	must(ws.Write(ctx, "notes/todo.md", "- "+evilScript+"\n- "+evilImg+"\n"))
	_, err = ws.Checkpoint(ctx, "before-fork")
	must(err)
	alt, err := ws.Fork(ctx, "draft-1", "experiment")
	must(err)
	must(alt.Write(ctx, "notes/plan.md", "# Plan B\n1. guess\n"))
	must(alt.Write(ctx, evilPath, evilScript))
	_, err = alt.Checkpoint(ctx, "tried")
	must(err)
	evil := ws.ForActor(satchel.Actor{Agent: evilAgent, Via: evilImg})
	must(evil.Delete(ctx, "src/main.go"))
	other, err := st.Workspace(ctx, "globex", "main")
	must(err)
	must(other.Write(ctx, "secret.md", "globex only\n"))

	p, err := satchel.LoadProjectFS(projectFS)
	must(err)
	col, err := st.Collection(ctx, p, "acme", "notes")
	must(err)
	_, _, err = col.Set(ctx, map[string]any{"id": "n1", "text": evilDocNote, "score": 3})
	must(err)
	_, _, err = col.Set(ctx, map[string]any{"id": "n1", "text": "second " + evilDocNote, "score": 4})
	must(err)
	_, _, err = col.Set(ctx, map[string]any{"id": "n2", "text": "plain", "score": 1})
	must(err)

	in, err := New(Config{Store: st, Project: p, PollInterval: 20 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	must(err)
	f := &fixture{st: st, in: in, db: db}
	f.srv = httptest.NewServer(in.Handler())
	t.Cleanup(f.srv.Close)
	return f
}

// get fetches a page with an optional session cookie, without following
// redirects.
func (f *fixture) get(t testing.TB, path string, headers ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest("GET", f.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if strings.EqualFold(headers[i], "Host") {
			req.Host = headers[i+1]
			continue
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// signIn posts a token to the sign-in form and returns the session cookie.
func (f *fixture) signIn(t testing.TB, secret string) (*http.Response, *http.Cookie) {
	t.Helper()
	req, _ := http.NewRequest("POST", f.srv.URL+"/signin", strings.NewReader(url.Values{"token": {secret}, "next": {"/"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", f.srv.URL)
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, c := range resp.Cookies() {
		if c.Name == sessionCookie {
			return resp, c
		}
	}
	return resp, nil
}
