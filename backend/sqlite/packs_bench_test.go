package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/sqlite"
	"github.com/satchel-dev/satchel/satcheltest"
)

// BenchmarkGrepPacks greps 5,000 files, each written in a commit of its
// own, through a cache too small to hold their packs, with the packs read
// one a statement (one) and many a statement (many): what the read-ahead
// of a walk saves on SQLite. One op is one grep of every file.
func BenchmarkGrepPacks(b *testing.B) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "satchel.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ws, err := satchel.New(db).Workspace(ctx, "s", "main")
	if err != nil {
		b.Fatal(err)
	}
	const n = 5000
	for i := range n {
		content := fmt.Sprintf("file %d\n%s", i, strings.Repeat("line of a note\n", 400))
		if err := ws.Write(ctx, fmt.Sprintf("notes/d%02d/f%05d.md", i%50, i), content); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range []struct {
		name string
		b    backend.Backend
	}{{"one", satcheltest.Hide[backend.PacksReader](db)}, {"many", db}} {
		b.Run(c.name, func(b *testing.B) {
			w, err := satchel.New(c.b, satchel.WithCacheBytes(8<<20)).Workspace(ctx, "s", "main")
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				res, err := w.Grep(ctx, "no such line", "", satchel.GrepOptions{})
				if err != nil || len(res.Matches) != 0 || res.Stopped != "" {
					b.Fatalf("grep: %v %+v", err, res)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n/1000, "µs/file")
		})
	}
}
