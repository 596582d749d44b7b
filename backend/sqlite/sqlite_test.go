package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/satchel-dev/satchel/backend"
)

func openTest(t testing.TB, opt options) *Backend {
	t.Helper()
	b, err := open(t.Context(), filepath.Join(t.TempDir(), "satchel.db"), opt)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestPragmas(t *testing.T) {
	b := openTest(t, options{})
	defer b.Close()
	ctx := t.Context()
	for _, db := range []struct {
		name string
		db   *sql.DB
	}{{"writer", b.w}, {"reader", b.r}} {
		for _, p := range []struct {
			pragma string
			want   string
		}{
			{"journal_mode", "wal"},
			{"synchronous", "1"},
			{"busy_timeout", "10000"},
			{"auto_vacuum", "2"},
		} {
			var got string
			if err := db.db.QueryRowContext(ctx, "PRAGMA "+p.pragma).Scan(&got); err != nil {
				t.Fatalf("%s: PRAGMA %s: %v", db.name, p.pragma, err)
			}
			if got != p.want {
				t.Errorf("%s: PRAGMA %s = %s, want %s", db.name, p.pragma, got, p.want)
			}
		}
	}
	// Readers map the file; the writer reads through its page cache.
	for _, db := range []struct {
		name string
		db   *sql.DB
		want int64
	}{{"writer", b.w, 0}, {"reader", b.r, 1 << 30}} {
		var mm int64
		if err := db.db.QueryRowContext(ctx, "PRAGMA mmap_size").Scan(&mm); err != nil || mm != db.want {
			t.Errorf("%s: PRAGMA mmap_size = %d (%v), want %d", db.name, mm, err, db.want)
		}
	}
	var ac int
	if err := b.w.QueryRowContext(ctx, "PRAGMA wal_autocheckpoint").Scan(&ac); err != nil || ac != 4000 {
		t.Errorf("writer: wal_autocheckpoint = %d (%v), want 4000", ac, err)
	}
	// Readers cannot write.
	if _, err := b.r.ExecContext(ctx, "DELETE FROM settings"); err == nil {
		t.Errorf("a reader connection wrote")
	}
}

func TestOpenDSN(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	p := filepath.Join(dir, "a.db")
	b, err := Open(ctx, "file:"+p)
	if err != nil {
		t.Fatal(err)
	}
	if b.Path() != p {
		t.Errorf("Path() = %q, want %q", b.Path(), p)
	}
	th, err := b.CreateThread(ctx, "s", "main")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	// Reopening finds the data and applies no migration twice.
	b, err = Open(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	got, err := b.Thread(ctx, "s", "main", false)
	if err != nil || got.ID != th.ID {
		t.Errorf("after reopening: %+v, %v", got, err)
	}
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := b.r.QueryRowContext(ctx, "SELECT count(*) FROM schema_migrations").Scan(&n); err != nil || n != len(ms) {
		t.Errorf("schema_migrations has %d rows (%v), want %d", n, err, len(ms))
	}
	if err := b.Migrate(ctx); err != nil {
		t.Errorf("Migrate of an up-to-date database: %v", err)
	}
	if v, err := b.SchemaVersion(ctx); err != nil || v != len(ms) {
		t.Errorf("SchemaVersion = %d, %v; want %d", v, err, len(ms))
	}
	for _, bad := range []string{"", "file:", filepath.Join(dir, "x.db?_pragma=foo"), ":memory:", "file::memory:?cache=shared"} {
		if b, err := Open(ctx, bad); err == nil {
			b.Close()
			t.Errorf("Open(%q) succeeded", bad)
		}
	}
}

// TestNewerSchema: a schema newer by an expand migration is opened; one
// newer by a contract migration is refused.
func TestNewerSchema(t *testing.T) {
	ctx := t.Context()
	b := openTest(t, options{})
	p := b.Path()
	if _, err := b.w.ExecContext(ctx, "INSERT INTO schema_migrations (version, name, applied) VALUES (999, 'future', 0)"); err != nil {
		t.Fatal(err)
	}
	b.Close()
	b, err := Open(ctx, p)
	if err != nil {
		t.Fatalf("Open of a database newer by an expand migration: %v", err)
	}
	if _, err := b.w.ExecContext(ctx, "UPDATE schema_migrations SET kind = 'contract' WHERE version = 999"); err != nil {
		t.Fatal(err)
	}
	b.Close()
	for name, open := range map[string]func(context.Context, string) (*Backend, error){"Open": Open, "OpenReadOnly": OpenReadOnly} {
		if b, err := open(ctx, p); err == nil {
			b.Close()
			t.Errorf("%s of a database newer by a contract migration succeeded", name)
		} else if !errors.Is(err, backend.ErrSchemaTooNew) || !strings.Contains(err.Error(), "upgrade satchel") {
			t.Errorf("%s: error %q does not say to upgrade satchel", name, err)
		}
	}
}

// TestConcurrentOpen opens one new file from many Backends at once: the
// migrations run exactly once and every Open succeeds.
func TestConcurrentOpen(t *testing.T) {
	p := filepath.Join(t.TempDir(), "race.db")
	const n = 8
	bs := make([]*Backend, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { bs[i], errs[i] = Open(t.Context(), p) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("Open %d: %v", i, errs[i])
		}
		defer bs[i].Close()
	}
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	var versions int
	if err := bs[0].r.QueryRow("SELECT count(*) FROM schema_migrations").Scan(&versions); err != nil || versions != len(ms) {
		t.Errorf("schema_migrations has %d rows (%v), want %d", versions, err, len(ms))
	}
	var av int
	if err := bs[0].r.QueryRow("PRAGMA auto_vacuum").Scan(&av); err != nil || av != 2 {
		t.Errorf("auto_vacuum = %d (%v), want 2 (incremental)", av, err)
	}
}

// TestVacuum checks that deleted packs give their pages back to the file
// system.
func TestVacuum(t *testing.T) {
	ctx := t.Context()
	b := openTest(t, options{})
	defer b.Close()
	th, err := b.CreateThread(ctx, "s", "main")
	if err != nil {
		t.Fatal(err)
	}
	pack := bytes.Repeat([]byte("0123456789abcdef"), 64<<10/16)
	var ids []int64
	var seqs []int64
	for seq := int64(1); seq <= 65; seq++ {
		res, err := b.Append(ctx, []backend.NewCommit{{Thread: th.ID, Seq: seq, Root: []byte("r"), Meta: []byte("{}"), Pack: pack}})
		if err != nil || res[0].Err != nil {
			t.Fatal(err, res[0].Err)
		}
		ids = append(ids, res[0].Commit.ID)
		seqs = append(seqs, seq)
	}
	full, err := b.DiskSize(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Drop(ctx, th.ID, seqs); err != nil {
		t.Fatal(err)
	}
	if err := b.DeletePacks(ctx, ids); err != nil {
		t.Fatal(err)
	}
	if err := b.Vacuum(ctx); err != nil {
		t.Fatal(err)
	}
	after, err := b.DiskSize(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("65 packs of 64 KiB: %d bytes; after deleting 64 and vacuuming: %d bytes", full, after)
	if full < 64*64<<10 || after > full/8 {
		t.Errorf("disk size %d before, %d after deleting nearly everything", full, after)
	}
	var free int64
	if err := b.r.QueryRowContext(ctx, "PRAGMA freelist_count").Scan(&free); err != nil || free != 0 {
		t.Errorf("freelist_count = %d (%v) after Vacuum", free, err)
	}
}

// TestWALBounded: the writer's own automatic checkpoint (walBackstop)
// bounds the WAL whatever the data written, here 50 MB of packs. The
// checkpointer goroutine is stopped, so nothing depends on scheduling: the
// backstop checkpoints the whole WAL at the commit that takes it past
// 4,000 pages, and the next commit starts it over. How far the WAL grows
// while the checkpointer runs beside the writer depends on the machine's
// load: BenchmarkWALSize reports it.
func TestWALBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 50 MB")
	}
	b := openTest(t, options{})
	defer b.Close()
	if err := b.ckpt.close(); err != nil {
		t.Fatal(err)
	}
	largest := appendPacks(t, b, 5000)
	var pageSize int64
	if err := b.w.QueryRowContext(t.Context(), "PRAGMA page_size").Scan(&pageSize); err != nil {
		t.Fatal(err)
	}
	// 4,000 pages, plus the frames of the commit that passed them (a
	// 10 KB pack, its row and index pages, and what a split of the
	// B-trees adds), each frame with its header.
	bound := (4000+64)*(pageSize+24) + 32
	t.Logf("largest WAL seen: %d bytes (bound %d)", largest, bound)
	if largest > bound {
		t.Errorf("the WAL grew to %d bytes, past the backstop's %d", largest, bound)
	}
}

// BenchmarkWALSize reports the largest WAL seen while one writer appends
// 10 KB packs with the checkpointer running (wal-bytes), which depends on
// how far the checkpointer's copy lags behind the writer.
func BenchmarkWALSize(b *testing.B) {
	for b.Loop() {
		be := openTest(b, options{})
		largest := appendPacks(b, be, 5000)
		be.Close()
		b.ReportMetric(float64(largest), "wal-bytes")
	}
}

// appendPacks appends n commits of a 10 KB pack each and returns the
// largest size of the WAL seen, every 100 commits.
func appendPacks(t testing.TB, b *Backend, n int64) int64 {
	ctx := t.Context()
	th, err := b.CreateThread(ctx, "s", "main")
	if err != nil {
		t.Fatal(err)
	}
	pack := make([]byte, 10<<10)
	for i := range pack {
		pack[i] = byte(i*7 + i>>8)
	}
	var largest int64
	for seq := int64(1); seq <= n; seq++ {
		res, err := b.Append(ctx, []backend.NewCommit{{Thread: th.ID, Seq: seq, Root: []byte("r"), Meta: []byte("{}"), Pack: pack}})
		if err != nil || res[0].Err != nil {
			t.Fatal(err, res[0].Err)
		}
		if seq%100 == 0 {
			if fi, err := os.Stat(b.Path() + "-wal"); err == nil {
				largest = max(largest, fi.Size())
			}
		}
	}
	return largest
}
