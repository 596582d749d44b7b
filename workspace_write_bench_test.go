package satchel_test

import (
	"context"
	"testing"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/bench"
)

// BenchmarkWriteMemory: one W1 write (7.3 KiB) among 10,000 files on the
// memory backend, with its allocations.
func BenchmarkWriteMemory(b *testing.B) {
	ctx := context.Background()
	st, _ := satchel.Open(ctx, "memory:")
	ws, _ := st.Workspace(ctx, "default", "main")
	contents := make([]string, 10000)
	for i := range contents {
		contents[i] = bench.W1Content(1, i)
		if err := ws.Write(ctx, bench.W1Path(i), contents[i]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	for i := 0; i < b.N; i++ {
		if err := ws.Write(ctx, bench.W1Path(i%10000), contents[(i+1)%10000]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}

// BenchmarkW1PhasesMemory: W1's write phase (10,000 files of 7.3 KiB into
// an empty workspace) then its append phase (10,000 lines to one log), as
// `satchel bench` runs them, on a fresh memory store each round: unlike
// BenchmarkWriteMemory, the heap stays the size W1 makes it.
func BenchmarkW1PhasesMemory(b *testing.B) {
	ctx := context.Background()
	contents := make([]string, 10000)
	for i := range contents {
		contents[i] = bench.W1Content(1, i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	for b.Loop() {
		st, _ := satchel.Open(ctx, "memory:")
		ws, _ := st.Workspace(ctx, "default", "main")
		for i := range contents {
			if err := ws.Write(ctx, bench.W1Path(i), contents[i]); err != nil {
				b.Fatal(err)
			}
		}
		for j := 0; j < 10000; j++ {
			if err := ws.Append(ctx, "log.txt", bench.W1AppendLine(j)); err != nil {
				b.Fatal(err)
			}
		}
		st.Close()
	}
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}
