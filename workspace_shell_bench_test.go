package satchel_test

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/satchel-dev/satchel"
)

// shellWorkspace writes n files of five lines on SQLite, one in ten with
// a TODO, in n/100 directories.
func shellWorkspace(b *testing.B, n int) *satchel.Workspace {
	b.Helper()
	ctx := context.Background()
	st, err := satchel.Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	ws, err := st.Workspace(ctx, "bench", "sh")
	if err != nil {
		b.Fatal(err)
	}
	for from := 0; from < n; from += 1000 {
		err = ws.Batch(ctx, func(ctx context.Context, bt *satchel.Batch) error {
			for i := from; i < min(n, from+1000); i++ {
				body := "package x\n\nfunc f" + strconv.Itoa(i) + "() {}\n"
				if i%10 == 0 {
					body += "// TODO: file " + strconv.Itoa(i) + "\n"
				}
				if err := bt.Write(ctx, globPath(n, i), body+"// end\n"); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	return ws
}

// BenchmarkShellGrep measures, side by side on one SQLite workspace of
// 10,000 files, `satchel sh -c 'grep -rn TODO . | wc -l'` (Shell) and
// `satchel fs grep TODO` (Workspace.Grep): docs/performance.md compares
// the two.
func BenchmarkShellGrep(b *testing.B) {
	ctx := context.Background()
	ws := shellWorkspace(b, 10_000)
	b.Run("sh", func(b *testing.B) {
		for b.Loop() {
			res, err := ws.Shell(ctx, "grep -rn TODO . | wc -l")
			if err != nil || res.Stdout != "1000\n" {
				b.Fatalf("%+v %v", res, err)
			}
		}
	})
	b.Run("fs-grep", func(b *testing.B) {
		for b.Loop() {
			res, err := ws.Grep(ctx, "TODO", "", satchel.GrepOptions{Limit: 100_000})
			if err != nil || len(res.Matches) != 1000 {
				b.Fatalf("%d %v", len(res.Matches), err)
			}
		}
	})
}

// BenchmarkShellStart measures the cost of starting a run on SQLite: a
// script of one builtin (`true`) and one of the commands (`cat` of one
// file), beside a Read of the same file.
func BenchmarkShellStart(b *testing.B) {
	ctx := context.Background()
	ws := shellWorkspace(b, 1_000)
	b.Run("true", func(b *testing.B) {
		for b.Loop() {
			if _, err := ws.Shell(ctx, "true"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cat", func(b *testing.B) {
		for b.Loop() {
			if _, err := ws.Shell(ctx, "cat notes/d07/f7.md"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("read", func(b *testing.B) {
		for b.Loop() {
			if _, err := ws.Read(ctx, "notes/d07/f7.md"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
