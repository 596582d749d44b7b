package gitrepo_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/gitrepo"
	"github.com/satchel-dev/satchel/satcheltest"
)

// benchThread makes a thread of files files (in 100 directories, 10,000
// a commit), then commits more commits that each change one file.
func benchThread(b *testing.B, st *satchel.Store, thread string, files, commits int) *satchel.Workspace {
	ctx := context.Background()
	ws, err := st.Workspace(ctx, "bench", thread, satchel.WorkspaceActor(satchel.Actor{Agent: "bench", Via: "mcp:write_file"}))
	must(b, err)
	for lo := 0; lo < files; lo += 10_000 {
		must(b, ws.Batch(ctx, func(ctx context.Context, bt *satchel.Batch) error {
			for i := lo; i < min(lo+10_000, files); i++ {
				if err := bt.Write(ctx, fmt.Sprintf("d%02d/f%06d.txt", i%100, i), fmt.Sprintf("file %d\nline two\n", i)); err != nil {
					return err
				}
			}
			return nil
		}))
	}
	for i := range commits {
		must(b, ws.Write(ctx, fmt.Sprintf("d%02d/f%06d.txt", i%100, i), fmt.Sprintf("changed %d\n", i)))
	}
	return ws
}

func benchStores(b *testing.B) map[string]*satchel.Store {
	mem, err := satchel.Open(context.Background(), "memory:")
	must(b, err)
	sq, err := satchel.Open(context.Background(), filepath.Join(b.TempDir(), "s.db"))
	must(b, err)
	b.Cleanup(func() { mem.Close(); sq.Close() })
	out := map[string]*satchel.Store{"memory": mem, "sqlite": sq}
	if os.Getenv("SATCHEL_TEST_POSTGRES") != "" {
		out["postgres"] = backends()["postgres"](b)
	}
	return out
}

// BenchmarkGitClone clones with Debian's git a thread of 100,000 files
// and 200 commits (files100k), and one of 100 files and 2,000 commits
// (commits2k): first from a server that maps the thread for it, then
// again from one that mapped it already. It reports the clone rate.
func BenchmarkGitClone(b *testing.B) {
	shapes := []struct {
		name           string
		files, commits int
	}{{"files100k", 100_000, 200}, {"commits2k", 100, 2_000}}
	for name, st := range benchStores(b) {
		for _, sh := range shapes {
			ws := benchThread(b, st, "t-"+sh.name, sh.files, sh.commits)
			hist, err := ws.History(context.Background(), 0, 0)
			must(b, err)
			secret, _, err := st.CreateToken(context.Background(), satchel.TokenSpec{Agent: "bench", Scope: "bench"})
			must(b, err)
			g := newGitEnv(b)
			url := func(srv *httptest.Server) string { return cloneURL(srv.URL, secret, "bench/t-"+sh.name+".git") }
			b.Run(name+"/"+sh.name+"/first", func(b *testing.B) {
				for b.Loop() {
					srv := httptest.NewServer(gitrepo.New(gitrepo.Config{Store: st}))
					start := time.Now()
					benchGit(b, g, b.TempDir(), "clone", "-q", "--no-checkout", url(srv), "c")
					b.ReportMetric(float64(len(hist))/time.Since(start).Seconds(), "commits/s")
					srv.Close()
				}
			})
			b.Run(name+"/"+sh.name+"/again", func(b *testing.B) {
				srv := httptest.NewServer(gitrepo.New(gitrepo.Config{Store: st}))
				defer srv.Close()
				benchGit(b, g, b.TempDir(), "ls-remote", url(srv))
				for b.Loop() {
					start := time.Now()
					benchGit(b, g, b.TempDir(), "clone", "-q", "--no-checkout", url(srv), "c")
					b.ReportMetric(float64(len(hist))/time.Since(start).Seconds(), "commits/s")
				}
			})
		}
	}
}

// BenchmarkGitFetch10 fetches 10 new commits of a thread of 100,000
// files from a server that served the thread before.
func BenchmarkGitFetch10(b *testing.B) {
	for name, st := range benchStores(b) {
		b.Run(name, func(b *testing.B) {
			g := newGitEnv(b)
			ws := benchThread(b, st, "main", 100_000, 0)
			secret, _, err := st.CreateToken(context.Background(), satchel.TokenSpec{Agent: "bench", Scope: "bench"})
			must(b, err)
			srv := httptest.NewServer(gitrepo.New(gitrepo.Config{Store: st}))
			defer srv.Close()
			dir := b.TempDir()
			benchGit(b, g, dir, "clone", "-q", "--no-checkout", cloneURL(srv.URL, secret, "bench/main.git"), "c")
			n := 0
			for b.Loop() {
				b.StopTimer()
				for range 10 {
					must(b, ws.Write(context.Background(), fmt.Sprintf("new/%d.txt", n), "new\n"))
					n++
				}
				b.StartTimer()
				benchGit(b, g, filepath.Join(dir, "c"), "fetch", "-q")
			}
		})
	}
}

func benchGit(b *testing.B, g *gitEnv, dir string, args ...string) {
	b.Helper()
	if out, ok := g.run(dir, args...); !ok {
		b.Fatalf("git %v: %s", args, out)
	}
}

// BenchmarkGitFetch10NewProcess fetches 10 new commits of a thread of
// 100,000 files (files100k) and of one of 2,000 commits of one file each
// (commits2k) from a server that never served it (a new process: the map
// only in the database), with the stored map (map) and without it
// (nomap: backend.GitMapper hidden, the thread mapped from its oldest
// commit).
func BenchmarkGitFetch10NewProcess(b *testing.B) {
	shapes := []struct {
		name           string
		files, commits int
	}{{"files100k", 100_000, 0}, {"commits2k", 100, 2_000}}
	for _, name := range []string{"sqlite", "postgres"} {
		if name == "postgres" && os.Getenv("SATCHEL_TEST_POSTGRES") == "" {
			continue
		}
		raw := rawBackends()[name](b)
		st := satchel.New(raw)
		g := newGitEnv(b)
		secret, _, err := st.CreateToken(context.Background(), satchel.TokenSpec{Agent: "bench", Scope: "bench"})
		must(b, err)
		for _, sh := range shapes {
			ws := benchThread(b, st, sh.name, sh.files, sh.commits)
			url := func(srv *httptest.Server) string { return cloneURL(srv.URL, secret, "bench/"+sh.name+".git") }
			dir := b.TempDir()
			srv := httptest.NewServer(gitrepo.New(gitrepo.Config{Store: st}))
			benchGit(b, g, dir, "clone", "-q", "--no-checkout", url(srv), "c")
			srv.Close()
			n := 0
			for _, variant := range []string{"map", "nomap"} {
				vs := st
				if variant == "nomap" {
					vs = satchel.New(satcheltest.Hide[backend.GitMapper](raw))
				}
				b.Run(name+"/"+sh.name+"/"+variant, func(b *testing.B) {
					for b.Loop() {
						b.StopTimer()
						for range 10 {
							must(b, ws.Write(context.Background(), fmt.Sprintf("new/%d.txt", n), "new\n"))
							n++
						}
						srv := httptest.NewServer(gitrepo.New(gitrepo.Config{Store: vs}))
						repo := filepath.Join(dir, "c")
						benchGit(b, g, repo, "remote", "set-url", "origin", url(srv))
						b.StartTimer()
						benchGit(b, g, repo, "fetch", "-q")
						srv.Close()
					}
				})
			}
		}
	}
}
