package satchel_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel"
)

// BenchmarkExportImport exports a SQLite thread of 1,000 files of 7 KiB
// and 1,000 more commits (each edits one file, W3's step), and imports the
// file into a fresh SQLite database and a memory one. It reports the
// file's size per commit.
func BenchmarkExportImport(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	src, err := satchel.Open(ctx, filepath.Join(dir, "src.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	ws, _ := src.Workspace(ctx, "s", "main")
	body := strings.Repeat("a line of a workspace file, some seventy bytes long to make 7 KiB\n", 105) + "z\n"
	if err := ws.Batch(ctx, func(ctx context.Context, bt *satchel.Batch) error {
		for i := range 1000 {
			if err := bt.Write(ctx, fmt.Sprintf("f/%04d.md", i), body); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	for i := range 1000 {
		if _, err := ws.StrReplace(ctx, fmt.Sprintf("f/%04d.md", i), "a line of a workspace file, some seventy bytes long to make 7 KiB\nz", fmt.Sprintf("edit %04d\n", i), false); err != nil {
			b.Fatal(err)
		}
	}
	var file bytes.Buffer
	b.Run("export", func(b *testing.B) {
		for range b.N {
			file.Reset()
			if _, err := src.Export(ctx, &file, satchel.ExportOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(file.Len())/1001, "bytes/commit")
	})
	for _, kind := range []string{"sqlite", "memory"} {
		b.Run("import-"+kind, func(b *testing.B) {
			for i := range b.N {
				dsn := "memory:"
				if kind == "sqlite" {
					dsn = filepath.Join(dir, fmt.Sprintf("dst-%d-%d.db", b.N, i))
				}
				dst, err := satchel.Open(ctx, dsn)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := dst.Import(ctx, bytes.NewReader(file.Bytes()), int64(file.Len()), satchel.ImportOptions{}); err != nil {
					b.Fatal(err)
				}
				dst.Close()
			}
		})
	}
}
