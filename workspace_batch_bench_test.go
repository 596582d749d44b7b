package satchel_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/satchel-dev/satchel"
)

// BenchmarkBatchWrites: a batch of n writes costs n times one write, not
// n² (each write checks that no directory is at its path).
func BenchmarkBatchWrites(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			ctx := context.Background()
			st, _ := satchel.Open(ctx, "memory:")
			for i := 0; i < b.N; i++ {
				ws, _ := st.Workspace(ctx, "default", fmt.Sprintf("t%d", i))
				err := ws.Batch(ctx, func(ctx context.Context, bt *satchel.Batch) error {
					for j := 0; j < n; j++ {
						if err := bt.Write(ctx, fmt.Sprintf("d%d/f%d", j%10, j), "x"); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/write")
		})
	}
}
