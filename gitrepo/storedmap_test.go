package gitrepo_test

import (
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/memory"
	"github.com/satchel-dev/satchel/backend/postgres/postgrestest"
	"github.com/satchel-dev/satchel/backend/sqlite"
	"github.com/satchel-dev/satchel/gitrepo"
	"github.com/satchel-dev/satchel/internal/testenv"
	"github.com/satchel-dev/satchel/satcheltest"
)

// rawBackends opens an empty backend of each kind.
func rawBackends() map[string]func(t testing.TB) backend.Backend {
	return map[string]func(t testing.TB) backend.Backend{
		"memory": func(t testing.TB) backend.Backend { return memory.New() },
		"sqlite": func(t testing.TB) backend.Backend {
			b, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "s.db"))
			must(t, err)
			t.Cleanup(func() { b.Close() })
			return b
		},
		"postgres": func(t testing.TB) backend.Backend {
			u := testenv.PostgresURL(t)
			b, _ := postgrestest.OpenAt(t, u, postgrestest.Name("satchel_git"))
			return b
		},
	}
}

// TestStoredMap: a new process (a new Handler) serves fetches from the
// stored git map (backend.GitMapper): a fetch of the new commits, a fetch
// by a client older than the map's last commit, a clone, with the same
// hashes as a process that maps without the map (the capability hidden),
// and a checkpoint as a tag. Without the capability nothing is stored and
// the same hashes are served.
func TestStoredMap(t *testing.T) {
	for name, open := range rawBackends() {
		t.Run(name, func(t *testing.T) {
			g := newGitEnv(t)
			ctx := t.Context()
			b := open(t)
			st := satchel.New(b)
			plain := satchel.New(satcheltest.Hide[backend.GitMapper](b))
			if !st.HasGitMap() || plain.HasGitMap() {
				t.Fatal("the capability is not as the test needs it")
			}
			ws, err := st.Workspace(ctx, "s", "main")
			must(t, err)
			for i := range 30 {
				must(t, ws.Write(ctx, fmt.Sprintf("d%d/f%02d.txt", i%3, i), fmt.Sprintf("file %d\n", i)))
			}
			_, err = ws.Checkpoint(ctx, "v1")
			must(t, err)
			secret, _, err := st.CreateToken(ctx, satchel.TokenSpec{Agent: "a", Scope: "s"})
			must(t, err)
			serve := func(st *satchel.Store) (string, func()) {
				srv := httptest.NewServer(gitrepo.New(gitrepo.Config{Store: st}))
				return cloneURL(srv.URL, secret, "s/main.git"), srv.Close
			}
			headOf := func(st *satchel.Store) string {
				u, done := serve(st)
				defer done()
				h, _, _ := strings.Cut(g.must(t.TempDir(), "ls-remote", u, "refs/heads/main"), "\t")
				return h
			}
			dir := t.TempDir()
			u, done := serve(st)
			g.must(dir, "clone", "-q", u, "old")
			g.must(dir, "clone", "-q", u, "c")
			done()
			last, ok, err := ws.GitMapLast(ctx)
			must(t, err)
			if !ok || last.Seq != 30 {
				t.Fatalf("stored map after a clone: %+v, %v; want its last entry at commit 30", last, ok)
			}
			// New commits: a file changed, one in a new directory, one removed.
			must(t, ws.Write(ctx, "d1/f01.txt", "changed\n"))
			must(t, ws.Write(ctx, "new/deep/x.txt", "x\n"))
			must(t, ws.Delete(ctx, "d2/f02.txt"))
			check := func(repo string) {
				t.Helper()
				want := headOf(plain)
				if got := strings.TrimSpace(g.must(repo, "rev-parse", "origin/main")); got != want {
					t.Fatalf("origin/main %s; a process without the map serves %s", got, want)
				}
				g.must(repo, "fsck", "--full", "--no-dangling")
				if got := g.must(repo, "show", "origin/main:d1/f01.txt"); got != "changed\n" {
					t.Errorf("d1/f01.txt: %q", got)
				}
				if _, ok := g.run(repo, "cat-file", "-e", "origin/main:d2/f02.txt"); ok {
					t.Errorf("d2/f02.txt was removed, but is in origin/main")
				}
			}
			u, done = serve(st)
			g.must(filepath.Join(dir, "c"), "remote", "set-url", "origin", u)
			g.must(filepath.Join(dir, "c"), "fetch", "-q")
			done()
			check(filepath.Join(dir, "c"))
			if last, _, _ := ws.GitMapLast(ctx); last.Seq != 33 {
				t.Errorf("stored map after the fetch ends at %d, want 33", last.Seq)
			}
			// A client older than the map's last commit, from a new process.
			must(t, ws.Write(ctx, "d0/f00.txt", "again\n"))
			u, done = serve(st)
			g.must(filepath.Join(dir, "old"), "remote", "set-url", "origin", u)
			g.must(filepath.Join(dir, "old"), "fetch", "-q", "--tags")
			done()
			check(filepath.Join(dir, "old"))
			if got := g.must(filepath.Join(dir, "old"), "rev-list", "--count", "origin/main"); strings.TrimSpace(got) != "34" {
				t.Errorf("commits after the fetch: %s, want 34", got)
			}
			// A clone from a new process: every commit and the tag.
			u, done = serve(st)
			g.must(dir, "clone", "-q", u, "new")
			done()
			check(filepath.Join(dir, "new"))
			tag := strings.TrimSpace(g.must(filepath.Join(dir, "new"), "rev-parse", "v1^{commit}"))
			if got := g.must(filepath.Join(dir, "new"), "log", "-1", "--format=%b", tag); !strings.Contains(got, "Satchel-Commit: 30") {
				t.Errorf("tag v1 is at %q, want commit 30", got)
			}
			// Without the capability: nothing stored, the same hashes.
			pw, err := plain.Workspace(ctx, "s", "main")
			must(t, err)
			if _, ok, err := pw.GitMapLast(ctx); ok || err != nil {
				t.Errorf("a store without the capability finds a map: %v, %v", ok, err)
			}
			u, done = serve(plain)
			g.must(filepath.Join(dir, "c"), "remote", "set-url", "origin", u)
			g.must(filepath.Join(dir, "c"), "fetch", "-q")
			g.must(dir, "clone", "-q", u, "plain")
			done()
			check(filepath.Join(dir, "plain"))
		})
	}
}

