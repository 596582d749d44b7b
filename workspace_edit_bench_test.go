package satchel_test

import (
	"context"
	"testing"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/bench"
)

// BenchmarkEditMemory: one W1 edit (StrReplace of a line in a 7.3 KiB file)
// among 10,000 files on the memory backend, with its allocations. Each file
// alternates between MARKER-i and EDITED-i, so every edit finds its anchor.
func BenchmarkEditMemory(b *testing.B) {
	ctx := context.Background()
	st, _ := satchel.Open(ctx, "memory:")
	ws, _ := st.Workspace(ctx, "default", "main")
	const n = 10000
	markers, edited := make([]string, n), make([]string, n)
	for i := range n {
		markers[i], edited[i] = bench.W1Marker(i), bench.W1Edited(i)
		if err := ws.Write(ctx, bench.W1Path(i), bench.W1Content(1, i)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	for i := 0; i < b.N; i++ {
		k := i % n
		old, new := markers[k], edited[k]
		if (i/n)%2 == 1 {
			old, new = new, old
		}
		if _, err := ws.StrReplace(ctx, bench.W1Path(k), old, new, false); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}
