package gitrepo_test

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/memory"
	"github.com/satchel-dev/satchel/backend/postgres/postgrestest"
	"github.com/satchel-dev/satchel/gitrepo"
	"github.com/satchel-dev/satchel/internal/testenv"
	"github.com/satchel-dev/satchel/satcheltest"
)

// backends opens an empty store of each backend.
func backends() map[string]func(t testing.TB) *satchel.Store {
	return map[string]func(t testing.TB) *satchel.Store{
		"memory": func(t testing.TB) *satchel.Store {
			s, err := satchel.Open(t.Context(), "memory:")
			must(t, err)
			t.Cleanup(func() { s.Close() })
			return s
		},
		// Without the stored git map: every process maps from the oldest
		// retained commit.
		"memory-nomap": func(t testing.TB) *satchel.Store {
			s := satchel.New(satcheltest.Hide[backend.GitMapper](memory.New()))
			t.Cleanup(func() { s.Close() })
			return s
		},
		"sqlite": func(t testing.TB) *satchel.Store {
			s, err := satchel.Open(t.Context(), filepath.Join(t.TempDir(), "s.db"))
			must(t, err)
			t.Cleanup(func() { s.Close() })
			return s
		},
		"postgres": func(t testing.TB) *satchel.Store {
			u := testenv.PostgresURL(t)
			b, _ := postgrestest.OpenAt(t, u, postgrestest.Name("satchel_git"))
			return satchel.New(b)
		},
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// gitEnv runs Debian's git, isolated from the user's configuration.
type gitEnv struct {
	t    testing.TB
	home string
}

func newGitEnv(t testing.TB) *gitEnv {
	if _, err := exec.LookPath("git"); err != nil {
		testenv.Skip(t, "git is not installed: git access tests skipped")
	}
	return &gitEnv{t: t, home: t.TempDir()}
}

// run runs git in dir and returns its output; ok is false when it failed.
func (g *gitEnv) run(dir string, args ...string) (out string, ok bool) {
	g.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+g.home, "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME=Ada", "GIT_AUTHOR_EMAIL=ada@example.com", "GIT_COMMITTER_NAME=Ada", "GIT_COMMITTER_EMAIL=ada@example.com",
		"LC_ALL=C")
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	err := cmd.Run()
	return b.String(), err == nil
}

// must runs git and fails the test when it fails.
func (g *gitEnv) must(dir string, args ...string) string {
	g.t.Helper()
	out, ok := g.run(dir, args...)
	if !ok {
		g.t.Fatalf("git %s: %s", strings.Join(args, " "), out)
	}
	return out
}

// cloneURL is the URL of a repository with a token as password.
func cloneURL(base, token, repo string) string {
	u, _ := url.Parse(base + "/git/" + repo)
	if token != "" {
		u.User = url.UserPassword("x", token)
	}
	return u.String()
}

// logOf is what git log --format='%an %s' should print for a thread:
// satchel's log, newest first, "AGENT SUMMARY" ("satchel" for none).
func logOf(t *testing.T, ws *satchel.Workspace) string {
	t.Helper()
	cs, err := ws.History(t.Context(), 0, 0)
	must(t, err)
	var b strings.Builder
	for _, c := range cs {
		name := c.Agent
		if c.Git != nil {
			name, _, _ = strings.Cut(c.Git.Author, " <")
		} else if name == "" {
			name = "satchel"
		}
		b.WriteString(name + " " + c.Summary + "\n")
	}
	return b.String()
}

func TestGitAccess(t *testing.T) {
	for name, open := range backends() {
		t.Run(name, func(t *testing.T) { testGitAccess(t, open(t)) })
	}
}

func testGitAccess(t *testing.T, st *satchel.Store) {
	g := newGitEnv(t)
	ctx := t.Context()
	research := satchel.Actor{Agent: "research", Credential: "t1", Via: "mcp:edit_file", Client: "claude-code", ClientVersion: "2.1"}
	main, err := st.Workspace(ctx, "team", "main", satchel.WorkspaceActor(research))
	must(t, err)
	must(t, main.Write(ctx, "notes/a.md", "one\ntwo\nthree\n"))
	must(t, main.Write(ctx, "b.txt", "bee\n"))
	_, err = main.StrReplace(ctx, "notes/a.md", "two", "TWO", false)
	must(t, err)
	_, err = main.Checkpoint(ctx, "first-draft")
	must(t, err)
	side, err := main.Fork(ctx, "head", "side")
	must(t, err)
	must(t, side.Write(ctx, "side.txt", "from the side\n"))
	must(t, main.Write(ctx, "c.txt", "sea\n"))
	_, err = main.Merge(ctx, "side")
	must(t, err)
	notes, err := st.Workspace(ctx, "team", "notes")
	must(t, err)
	must(t, notes.Write(ctx, "n.txt", "n1\n"))
	must(t, notes.Write(ctx, "n.txt", "n1\nn2\n"))

	secret, _, err := st.CreateToken(ctx, satchel.TokenSpec{Agent: "research", Scope: "team"})
	must(t, err)
	bound, _, err := st.CreateToken(ctx, satchel.TokenSpec{Agent: "research", Scope: "team", Thread: "notes"})
	must(t, err)
	srv := httptest.NewServer(gitrepo.New(gitrepo.Config{Store: st, MaxRequestBytes: 1 << 20}))
	defer srv.Close()
	dir := t.TempDir()

	// 401 with a challenge without a token, for every route.
	for _, p := range []string{"/git/team/main.git/info/refs?service=git-upload-pack", "/git/team.git/info/refs?service=git-receive-pack"} {
		resp, err := http.Get(srv.URL + p)
		must(t, err)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic ") {
			t.Fatalf("GET %s without a token: %d %q", p, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
	}
	if out, ok := g.run(dir, "clone", cloneURL(srv.URL, "", "team/main.git"), "anon"); ok {
		t.Fatalf("clone without a token succeeded: %s", out)
	}

	// Clone, log, blame.
	g.must(dir, "clone", cloneURL(srv.URL, secret, "team/main.git"), "main")
	repo := filepath.Join(dir, "main")
	if got, want := g.must(repo, "log", "--first-parent", "--format=%an %s"), logOf(t, main); got != want {
		t.Fatalf("git log --first-parent:\n%s\nsatchel log:\n%s", got, want)
	}
	if got := g.must(repo, "rev-parse", "--abbrev-ref", "HEAD"); got != "main\n" {
		t.Fatalf("HEAD is %q, want main", got)
	}
	if got := g.must(repo, "log", "-1", "--format=%B", "first-draft"); !strings.Contains(got, "Satchel-Commit: 3\nSatchel-Tool: mcp:edit_file\nSatchel-Client: claude-code 2.1\n") {
		t.Fatalf("checkpoint tag's commit message:\n%s", got)
	}
	if got := g.must(repo, "log", "-1", "--format=%an <%ae>|%cn|%P"); !strings.HasPrefix(got, "research <research@team.satchel>|research|") || len(strings.Fields(strings.Split(got, "|")[2])) != 2 {
		t.Fatalf("merge commit: %s", got)
	}
	if got, _ := os.ReadFile(filepath.Join(repo, "side.txt")); string(got) != "from the side\n" {
		t.Fatalf("side.txt after clone: %q", got)
	}
	blame := g.must(repo, "blame", "--line-porcelain", "notes/a.md")
	var seqs []string
	for _, line := range strings.Split(blame, "\n") {
		if strings.HasPrefix(line, "summary ") {
			seqs = append(seqs, strings.TrimPrefix(line, "summary "))
		}
	}
	hist, err := main.FileHistory(ctx, "notes/a.md", 0, 0)
	must(t, err)
	if len(hist.Changes) != 2 || len(seqs) != 3 || seqs[0] != hist.Changes[1].Commit.Summary || seqs[1] != hist.Changes[0].Commit.Summary || seqs[2] != hist.Changes[1].Commit.Summary {
		t.Fatalf("git blame's commits %q do not agree with satchel's history of notes/a.md %+v", seqs, hist.Changes)
	}

	// Fetch after new satchel writes.
	must(t, main.Write(ctx, "d.txt", "dee\n"))
	g.must(repo, "pull", "--ff-only")
	if got, want := g.must(repo, "log", "--first-parent", "--format=%an %s"), logOf(t, main); got != want {
		t.Fatalf("after fetch, git log:\n%s\nsatchel log:\n%s", got, want)
	}

	// A fast-forward push is one satchel commit per pushed commit.
	must(t, os.WriteFile(filepath.Join(repo, "b.txt"), []byte("bee\nbuzz\n"), 0o644))
	g.must(repo, "commit", "-qam", "buzz")
	must(t, os.Remove(filepath.Join(repo, "c.txt")))
	must(t, os.WriteFile(filepath.Join(repo, "e.txt"), []byte("eee\n"), 0o644))
	g.must(repo, "add", "-A")
	g.must(repo, "commit", "-qm", "sea gone, e added")
	g.must(repo, "push", "origin", "main")
	cs, err := main.History(ctx, 0, 2)
	must(t, err)
	local := strings.TrimSpace(g.must(repo, "rev-parse", "HEAD"))
	if cs[0].Summary != "sea gone, e added" || cs[1].Summary != "buzz" || cs[0].Agent != "research" || cs[0].Via != "git:push" || cs[0].Git == nil || cs[0].Git.Hash != local {
		t.Fatalf("after push, satchel log: %+v %+v (local head %s)", cs[0], cs[1], local)
	}
	if got, _ := main.Read(ctx, "e.txt"); got != "eee\n" {
		t.Fatalf("e.txt after push: %q", got)
	}
	if ok, _ := main.Exists(ctx, "c.txt"); ok {
		t.Fatal("c.txt still exists after a push that deleted it")
	}
	if got := g.must(repo, "ls-remote", "origin", "refs/heads/main"); !strings.HasPrefix(got, local) {
		t.Fatalf("served head after push: %s, want %s", got, local)
	}

	// Non-fast-forward: the thread moved.
	must(t, main.Write(ctx, "g.txt", "gee\n"))
	must(t, os.WriteFile(filepath.Join(repo, "h.txt"), []byte("aitch\n"), 0o644))
	g.must(repo, "add", "-A")
	g.must(repo, "commit", "-qm", "aitch")
	g.must(repo, "fetch")
	out, ok := g.run(repo, "push", "origin", "main")
	if ok || !strings.Contains(out, "! [rejected]") || !strings.Contains(out, "(non-fast-forward)") {
		t.Fatalf("non-fast-forward push: ok=%v\n%s", ok, out)
	}
	out, ok = g.run(repo, "push", "--force", "origin", "main")
	if ok || !strings.Contains(out, "(non-fast-forward)") {
		t.Fatalf("forced non-fast-forward push: ok=%v\n%s", ok, out)
	}
	if ok, _ := main.Exists(ctx, "h.txt"); ok {
		t.Fatal("a refused push wrote h.txt")
	}

	// A pushed path that breaks a bound is refused, naming it.
	g.must(repo, "reset", "-q", "--hard", "origin/main")
	must(t, st.SetLimits(ctx, "team", "main", satchel.Limits{MaxFileBytes: 64}))
	must(t, os.WriteFile(filepath.Join(repo, "big.txt"), bytes.Repeat([]byte("x"), 100), 0o644))
	g.must(repo, "add", "-A")
	g.must(repo, "commit", "-qm", "big")
	out, ok = g.run(repo, "push", "origin", "main")
	if ok || !strings.Contains(out, "big.txt") || !strings.Contains(out, "[remote rejected]") {
		t.Fatalf("push over a bound: ok=%v\n%s", ok, out)
	}

	// A small push that inflates past 8 times the body's bound is refused
	// before its objects are inflated.
	g.must(repo, "reset", "-q", "--hard", "origin/main")
	must(t, os.WriteFile(filepath.Join(repo, "zeros.bin"), make([]byte, 16<<20), 0o644))
	g.must(repo, "add", "-A")
	g.must(repo, "commit", "-qm", "zeros")
	out, ok = g.run(repo, "push", "origin", "main")
	if ok || !strings.Contains(out, "once inflated") {
		t.Fatalf("push of a pack that inflates 1000-fold: ok=%v\n%s", ok, out)
	}

	// Every pushed commit is checked before any lands: the second one's
	// executable file refuses both.
	g.must(repo, "reset", "-q", "--hard", "origin/main")
	before, err := main.History(ctx, 0, 1)
	must(t, err)
	must(t, os.WriteFile(filepath.Join(repo, "fine.txt"), []byte("fine\n"), 0o644))
	g.must(repo, "add", "-A")
	g.must(repo, "commit", "-qm", "fine")
	must(t, os.WriteFile(filepath.Join(repo, "run.sh"), []byte("echo\n"), 0o755))
	g.must(repo, "add", "-A")
	g.must(repo, "commit", "-qm", "script")
	out, ok = g.run(repo, "push", "origin", "main")
	after, err := main.History(ctx, 0, 1)
	must(t, err)
	if ok || !strings.Contains(out, "run.sh: git mode 100755 cannot be pushed") || after[0].Seq != before[0].Seq {
		t.Fatalf("push of a commit with an executable file: ok=%v, head %d then %d\n%s", ok, before[0].Seq, after[0].Seq, out)
	}

	// A thread-bound token clones its thread only.
	if out, ok := g.run(dir, "clone", cloneURL(srv.URL, bound, "team/main.git"), "nope"); ok || !strings.Contains(out, "403") {
		t.Fatalf("a token bound to notes cloned main: %s", out)
	}
	if out, ok := g.run(dir, "clone", cloneURL(srv.URL, bound, "team.git"), "nope2"); ok {
		t.Fatalf("a token bound to notes cloned the scope: %s", out)
	}
	g.must(dir, "clone", cloneURL(srv.URL, bound, "team/notes"), "notes") // .git may be left out
	if got, want := g.must(filepath.Join(dir, "notes"), "log", "--format=%an %s"), logOf(t, notes); got != want {
		t.Fatalf("git log of notes:\n%s\nsatchel log:\n%s", got, want)
	}

	// The scope's repository: every thread a branch.
	served, _, _ := strings.Cut(g.must(repo, "ls-remote", "origin", "refs/heads/main"), "\t")
	g.must(dir, "clone", "--mirror", cloneURL(srv.URL, secret, "team.git"), "scope")
	refs := g.must(filepath.Join(dir, "scope"), "for-each-ref", "--format=%(refname) %(objectname)")
	for _, want := range []string{"refs/heads/main " + served, "refs/heads/side ", "refs/heads/notes ", "refs/tags/main/first-draft "} {
		if !strings.Contains(refs, want) {
			t.Fatalf("scope repository's refs lack %q:\n%s", want, refs)
		}
	}

	// Export and import round-trip: the same hashes.
	exp := filepath.Join(dir, "exp")
	res, err := gitrepo.Export(ctx, st, "team", "main", exp)
	must(t, err)
	if res.Refs["refs/heads/main"] != served {
		t.Fatalf("export's main is %s, served %s", res.Refs["refs/heads/main"], served)
	}
	g.must(exp, "fsck", "--strict")
	if got, _ := os.ReadFile(filepath.Join(exp, "e.txt")); string(got) != "eee\n" {
		t.Fatalf("exported work tree's e.txt: %q", got)
	}
	nexp := filepath.Join(dir, "nexp")
	res, err = gitrepo.Export(ctx, st, "team", "notes", nexp)
	must(t, err)
	imp, err := gitrepo.Import(ctx, st, nexp, "", "team", "notes-copy", satchel.Actor{Via: "cli:git import"})
	must(t, err)
	if imp.Commits != 2 {
		t.Fatalf("import made %d commits, want 2", imp.Commits)
	}
	res2, err := gitrepo.Export(ctx, st, "team", "notes-copy", filepath.Join(dir, "nexp2"))
	must(t, err)
	if res2.Refs["refs/heads/notes-copy"] != res.Refs["refs/heads/notes"] {
		t.Fatalf("round trip: %v then %v", res.Refs, res2.Refs)
	}
	if _, err := gitrepo.Import(ctx, st, nexp, "", "team", "notes-copy", satchel.Actor{}); !errors.Is(err, satchel.ErrExists) {
		t.Fatalf("import into an existing thread: %v", err)
	}
}

func FuzzParseRepoPath(f *testing.F) {
	for _, s := range []string{"team/main.git/info/refs", "team.git/git-upload-pack", "../x.git/info/refs", "a/b/c.git/x", "a/.git/info/refs", "x.git.git/info/refs"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		scope, thread, _, err := gitrepo.ParseRepoPath(p)
		if err != nil {
			return
		}
		if satchel.ValidScope(scope) != nil || (thread != "" && satchel.ValidThreadName(thread) != nil) {
			t.Fatalf("%q gave scope %q thread %q", p, scope, thread)
		}
		if strings.Contains(scope, "/") || strings.Contains(thread, "/") || strings.Contains(scope+thread, "..") && satchel.ValidScope(scope) != nil {
			t.Fatalf("%q escaped: scope %q thread %q", p, scope, thread)
		}
	})
}

// TestFetchNegotiation fetches into a clone that has many commits of its
// own: git negotiates over several requests (stateless), with haves the
// server does not know before the ones it does.
func TestFetchNegotiation(t *testing.T) {
	g := newGitEnv(t)
	ctx := t.Context()
	st, err := satchel.Open(ctx, "memory:")
	must(t, err)
	defer st.Close()
	ws, err := st.Workspace(ctx, "s", "main")
	must(t, err)
	for i := range 40 {
		must(t, ws.Write(ctx, "f.txt", strings.Repeat("x\n", i+1)))
	}
	secret, _, err := st.CreateToken(ctx, satchel.TokenSpec{Agent: "a", Scope: "s"})
	must(t, err)
	srv := httptest.NewServer(gitrepo.New(gitrepo.Config{Store: st}))
	defer srv.Close()
	dir := t.TempDir()
	g.must(dir, "clone", "-q", cloneURL(srv.URL, secret, "s/main.git"), "c")
	repo := filepath.Join(dir, "c")
	for i := range 40 {
		must(t, os.WriteFile(filepath.Join(repo, "local.txt"), []byte(strings.Repeat("y\n", i+1)), 0o644))
		g.must(repo, "add", "-A")
		g.must(repo, "commit", "-qm", "local")
	}
	for i := range 3 {
		must(t, ws.Write(ctx, "g.txt", strings.Repeat("z\n", i+1)))
	}
	g.must(repo, "fetch", "-q")
	head, _, _ := strings.Cut(g.must(repo, "ls-remote", "origin", "refs/heads/main"), "\t")
	if got := strings.TrimSpace(g.must(repo, "rev-parse", "origin/main")); got != head {
		t.Fatalf("origin/main is %s after fetch, served %s", got, head)
	}
	if got := g.must(repo, "show", "origin/main:g.txt"); got != "z\nz\nz\n" {
		t.Fatalf("g.txt after fetch: %q", got)
	}
}

// TestRetentionMakesARoot: once retention drops the oldest commits, the
// oldest retained one is a root, and a fetch takes the new history.
func TestRetentionMakesARoot(t *testing.T) {
	g := newGitEnv(t)
	ctx := t.Context()
	st, err := satchel.Open(ctx, "memory:")
	must(t, err)
	defer st.Close()
	ws, err := st.Workspace(ctx, "s", "main")
	must(t, err)
	for i := range 5 {
		must(t, ws.Write(ctx, "f.txt", strings.Repeat("x\n", i+1)))
	}
	secret, _, err := st.CreateToken(ctx, satchel.TokenSpec{Agent: "a", Scope: "s"})
	must(t, err)
	srv := httptest.NewServer(gitrepo.New(gitrepo.Config{Store: st}))
	defer srv.Close()
	dir := t.TempDir()
	g.must(dir, "clone", "-q", cloneURL(srv.URL, secret, "s/main.git"), "c")
	repo := filepath.Join(dir, "c")
	if n := strings.Count(g.must(repo, "rev-list", "HEAD"), "\n"); n != 5 {
		t.Fatalf("%d commits before retention, want 5", n)
	}
	dropped, err := ws.SetRetention(ctx, satchel.Policy{MaxCommits: 2})
	must(t, err)
	if dropped != 3 {
		t.Fatalf("retention dropped %d commits, want 3", dropped)
	}
	g.must(repo, "fetch", "-q")
	if got := g.must(repo, "log", "--format=%s|%P|%b", "origin/main"); strings.Count(got, "Satchel-Commit:") != 2 || !strings.Contains(got, "write f.txt||Satchel-Commit: 4") {
		t.Fatalf("after retention, origin/main:\n%s", got)
	}
}

// TestAccessRefusals: names that would reach past a scope or thread, an
// agent's token for another scope, an operator's push.
func TestAccessRefusals(t *testing.T) {
	ctx := t.Context()
	st, err := satchel.Open(ctx, "memory:")
	must(t, err)
	defer st.Close()
	ws, err := st.Workspace(ctx, "s", "main")
	must(t, err)
	must(t, ws.Write(ctx, "a.txt", "a\n"))
	agent, _, err := st.CreateToken(ctx, satchel.TokenSpec{Agent: "a", Scope: "s"})
	must(t, err)
	other, _, err := st.CreateToken(ctx, satchel.TokenSpec{Agent: "a", Scope: "t"})
	must(t, err)
	op, _, err := st.CreateToken(ctx, satchel.TokenSpec{Operator: true})
	must(t, err)
	h := gitrepo.New(gitrepo.Config{Store: st})
	get := func(path, secret string) int {
		r := httptest.NewRequest("GET", path, nil)
		if secret != "" {
			r.SetBasicAuth("x", secret)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	const refs = "/info/refs?service=git-upload-pack"
	for _, p := range []string{"/git/s/../t/main.git" + refs, "/git/s/main/x.git" + refs, "/git/..git" + refs, "/git/s/.git" + refs, "/git/s/main.git/../../t.git" + refs} {
		if code := get(p, agent); code == http.StatusOK {
			t.Errorf("GET %s: 200", p)
		}
	}
	for _, c := range []struct {
		path, secret string
		want         int
	}{
		{"/git/s/main.git" + refs, agent, http.StatusOK},
		{"/git/s/main.git" + refs, "stk_0000000000000000_nope", http.StatusUnauthorized},
		{"/git/s/main.git" + refs, other, http.StatusForbidden},
		{"/git/s/main.git" + refs, op, http.StatusOK},
		{"/git/s/main.git/info/refs?service=git-receive-pack", op, http.StatusForbidden},
		{"/git/s/main.git/info/refs", agent, http.StatusForbidden}, // the dumb protocol
	} {
		if code := get(c.path, c.secret); code != c.want {
			t.Errorf("GET %s: %d, want %d", c.path, code, c.want)
		}
	}
}

// A token whose file rules hide paths cannot clone: git needs every path.
// Rules that hide nothing (read everywhere) clone; the agent's rules count
// as the token's do.
func TestFileRulesRefuseClones(t *testing.T) {
	ctx := t.Context()
	st, err := satchel.Open(ctx, "memory:")
	must(t, err)
	defer st.Close()
	ws, err := st.Workspace(ctx, "s", "main")
	must(t, err)
	must(t, ws.Write(ctx, "notes/a.md", "a\n"))
	must(t, ws.Write(ctx, "secrets/k", "k\n"))
	rules := func(s string) satchel.FileRules {
		r, err := satchel.ParseFileRules(s)
		must(t, err)
		return r
	}
	narrow, _, err := st.CreateToken(ctx, satchel.TokenSpec{Agent: "a", Scope: "s", Files: rules("notes/**=rw")})
	must(t, err)
	reader, _, err := st.CreateToken(ctx, satchel.TokenSpec{Agent: "a", Scope: "s", Files: rules("**=read")})
	must(t, err)
	plain, _, err := st.CreateToken(ctx, satchel.TokenSpec{Agent: "b", Scope: "s"})
	must(t, err)
	h := gitrepo.New(gitrepo.Config{Store: st, AgentFiles: func(agent string) satchel.FileRules {
		if agent == "b" {
			return rules("secrets/**=none,**=rw")
		}
		return nil
	}})
	for _, c := range []struct {
		secret string
		want   int
	}{{narrow, http.StatusForbidden}, {reader, http.StatusOK}, {plain, http.StatusForbidden}} {
		r := httptest.NewRequest("GET", "/git/s/main.git/info/refs?service=git-upload-pack", nil)
		r.SetBasicAuth("x", c.secret)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != c.want {
			t.Errorf("%s: %d %q, want %d", c.secret[:8], w.Code, w.Body.String(), c.want)
		}
		if c.want == http.StatusForbidden && !strings.Contains(w.Body.String(), gitrepo.NoFullRead) {
			t.Errorf("refusal %q does not say %q", w.Body.String(), gitrepo.NoFullRead)
		}
	}
}
