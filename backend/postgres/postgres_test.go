package postgres

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/internal/pgtest"
	"github.com/satchel-dev/satchel/internal/testenv"
)

// testURL returns the server of the tests, or skips them.
func testURL(t testing.TB) string {
	return testenv.PostgresURL(t)
}

var schemas atomic.Int64

// testSchema names a schema of its own for one test.
func testSchema() string {
	return fmt.Sprintf("satchel_test_%d_%d", os.Getpid(), schemas.Add(1))
}

// openTest opens a backend in a fresh schema, dropped when the test ends.
func openTest(t testing.TB) *Backend {
	t.Helper()
	return openTestAt(t, testURL(t))
}

// openTestAt is openTest on the server at url.
func openTestAt(t testing.TB, url string) *Backend {
	t.Helper()
	schema := testSchema()
	pgtest.Schema(t, url, schema, schemaKind)
	b, err := Open(t.Context(), withSearchPath(url, schema))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// schemaKind is a schema as Open leaves a new one: every migration
// applied, no rows but the record of the migrations. It is
// postgrestest.Kind, which this package's tests cannot import.
var schemaKind = pgtest.Kind{
	Name: "satchel",
	Migrate: func(ctx context.Context, url string) error {
		b, err := Open(ctx, url)
		if err != nil {
			return err
		}
		return b.Close()
	},
	Keep: map[string]string{"schema_migrations": "SELECT version, name, kind FROM schema_migrations ORDER BY version"},
}

// TestConcurrentMigrate opens one new schema from many Backends at once:
// the migrations run once and every Open succeeds.
func TestConcurrentMigrate(t *testing.T) {
	url := testURL(t)
	schema := testSchema()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	_, err = conn.Exec(t.Context(), "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize())
	conn.Close(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { DropSchema(context.Background(), url, schema) })
	const n = 8
	bs := make([]*Backend, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { bs[i], errs[i] = Open(t.Context(), withSearchPath(url, schema)) })
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
	v, err := bs[0].SchemaVersion(t.Context())
	if err != nil || v != len(ms) {
		t.Errorf("SchemaVersion = %d, %v; want %d", v, err, len(ms))
	}
	var rows int
	if err := bs[0].pool.QueryRow(t.Context(), "SELECT count(*) FROM schema_migrations WHERE version > 0").Scan(&rows); err != nil || rows != len(ms) {
		t.Errorf("schema_migrations has %d rows (%v), want %d", rows, err, len(ms))
	}
	if _, err := bs[0].CreateThread(t.Context(), "s", "main"); err != nil {
		t.Error(err)
	}
}

func withSearchPath(url, schema string) string {
	if strings.Contains(url, "?") {
		return url + "&search_path=" + schema
	}
	return url + "?search_path=" + schema
}

// TestNewerSchema: a schema newer by an expand migration is run on (a
// rolling upgrade's older replicas); one newer by a contract migration is
// refused.
func TestNewerSchema(t *testing.T) {
	b := openTest(t)
	defer b.Close()
	if _, err := b.pool.Exec(t.Context(), "INSERT INTO schema_migrations (version, name) VALUES (999, 'future')"); err != nil {
		t.Fatal(err)
	}
	if err := b.Migrate(t.Context()); err != nil {
		t.Errorf("Migrate of a database newer by an expand migration: %v", err)
	}
	if _, err := b.pool.Exec(t.Context(), "UPDATE schema_migrations SET kind = 'contract' WHERE version = 999"); err != nil {
		t.Fatal(err)
	}
	err := b.Migrate(t.Context())
	if !errors.Is(err, backend.ErrSchemaTooNew) || !strings.Contains(err.Error(), "upgrade satchel") {
		t.Errorf("Migrate of a database newer by a contract migration: %v", err)
	}
}

// TestCollation checks that sorted text columns compare bytes, whatever
// the database's locale.
func TestCollation(t *testing.T) {
	b := openTest(t)
	defer b.Close()
	rows, _ := b.pool.Query(t.Context(), `SELECT table_name || '.' || column_name, coalesce(collation_name, '')
		FROM information_schema.columns
		WHERE table_schema = current_schema() AND data_type = 'text' AND table_name <> 'schema_migrations'`)
	cols, err := pgx.CollectRows(rows, pgx.RowToStructByPos[struct{ Col, Coll string }])
	if err != nil {
		t.Fatal(err)
	}
	if len(cols) < 7 {
		t.Errorf("found only %d text columns: %v", len(cols), cols)
	}
	for _, c := range cols {
		if c.Coll != "C" {
			t.Errorf("column %s has collation %q, want C", c.Col, c.Coll)
		}
	}
}

// TestTwoBackendsOneThread races appends to one thread from two Backends
// (two pools, as two processes would have).
func TestTwoBackendsOneThread(t *testing.T) {
	url := testURL(t)
	schema := testSchema()
	a, err := OpenFresh(t.Context(), url, schema)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { DropSchema(context.Background(), url, schema) })
	defer a.Close()
	b, err := Open(t.Context(), withSearchPath(url, schema))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	th, err := a.CreateThread(t.Context(), "s", "race")
	if err != nil {
		t.Fatal(err)
	}
	const target = 200
	var mu sync.Mutex
	won := map[int64]string{}
	var wg sync.WaitGroup
	for i, be := range []*Backend{a, b, a, b} {
		name := fmt.Sprint("w", i)
		wg.Go(func() {
			for {
				h, _, err := be.Head(t.Context(), th.ID)
				if err != nil {
					t.Error(err)
					return
				}
				if h.Seq >= target {
					return
				}
				res, err := be.Append(t.Context(), []backend.NewCommit{{Thread: th.ID, Seq: h.Seq + 1, Root: []byte(name), Meta: []byte("{}")}})
				if err != nil {
					t.Error(err)
					return
				}
				if res[0].Err == nil {
					mu.Lock()
					if prev, dup := won[h.Seq+1]; dup {
						t.Errorf("seq %d won by %s and %s", h.Seq+1, prev, name)
					}
					won[h.Seq+1] = name
					mu.Unlock()
				} else if !errors.Is(res[0].Err, backend.ErrStale) {
					t.Error(res[0].Err)
					return
				}
			}
		})
	}
	wg.Wait()
	l, err := a.Log(t.Context(), th.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(l) != target || len(won) != target {
		t.Fatalf("log has %d commits, %d wins; want %d", len(l), len(won), target)
	}
	for _, c := range l {
		if string(c.Root) != won[c.Seq] {
			t.Errorf("seq %d stored by %q, won by %q", c.Seq, c.Root, won[c.Seq])
		}
	}
}

// TestCheckpointNameRace races SetCheckpoint against an Append that names
// its commit with the same checkpoint: exactly one wins, and an Append
// that loses stores nothing. This exercises the retried failure of
// appendFull.
func TestCheckpointNameRace(t *testing.T) {
	b := openTest(t)
	defer b.Close()
	ctx := t.Context()
	th, err := b.CreateThread(ctx, "s", "main")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Append(ctx, []backend.NewCommit{{Thread: th.ID, Seq: 1, Root: []byte("r"), Meta: []byte("{}")}}); err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		name := fmt.Sprint("cp", i)
		h, _, err := b.Head(ctx, th.ID)
		if err != nil {
			t.Fatal(err)
		}
		var setErr, appErr error
		var res []backend.AppendResult
		var wg sync.WaitGroup
		wg.Go(func() { setErr = b.SetCheckpoint(ctx, th.ID, name, h.Seq) })
		wg.Go(func() {
			res, appErr = b.Append(ctx, []backend.NewCommit{{Thread: th.ID, Seq: h.Seq + 1, Root: []byte("r"), Meta: []byte("{}"), Checkpoint: name}})
		})
		wg.Wait()
		if appErr != nil {
			t.Fatalf("Append: %v", appErr)
		}
		seq, err := b.CheckpointSeq(ctx, th.ID, name)
		if err != nil {
			t.Fatalf("round %d: checkpoint %s: %v", i, name, err)
		}
		head, _, _ := b.Head(ctx, th.ID)
		switch {
		case setErr == nil && res[0].Err == nil:
			t.Fatalf("round %d: both SetCheckpoint and Append took %s", i, name)
		case setErr == nil:
			if !errors.Is(res[0].Err, backend.ErrCheckpointExists) || seq != h.Seq || head.Seq != h.Seq {
				t.Fatalf("round %d: SetCheckpoint won; Append: %v; checkpoint at %d, head %d", i, res[0].Err, seq, head.Seq)
			}
		case res[0].Err == nil:
			if !errors.Is(setErr, backend.ErrCheckpointExists) || seq != h.Seq+1 || head.Seq != h.Seq+1 {
				t.Fatalf("round %d: Append won; SetCheckpoint: %v; checkpoint at %d, head %d", i, setErr, seq, head.Seq)
			}
		default:
			t.Fatalf("round %d: neither won: %v, %v", i, setErr, res[0].Err)
		}
	}
	t.Logf("%d Appends retried after losing the name between check and insert", b.retries.Load())
}

// TestDeleteThreadRacingAppends deletes a thread while appends to it run:
// no retained commit may be left in the deleted thread.
func TestDeleteThreadRacingAppends(t *testing.T) {
	b := openTest(t)
	defer b.Close()
	ctx := t.Context()
	for round := range 10 {
		th, err := b.CreateThread(ctx, "s", fmt.Sprint("t", round))
		if err != nil {
			t.Fatal(err)
		}
		// Each writer appends until it finds the thread gone. The
		// thread is deleted once they have appended 30 commits together.
		var wg sync.WaitGroup
		var appended atomic.Int64
		enough := make(chan struct{})
		for range 3 {
			wg.Go(func() {
				for {
					h, _, err := b.Head(ctx, th.ID)
					if errors.Is(err, backend.ErrNoThread) {
						return
					}
					if err != nil {
						t.Error(err)
						return
					}
					if _, err := b.Append(ctx, []backend.NewCommit{{Thread: th.ID, Seq: h.Seq + 1, Root: []byte("r"), Meta: []byte("{}")}}); err != nil {
						t.Error(err)
						return
					}
					if appended.Add(1) == 30 {
						close(enough)
					}
				}
			})
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-enough:
		case <-done: // the writers failed (reported)
			return
		}
		if err := b.DeleteThread(ctx, th.ID); err != nil {
			t.Fatal(err)
		}
		<-done // every writer has seen the thread gone
		var retained int
		if err := b.pool.QueryRow(ctx, "SELECT count(*) FROM commits WHERE thread_id = $1 AND dropped_at IS NULL", th.ID).Scan(&retained); err != nil {
			t.Fatal(err)
		}
		if retained != 0 {
			t.Fatalf("round %d: %d retained commits left in a deleted thread", round, retained)
		}
	}
}

func TestDiskSizeAndVacuum(t *testing.T) {
	b := openTest(t)
	defer b.Close()
	ctx := t.Context()
	th, err := b.CreateThread(ctx, "s", "main")
	if err != nil {
		t.Fatal(err)
	}
	empty, err := b.DiskSize(ctx)
	if err != nil || empty <= 0 {
		t.Fatalf("DiskSize of an empty database = %d, %v", empty, err)
	}
	pack := make([]byte, 64<<10)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range pack {
		pack[i] = byte(r.Uint32())
	}
	var ids, seqs []int64
	for seq := int64(1); seq <= 40; seq++ {
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
	if full <= empty {
		t.Errorf("DiskSize %d after storing packs, %d empty", full, empty)
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
	t.Logf("empty %d bytes, 40 packs of 64 KiB %d bytes, after deleting 39 and vacuuming %d bytes", empty, full, after)
}

// TestPackCompression stores a pack large enough to be compressed and
// checks the method the server used: lz4 where the server has it
// (migration 0007), pglz otherwise; the pack reads back whole either way.
func TestPackCompression(t *testing.T) {
	b := openTest(t)
	ctx := t.Context()
	var lz4 bool
	if err := b.pool.QueryRow(ctx, `SELECT 'lz4' = ANY(enumvals) FROM pg_settings WHERE name = 'default_toast_compression'`).Scan(&lz4); err != nil {
		t.Fatal(err)
	}
	th, err := b.CreateThread(ctx, "s", "packs")
	if err != nil {
		t.Fatal(err)
	}
	pack := []byte(strings.Repeat("line of a text file that compresses well\n", 2000))
	res, err := b.Append(ctx, []backend.NewCommit{{Thread: th.ID, Seq: 1, Root: []byte("r"), Meta: []byte("{}"), Pack: pack}})
	if err != nil || res[0].Err != nil {
		t.Fatal(err, res[0].Err)
	}
	var method *string
	if err := b.pool.QueryRow(ctx, "SELECT pg_column_compression(pack) FROM commits WHERE id = $1", res[0].Commit.ID).Scan(&method); err != nil {
		t.Fatal(err)
	}
	want := "pglz"
	if lz4 {
		want = "lz4"
	}
	if method == nil || *method != want {
		got := "none"
		if method != nil {
			got = *method
		}
		t.Errorf("pack stored with compression %s, want %s", got, want)
	}
	got, err := b.Pack(ctx, res[0].Commit.ID)
	if err != nil || got != string(pack) {
		t.Errorf("Pack read back %d bytes (%v), want the %d stored", len(got), err, len(pack))
	}
}

// TestPoolParametersInURL gives every entry point a URL that sizes the
// pool (pool_max_conns), as a replica far from its database is configured:
// the pool takes the size, and the single connections (schema setup,
// migration scripts, DropSchema) leave the parameter out instead of
// sending it to the server, which refuses unknown settings.
func TestPoolParametersInURL(t *testing.T) {
	url := withParam(testURL(t), "pool_max_conns=3")
	schema := testSchema()
	b, err := OpenFresh(t.Context(), url, schema)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if got := b.pool.Config().MaxConns; got != 3 {
		t.Errorf("pool of %d connections, want the URL's 3", got)
	}
	if got := b.AppendConcurrency(); got != 2 {
		t.Errorf("AppendConcurrency %d with a pool of 3, want 2", got)
	}
	if _, err := MigrationScript(t.Context(), withParam(url, "search_path="+schema), false); err != nil {
		t.Errorf("MigrationScript: %v", err)
	}
	conn, err := Connect(t.Context(), url)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	conn.Close(t.Context())
	if err := DropSchema(t.Context(), url, schema); err != nil {
		t.Errorf("DropSchema: %v", err)
	}
}

func withParam(url, param string) string {
	if strings.Contains(url, "?") {
		return url + "&" + param
	}
	return url + "?" + param
}

// TestPoolStats: the figures of the pool an operator sizes, with a taker
// that had to wait for a connection.
func TestPoolStats(t *testing.T) {
	b := openTestAt(t, withParam(testURL(t), "pool_max_conns=2"))
	defer b.Close()
	takeBoth := func() (*pgxpool.Conn, *pgxpool.Conn) {
		t.Helper()
		c1, err := b.pool.Acquire(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		c2, err := b.pool.Acquire(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return c1, c2
	}
	// Both connections open and idle first: taking a connection that
	// must be opened counts as a wait too.
	w1, w2 := takeBoth()
	w1.Release()
	w2.Release()
	before := b.PoolStats()
	c1, c2 := takeBoth()
	if s := b.PoolStats(); s.Max != 2 || s.InUse != 2 || s.Idle != 0 {
		t.Errorf("both taken: max %d, in use %d, idle %d; want 2, 2, 0", s.Max, s.InUse, s.Idle)
	}
	// A third taker waits until c1 is given back, a while after it asked
	// (longer each try, so that a stalled machine cannot make it ask
	// after the release every time).
	waits := 0
	for delay := 20 * time.Millisecond; delay <= time.Second && waits == 0; delay *= 4 {
		released := make(chan struct{})
		go func() {
			time.Sleep(delay)
			c1.Release()
			close(released)
		}()
		w0 := b.PoolStats().Waits
		c3, err := b.pool.Acquire(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		<-released
		waits = int(b.PoolStats().Waits - w0)
		c1 = c3 // the connection held again
	}
	c1.Release()
	c2.Release()
	s := b.PoolStats()
	if waits != 1 || s.Waits <= before.Waits || s.Waited <= before.Waited || s.Acquires <= before.Acquires+2 {
		t.Errorf("after a taker waited: %d wait counted; acquires %d → %d, waits %d → %d, waited %v → %v",
			waits, before.Acquires, s.Acquires, before.Waits, s.Waits, before.Waited, s.Waited)
	}
	if s.InUse != 0 || s.Idle != 2 {
		t.Errorf("all given back: in use %d, idle %d; want 0, 2", s.InUse, s.Idle)
	}
}
