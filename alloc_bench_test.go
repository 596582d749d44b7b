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
	for i := 0; i < b.N; i++ {
		if err := ws.Write(ctx, bench.W1Path(i%10000), contents[(i+1)%10000]); err != nil {
			b.Fatal(err)
		}
	}
}