// TestStoredMapIsRead: a new process takes the hashes of old commits
// from the stored map and does not map them again: an entry made wrong in
// the store shows in the hash served for the next commit; put right, the
// served hash is a mapping's without the map.
func TestStoredMapIsRead(t *testing.T) {
	g := newGitEnv(t)
	ctx := t.Context()
	b := memory.New()
	st := satchel.New(b)
	plain := satchel.New(satcheltest.Hide[backend.GitMapper](b))
	ws, err := st.Workspace(ctx, "s", "main")
	must(t, err)
	for i := range 5 {
		must(t, ws.Write(ctx, fmt.Sprintf("d/f%d.txt", i), "x\n"))
	}
	secret, _, err := st.CreateToken(ctx, satchel.TokenSpec{Agent: "a", Scope: "s"})
	must(t, err)
	head := func(st *satchel.Store) string {
		srv := httptest.NewServer(gitrepo.New(gitrepo.Config{Store: st}))
		defer srv.Close()
		h, _, _ := strings.Cut(g.must(t.TempDir(), "ls-remote", cloneURL(srv.URL, secret, "s/main.git"), "refs/heads/main"), "\t")
		return h
	}
	head(st)
	e, ok, err := ws.GitMapLast(ctx)
	must(t, err)
	if !ok || e.Seq != 5 {
		t.Fatalf("stored map ends at %+v, %v; want commit 5", e, ok)
	}
	must(t, ws.Write(ctx, "d/f9.txt", "y\n"))
	if got, want := head(st), head(plain); got != want {
		t.Fatalf("a new process with the map serves %s, one without it %s", got, want)
	}
	e, _, err = ws.GitMapLast(ctx)
	must(t, err)
	if e.Seq != 6 {
		t.Fatalf("stored map ends at %+v; want commit 6", e)
	}
	bad := e
	bad.Hash = strings.Repeat("1", 40)
	must(t, ws.PutGitMap(ctx, []satchel.GitMapEntry{bad}, nil))
	must(t, ws.Write(ctx, "d/f10.txt", "z\n"))
	if got, want := head(st), head(plain); got == want {
		t.Fatalf("a new process served %s with commit 6's stored hash made wrong: it did not read the map", got)
	}
}

// TestStoredMapFork: a fork's repository, served by a new process while
// its source's map is stored, holds the source's commits too (its
// first commit's ancestors), and a clone of the scope every thread.
func TestStoredMapFork(t *testing.T) {
	g := newGitEnv(t)
	ctx := t.Context()
	st := satchel.New(memory.New())
	ws, err := st.Workspace(ctx, "s", "main")
	must(t, err)
	for i := range 5 {
		must(t, ws.Write(ctx, fmt.Sprintf("d/f%d.txt", i), "x\n"))
	}
	secret, _, err := st.CreateToken(ctx, satchel.TokenSpec{Agent: "a", Scope: "s"})
	must(t, err)
	clone := func(repo string) string {
		srv := httptest.NewServer(gitrepo.New(gitrepo.Config{Store: st}))
		defer srv.Close()
		dir := t.TempDir()
		g.must(dir, "clone", "-q", cloneURL(srv.URL, secret, repo), "c")
		g.must(filepath.Join(dir, "c"), "fsck", "--full", "--no-dangling")
		return filepath.Join(dir, "c")
	}
	clone("s/main.git")
	if _, ok, _ := ws.GitMapLast(ctx); !ok {
		t.Fatal("no stored map after a clone")
	}
	f, err := ws.Fork(ctx, "head", "f")
	must(t, err)
	must(t, f.Write(ctx, "d/g.txt", "g\n"))
	must(t, ws.Write(ctx, "d/f9.txt", "y\n"))
	// Each a new process: the fork, then the scope.
	if got := strings.TrimSpace(g.must(clone("s/f.git"), "rev-list", "--count", "HEAD")); got != "7" {
		t.Errorf("the fork's clone has %s commits, want 7 (5 of main, the fork's 2)", got)
	}
	repo := clone("s.git")
	if got := strings.TrimSpace(g.must(repo, "rev-list", "--count", "origin/main")); got != "6" {
		t.Errorf("the scope's clone has %s commits on main, want 6", got)
	}
}
