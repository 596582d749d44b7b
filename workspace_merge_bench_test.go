package satchel_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/bench"
)

// mergeWorkspace opens a SQLite store holding n files of 40 lines (1 KB)
// at W1's paths, written 2,000 a commit.
func mergeWorkspace(tb testing.TB, n int) *satchel.Workspace {
	tb.Helper()
	ctx := context.Background()
	st, err := satchel.Open(ctx, filepath.Join(tb.TempDir(), "m.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	ws, _ := st.Workspace(ctx, "default", "main")
	for from := 0; from < n; from += 2000 {
		err = ws.Batch(ctx, func(ctx context.Context, bt *satchel.Batch) error {
			for i := from; i < min(n, from+2000); i++ {
				var c strings.Builder
				for k := 1; k <= 40; k++ {
					fmt.Fprintf(&c, "line %d of file %d: some text to merge\n", k, i)
				}
				if err := bt.Write(ctx, bench.W1Path(i), c.String()); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
	return ws
}

// BenchmarkMerge: a merge of a fork on which 10 files changed into a
// thread on which 10 files changed (5 of them the same files, at other
// lines: a line merge each), on SQLite, for 1,000 and 100,000 files
// (-benchtime=Nx). Its cost follows the paths changed since the fork,
// not the workspace: the two sizes should take about the same time.
// Each iteration forks and makes the changes untimed, then merges;
// cpu-ns/op is the process's CPU time a merge.
func BenchmarkMerge(b *testing.B) {
	pb, runs := b, 0
	for _, n := range []int{1000, 100000} {
		var ws *satchel.Workspace
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			if ws == nil {
				ws = mergeWorkspace(pb, n) // once for every run of b.Run
			}
			ctx := context.Background()
			runs++
			tag := fmt.Sprint(runs)
			edit := func(w *satchel.Workspace, files []int, line int, tag string) {
				err := w.Batch(ctx, func(ctx context.Context, bt *satchel.Batch) error {
					for _, i := range files {
						old := fmt.Sprintf("line %d of file %d: ", line, i)
						if _, err := bt.StrReplace(ctx, bench.W1Path(i), old, old+tag+" ", false); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			var cpu time.Duration
			b.ResetTimer()
			for k := 0; k < b.N; k++ {
				b.StopTimer()
				side := fmt.Sprintf("side%s-%d", tag, k)
				fk, err := ws.Fork(ctx, "", side)
				if err != nil {
					b.Fatal(err)
				}
				var ours, theirs []int
				for j := range 10 {
					ours = append(ours, (k*15+j)%n)
					theirs = append(theirs, (k*15+5+j)%n)
				}
				edit(ws, ours, 10, fmt.Sprintf("main%s-%d", tag, k))
				edit(fk, theirs, 30, fmt.Sprintf("side%s-%d", tag, k))
				b.StartTimer()
				c0 := cpuTime()
				r, err := ws.Merge(ctx, side)
				cpu += cpuTime() - c0
				if err != nil {
					b.Fatal(err)
				}
				if len(r.Paths) != 10 {
					b.Fatalf("merged %d paths, want 10", len(r.Paths))
				}
			}
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}
