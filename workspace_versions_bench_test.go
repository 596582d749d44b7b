package satchel_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/internal/backendof"
	"github.com/satchel-dev/satchel/internal/bench"
)

// w1Workspace opens a SQLite store holding the first n files of W1.
func w1Workspace(tb testing.TB, n int) (*satchel.Store, *satchel.Workspace) {
	tb.Helper()
	ctx := context.Background()
	st, err := satchel.Open(ctx, filepath.Join(tb.TempDir(), "w.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	ws, _ := st.Workspace(ctx, "default", "main")
	err = ws.Batch(ctx, func(ctx context.Context, b *satchel.Batch) error {
		for i := 0; i < n; i++ {
			if err := b.Write(ctx, bench.W1Path(i), bench.W1Content(1, i)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return st, ws
}

// BenchmarkCheckpointStorage: the storage each checkpoint adds after a
// one-line edit of one file, in a workspace of 1,000 W1 files (7 MB):
// proportional to the edit, not to the workspace. Reported as
// bytes/checkpoint (the SQLite file's growth, WAL checkpointed, over 500
// steps).
func BenchmarkCheckpointStorage(b *testing.B) {
	ctx := context.Background()
	st, ws := w1Workspace(b, 1000)
	ds := backendof.Store(st).(backend.DiskSizer)
	before, _ := ds.DiskSize(ctx)
	const steps = 500
	b.ResetTimer()
	for k := 0; k < b.N; k++ {
		for i := 0; i < steps; i++ {
			p := bench.W1Path((k*steps + i) % 1000)
			old := fmt.Sprintf("line 10 of file %d: ", (k*steps+i)%1000)
			if _, err := ws.StrReplace(ctx, p, old, fmt.Sprintf("LINE 10 (step %d): ", k*steps+i), false); err != nil {
				b.Fatal(err)
			}
			if _, err := ws.Checkpoint(ctx, fmt.Sprintf("s%d-%d", k, i)); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	after, _ := ds.DiskSize(ctx)
	b.ReportMetric(float64(after-before)/float64(b.N*steps), "bytes/checkpoint")
	b.ReportMetric(float64(before)/1000, "workspace-bytes/file")
}

// BenchmarkFork: fork takes the same time for 100 and 10,000 files.
func BenchmarkFork(b *testing.B) {
	for _, n := range []int{100, 10000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			ctx := context.Background()
			_, ws := w1Workspace(b, n)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := ws.Fork(ctx, "", fmt.Sprintf("f%d", i)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestCheckpointStorageIsProportionalToTheChange guards the claim of the
// benchmark above with a loose bound: 50 one-line edits with checkpoints in
// a 1,000-file workspace grow the database by far less than one copy of
// the workspace each.
func TestCheckpointStorageIsProportionalToTheChange(t *testing.T) {
	ctx := context.Background()
	st, ws := w1Workspace(t, 1000)
	ds := backendof.Store(st).(backend.DiskSizer)
	before, _ := ds.DiskSize(ctx)
	for i := 0; i < 50; i++ {
		p := bench.W1Path(i * 7)
		if _, err := ws.StrReplace(ctx, p, fmt.Sprintf("line 10 of file %d: ", i*7), "LINE 10: ", false); err != nil {
			t.Fatal(err)
		}
		if _, err := ws.Checkpoint(ctx, fmt.Sprintf("c%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	after, _ := ds.DiskSize(ctx)
	per := (after - before) / 50
	t.Logf("workspace %d bytes, %d bytes per checkpoint", before, per)
	if per > 32<<10 {
		t.Fatalf("each checkpoint added %d bytes: not proportional to a one-line edit", per)
	}
	// Reading at an old checkpoint returns exactly the bytes it had.
	old, err := ws.At(ctx, "c0")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := old.Read(ctx, bench.W1Path(0))
	want := strings.Replace(bench.W1Content(1, 0), "line 10 of file 0: ", "LINE 10: ", 1)
	if got != want {
		t.Fatal("the file at checkpoint c0 is not what it was")
	}
}

// TestGCReclaimsSpace: after a retention change, GC gives SQLite pages
// back, and every retained commit still reads.
func TestGCReclaimsSpace(t *testing.T) {
	ctx := context.Background()
	st, err := satchel.Open(ctx, filepath.Join(t.TempDir(), "gc.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ws, _ := st.Workspace(ctx, "default", "main")
	ds := backendof.Store(st).(backend.DiskSizer)
	for i := 0; i < 30; i++ {
		// Each version shares nothing with the previous one (~600 KiB).
		big := strings.Repeat(fmt.Sprintf("line of version %04d\n", i), 30000)
		if err := ws.Write(ctx, "big.txt", fmt.Sprintf("version %d\n%s", i, big)); err != nil {
			t.Fatal(err)
		}
	}
	grown, _ := ds.DiskSize(ctx)
	if _, err := ws.SetRetention(ctx, satchel.Policy{MaxCommits: 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.GC(ctx, "", satchel.NoGrace); err != nil {
		t.Fatal(err)
	}
	shrunk, _ := ds.DiskSize(ctx)
	t.Logf("database %d bytes before GC, %d after", grown, shrunk)
	if shrunk > grown/3 {
		t.Fatalf("GC kept %d of %d bytes after dropping 28 of 30 versions", shrunk, grown)
	}
	for _, ref := range []string{"29", "30"} {
		snap, err := ws.At(ctx, ref)
		if err != nil {
			t.Fatal(err)
		}
		got, err := snap.Read(ctx, "big.txt")
		if err != nil || !strings.HasPrefix(got, "version 2") {
			t.Fatalf("retained commit %s after GC: %v", ref, err)
		}
	}
}
