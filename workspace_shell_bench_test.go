package satchel_test

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/satchel-dev/satchel"
)

// shellWorkspace writes n files of five lines on SQLite, one in ten with
// a TODO, in n/100 directories.
func shellWorkspace(b *testing.B, n int) *satchel.Workspace {
	b.Helper()
	ctx := context.Background()
	st, err := satchel.Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	ws, err := st.Workspace(ctx, "bench", "sh")
	if err != nil {
		b.Fatal(err)
	}
	for from := 0; from < n; from += 1000 {
		err = ws.Batch(ctx, func(ctx context.Context, bt *satchel.Batch) error {
			for i := from; i < min(n, from+1000); i++ {
				body := "package x\n\nfunc f" + strconv.Itoa(i) + "() {}\n"
				if i%10 == 0 {
					body += "// TODO: file " + strconv.Itoa(i) + "\n"
				}
				if err := bt.Write(ctx, globPath(n, i), body+"// end\n"); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	return ws
}

// BenchmarkShellGrep measures, side by side on one SQLite workspace of
// 10,000 files, `satchel sh -c 'grep -rn TODO . | wc -l'` (Shell) and
// `satchel fs grep TODO` (Workspace.Grep), alternating the two in each
// iteration so that the machine's load falls on both alike: sh-ns/op,
// fsgrep-ns/op and their ratio (docs/performance.md).
func BenchmarkShellGrep(b *testing.B) {
	ctx := context.Background()
	ws := shellWorkspace(b, 10_000)
	var sh, fsGrep time.Duration
	for b.Loop() {
		t0 := time.Now()
		res, err := ws.Shell(ctx, "grep -rn TODO . | wc -l")
		if err != nil || res.Stdout != "1000\n" {
			b.Fatalf("%+v %v", res, err)
		}
		t1 := time.Now()
		g, err := ws.Grep(ctx, "TODO", "", satchel.GrepOptions{Limit: 100_000})
		if err != nil || len(g.Matches) != 1000 {
			b.Fatalf("%d %v", len(g.Matches), err)
		}
		sh, fsGrep = sh+t1.Sub(t0), fsGrep+time.Since(t1)
	}
	b.ReportMetric(float64(sh.Nanoseconds())/float64(b.N), "sh-ns/op")
	b.ReportMetric(float64(fsGrep.Nanoseconds())/float64(b.N), "fsgrep-ns/op")
	b.ReportMetric(float64(sh)/float64(fsGrep), "sh/fsgrep")
}

// BenchmarkShellStart measures the cost of starting a run on SQLite: a
// script of one builtin (`true`) and one of the commands (`cat` of one
// file), beside a Read of the same file.
func BenchmarkShellStart(b *testing.B) {
	ctx := context.Background()
	ws := shellWorkspace(b, 1_000)
	b.Run("true", func(b *testing.B) {
		for b.Loop() {
			if _, err := ws.Shell(ctx, "true"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cat", func(b *testing.B) {
		for b.Loop() {
			if _, err := ws.Shell(ctx, "cat notes/d07/f7.md"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("read", func(b *testing.B) {
		for b.Loop() {
			if _, err := ws.Read(ctx, "notes/d07/f7.md"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
