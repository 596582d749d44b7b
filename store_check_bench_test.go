package satchel_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/bench"
)

// BenchmarkCheck checks a SQLite store of W1's 10,000 files written one
// commit each (10,000 retained commits sharing their subtrees); it reports
// the objects read.
func BenchmarkCheck(b *testing.B) {
	ctx := context.Background()
	st, err := satchel.Open(ctx, filepath.Join(b.TempDir(), "check.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	ws, _ := st.Workspace(ctx, "bench", "main")
	for i := range 10000 {
		if err := ws.Write(ctx, bench.W1Path(i), bench.W1Content(1, i)); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	var rep satchel.CheckReport
	for b.Loop() {
		if rep, err = st.Check(ctx); err != nil || len(rep.Faults) > 0 {
			b.Fatal(err, rep.Faults)
		}
	}
	b.ReportMetric(float64(rep.Objects), "objects")
	b.ReportMetric(float64(rep.Commits), "commits")
}
