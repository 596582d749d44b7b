package satchel_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/bench"
)

// BenchmarkMerge: a merge of a fork on which 10 files changed into a
// thread on which 10 files changed (5 of them the same files, at other
// lines: a line merge each), on SQLite, for 1,000 and 100,000 W1 files
// (-benchtime=Nx). Its cost follows the paths changed since the fork,
// not the workspace: the two sizes should take about the same time.
// Each iteration forks and makes the changes untimed, then merges.
func BenchmarkMerge(b *testing.B) {
	for _, n := range []int{1000, 100000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			ctx := context.Background()
			_, ws := w1Workspace(b, n)
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
			b.ResetTimer()
			for k := 0; k < b.N; k++ {
				b.StopTimer()
				fk, err := ws.Fork(ctx, "", fmt.Sprintf("side%d", k))
				if err != nil {
					b.Fatal(err)
				}
				var ours, theirs []int
				for j := range 10 {
					ours = append(ours, (k*15+j)%n)
					theirs = append(theirs, (k*15+5+j)%n)
				}
				edit(ws, ours, 10, fmt.Sprintf("main%d", k))
				edit(fk, theirs, 30, fmt.Sprintf("side%d", k))
				b.StartTimer()
				r, err := ws.Merge(ctx, fmt.Sprintf("side%d", k))
				if err != nil {
					b.Fatal(err)
				}
				if len(r.Paths) != 10 {
					b.Fatalf("merged %d paths, want 10", len(r.Paths))
				}
			}
		})
	}
}
