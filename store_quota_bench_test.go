package satchel_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/bench"
)

// BenchmarkWriteQuota: W1's write phase on SQLite (a new 2-7 KB file per
// operation) in a scope without a quota and in one whose quotas every
// write stays under, side by side: what keeping a scope's counters costs
// a write. Compare the two sub-benchmarks of one run
// (go test -run '^$' -bench WriteQuota -count 6).
func BenchmarkWriteQuota(b *testing.B) {
	for _, quota := range []bool{false, true} {
		name := "none"
		if quota {
			name = "under"
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			st, err := satchel.Open(ctx, filepath.Join(b.TempDir(), "q.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			if quota {
				big := int64(1) << 40
				if err := st.SetQuota(ctx, "default", satchel.Quota{Bytes: big, Files: big, Threads: big, Documents: big, HistoryBytes: big}); err != nil {
					b.Fatal(err)
				}
			}
			ws, err := st.Workspace(ctx, "default", "main")
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			cpu0 := processCPU()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := ws.Write(ctx, bench.W1Path(i), bench.W1Content(1, i)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}
