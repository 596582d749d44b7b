package satchel_test

import (
	"context"
	"testing"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/bench"
)

// BenchmarkAppendMemory: W1's append phase on memory: 40-byte lines
// appended to one growing log (10,000 lines, 400 KB, per 10,000 ops).
func BenchmarkAppendMemory(b *testing.B) {
	ctx := context.Background()
	st, _ := satchel.Open(ctx, "memory:")
	ws, _ := st.Workspace(ctx, "default", "main")
	b.ReportAllocs()
	cpu0 := processCPU()
	for i := 0; i < b.N; i++ {
		if i%10000 == 0 {
			_ = ws.Delete(ctx, "log.txt")
		}
		if err := ws.Append(ctx, "log.txt", bench.W1AppendLine(i)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}
