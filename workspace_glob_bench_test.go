package satchel_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/satchel-dev/satchel"
)

// globPath returns file i of a corpus of n files in n/100 directories of
// 100 files each: notes/d{i%(n/100):02}/f{i}.md. Whatever n, notes/d07
// holds exactly 100 files, so a glob of notes/d07/*.md returns the same
// answer, and any growth of its cost with n is the cost of the paths it
// should not have looked at.
func globPath(n, i int) string {
	return fmt.Sprintf("notes/d%02d/f%d.md", i%(n/100), i)
}

// globWorkspace writes n small files in a memory store, 1,000 a commit
// (a Batch checks each new path against the batch's pending writes by a
// scan of them, so much larger batches grow quadratically).
func globWorkspace(tb testing.TB, n int) *satchel.Workspace {
	tb.Helper()
	ctx := context.Background()
	st, err := satchel.Open(ctx, "memory:")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	ws, err := st.Workspace(ctx, "bench", "glob")
	if err != nil {
		tb.Fatal(err)
	}
	for from := 0; from < n; from += 1000 {
		err = ws.Batch(ctx, func(ctx context.Context, b *satchel.Batch) error {
			for i := from; i < min(n, from+1000); i++ {
				if err := b.Write(ctx, globPath(n, i), "file "+strconv.Itoa(i)+"\n"); err != nil {
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

// BenchmarkGlobDir globs notes/d07/*.md (100 matches) in workspaces of
// 1,000, 10,000 and 100,000 files: the cost stays flat, because a glob
// scans only the range of paths under its literal prefix (notes/d07/),
// descending the tree in O(log n), never the N paths. cpu-ns/op is the
// process's CPU time a glob: on a loaded machine the wall time also
// counts the waits for a core.
func BenchmarkGlobDir(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run("N="+strconv.Itoa(n), func(b *testing.B) {
			ws := globWorkspace(b, n)
			ctx := context.Background()
			c0 := cpuTime()
			for b.Loop() {
				got, err := ws.Glob(ctx, "notes/d07/*.md")
				if err != nil || len(got) != 100 {
					b.Fatalf("%d paths (%v), want 100", len(got), err)
				}
			}
			b.ReportMetric(float64((cpuTime()-c0).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkGlobAll globs notes/**/*.md, which must visit every path: the
// contrast to BenchmarkGlobDir, growing with n; cpu-ns/path is its CPU
// time per path returned, flat when the cost is linear.
func BenchmarkGlobAll(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run("N="+strconv.Itoa(n), func(b *testing.B) {
			ws := globWorkspace(b, n)
			ctx := context.Background()
			c0 := cpuTime()
			for b.Loop() {
				got, err := ws.Glob(ctx, "notes/**/*.md")
				if err != nil || len(got) != n {
					b.Fatalf("%d paths (%v), want %d", len(got), err, n)
				}
			}
			cpu := float64((cpuTime() - c0).Nanoseconds()) / float64(b.N)
			b.ReportMetric(cpu, "cpu-ns/op")
			b.ReportMetric(cpu/float64(n), "cpu-ns/path")
		})
	}
}
