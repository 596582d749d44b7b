// Package sqlite is satchel's single-file backend: one SQLite database
// (modernc.org/sqlite, pure Go, no cgo), shared safely by any number of
// goroutines and processes of one machine. It is the default store of the
// CLI and the server.
//
// # Opening
//
// Open takes a file path, optionally prefixed with "file:". Query
// parameters ("?...") are refused: the backend sets every pragma itself.
// Every connection gets
//
//	busy_timeout=10000, synchronous=NORMAL, auto_vacuum=INCREMENTAL
//
// (auto_vacuum only matters before the first table is created, and is set
// on the connection that creates it), and the file is switched to
// journal_mode=WAL once, when it is opened: WAL is a property of the file,
// and switching a new file to it is the one step SQLite does not wait for
// under busy_timeout, so Open retries it. Open then applies the embedded
// migrations (migrations/*.sql) inside one BEGIN IMMEDIATE transaction, so
// processes opening a new file at once do not race: the expand ones only
// (contract migrations wait for MigrateContract, as on PostgreSQL), and it
// registers the process in the file's processes table until Close.
//
// # Durability
//
// With WAL and synchronous=NORMAL a commit that Append reported survives
// the crash or kill of any process, but not a power cut or an operating
// system crash: the last transactions before one may be lost (never
// half-applied: the database stays consistent). This is the promise of the
// SQLite backend; use PostgreSQL (synchronous_commit on) for more.
//
// # Writes and reads
//
// Writes run one at a time (Backend.wmu): Appends on a connection the
// appender keeps (appender.go), every other write on the writer pool's
// other connection. All use BEGIN IMMEDIATE, which takes the database's write
// lock at once: a deferred transaction that upgrades to a write in WAL
// mode fails with SQLITE_BUSY instead of waiting. Other processes wait for
// the write lock up to the busy timeout. Reads use a separate pool of
// several read-only connections, which in WAL mode read a consistent
// snapshot while a write is in progress instead of queueing behind it
// (BenchmarkReadsDuringWrites: 7,000-11,000 Head+Pack reads a second
// while one goroutine appends, against 3,900-4,500 through the writer's
// connection; on 2 cores the parallel readers also take CPU from the
// writer). Checkpoints of the WAL run on a goroutine of their own
// (checkpoint.go).
//
// A commit is one row inserted at the end of the commits table (its id
// grows) plus one entry of the (thread_id, seq) index. An Append is one
// transaction: one query reads the head (newest seq) and scope of every
// thread of the batch, the compare-and-swap of each commit is decided from
// it, and each accepted commit is one plain INSERT. BEGIN IMMEDIATE holds
// the write lock from the start, so no other process moves a head between
// the read and the insert. Every NewCommit of one Append shares the
// transaction (group commit): the engine batches concurrent commits, and
// the cost of a transaction (BEGIN, the WAL commit, the pages every commit
// touches: page 1, sqlite_sequence, the table's last leaf) is paid once per
// batch; what remains per commit is its row, its pack's pages and the leaf
// of the index where its thread's entries end (one per thread of the
// batch: the index is ordered by thread).
//
// Measured on the 2-core machine of DESIGN §1.1.1 while other work loaded
// it (load average 5 to 10; bench_test.go, which also reports CPU time per
// commit, steadier than the wall clock there):
//
//	one writer, 10 KB pack      3,000-7,000 commits/s   ~150 µs CPU each
//	one writer, 1 KB pack       6,800-9,700 commits/s   ~100 µs CPU each
//	16 writers, group commit,
//	  10 KB packs               2,900-8,700 commits/s   110-150 µs CPU each
//	  1 KB packs                6,900-13,000 commits/s  ~55 µs CPU each
//	  idle machine, heads read once a batch (docs/decisions/0014):
//	  10 KB packs               12,500-13,400 commits/s 92-99 µs CPU each
//	  1 KB packs                ~29,600 commits/s       ~40 µs CPU each
//	Head                        18-23 µs
//	Pack (10 KB)                45-68 µs
//
// A 10 KB pack spans three overflow pages, written to the WAL and again by
// the checkpoint: that, not the transaction, is what a 10 KB commit costs,
// so group commit pays most with small packs.
//
// # Clock
//
// Commit times, drop times (the grace period of garbage collection) and
// Now come from the clock of the process. A SQLite file lives on one
// machine, so all processes that share it share that clock. SetClock
// replaces it, for tests.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/internal/sqlmigrate"

	msqlite "modernc.org/sqlite" // also registers the "sqlite" database/sql driver
)

// Backend is a satchel backend stored in one SQLite file. It is safe for
// concurrent use, and for use by several processes at once.
type Backend struct {
	path  string
	w     *sql.DB // the writer: BEGIN IMMEDIATE, one transaction at a time (wmu)
	r     *sql.DB // the readers
	rs    readStmts
	stmts []*sql.Stmt // all of rs, to close
	// wmu is held by every write transaction: Append's, on the appender's
	// connection, and the others', on the writer pool's other one.
	wmu  sync.Mutex
	app  appender
	ckpt *checkpointer // nil: the writer checkpoints (SQLite's default)
	// indexEvery is how many commits may wait above seq_indexed.upto
	// before an Append writes their commit_seq entries (decision 0015).
	indexEvery int64
	heads      headCache
	docs       docState // collections (docs.go)
	keyStmts   keyState // idempotency keys (keys.go)
	// readOnly: opened by OpenReadOnly, every write is refused.
	readOnly bool

	// reg is the process's row in the processes table (nil for a
	// read-only backend, which writes nothing).
	reg *sqlmigrate.Registration

	// readHeads answers Head between commits (readheads.go).
	readHeads readHeads

	// changed tells this process's watchers of its changes (changes.go).
	changed backend.Signal

	clock     atomic.Pointer[func() time.Time]
	closeOnce sync.Once
	closeErr  error
}

// The pragmas of every connection. busy_timeout comes first (the driver
// applies it first) so that the others wait instead of failing; auto_vacuum
// comes before the first table, which migrate creates. journal_mode is not
// among them: WAL is a property of the file, set once by open (setWAL).
const (
	busyTimeout  = 10 * time.Second
	commonParams = "_busy_timeout=10000&_synchronous=NORMAL"
	writerParams = commonParams + "&_auto_vacuum=INCREMENTAL&_txlock=immediate"
	// walBackstop is the writer's automatic checkpoint when a checkpointer
	// goroutine does the usual ones (checkpoint.go).
	// journal_size_limit truncates a WAL that a burst made large once it
	// is checkpointed.
	walBackstop  = "&_pragma=wal_autocheckpoint(4000)&_pragma=journal_size_limit(67108864)"
	readerParams = commonParams + "&_query_only=1" + readerMmap
	// readerMmap maps the database file into the readers' memory: a page
	// that is in the file (not in the WAL) is then read in place, without
	// a pread into the connection's page cache. In WAL mode a reader's
	// cache is emptied whenever another connection has written, and the
	// default cache (2 MB) holds little of a large database anyway, so
	// most reads of a busy or large file missed it: at 100,000 W2
	// documents a get read two pages (index and table leaves) with pread.
	// SQLite remaps when the file changes size; the size is address
	// space, not memory.
	readerMmap = "&_pragma=mmap_size(1073741824)"
)

// options are the knobs that tests and benchmarks turn.
type options struct {
	// readers is the size of the reader pool; 0 means a default.
	readers int
	// sharedPool sends reads through the writer's single connection, as a
	// baseline for the benchmark that justifies the reader pool.
	sharedPool bool
	// params are extra DSN parameters of every connection (experiments).
	params string
	// inlineCheckpoints leaves checkpoints to the writer (SQLite's
	// default), as a baseline for the benchmarks.
	inlineCheckpoints bool
	// indexEvery replaces defaultIndexEvery (tests: 1 writes every
	// commit's entry at once, as version 2 did).
	indexEvery int64
}

// defaultIndexEvery: the commits above seq_indexed.upto are found by a
// scan of commits_recent, about 300 entries a page; a thread writes its
// commit_seq leaf once per this many commits of the database.
const defaultIndexEvery = 256

// Open opens (creating it if needed) the SQLite database at dsn, a file
// path optionally prefixed with "file:", and brings its schema up to date.
func Open(ctx context.Context, dsn string) (*Backend, error) {
	return open(ctx, dsn, options{})
}

func open(ctx context.Context, dsn string, opt options) (*Backend, error) {
	path, err := parsePath(dsn)
	if err != nil {
		return nil, err
	}
	if err := checkWritable(path); err != nil {
		return nil, err
	}
	b := &Backend{path: path, indexEvery: defaultIndexEvery}
	if opt.indexEvery > 0 {
		b.indexEvery = opt.indexEvery
	}
	clock := time.Now
	b.clock.Store(&clock)

	wp := writerParams
	if !opt.inlineCheckpoints {
		wp += walBackstop
	}
	b.w, err = sql.Open("sqlite", path+"?"+wp+opt.params)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	// Two connections: the appender keeps one, every other write takes
	// the other.
	b.w.SetMaxOpenConns(2)
	b.w.SetMaxIdleConns(2)
	b.w.SetConnMaxIdleTime(0)
	b.w.SetConnMaxLifetime(0)
	if err := setWAL(ctx, b.w); err != nil {
		b.w.Close()
		return nil, mapErr(path, fmt.Errorf("sqlite: %s: %w", path, err))
	}
	if err := migrate(ctx, b.w, false); err != nil {
		b.w.Close()
		return nil, mapErr(path, fmt.Errorf("sqlite: %s: %w", path, err))
	}

	if opt.sharedPool {
		b.r = b.w
	} else {
		n := opt.readers
		if n <= 0 {
			n = max(4, runtime.GOMAXPROCS(0))
		}
		b.r, err = sql.Open("sqlite", path+"?"+readerParams+opt.params)
		if err != nil {
			b.w.Close()
			return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
		}
		b.r.SetMaxOpenConns(n)
		b.r.SetMaxIdleConns(n)
		b.r.SetConnMaxIdleTime(0)
		b.r.SetConnMaxLifetime(0)
	}
	if !opt.inlineCheckpoints {
		cdb, err := sql.Open("sqlite", path+"?"+commonParams+opt.params)
		if err != nil {
			b.Close()
			return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
		}
		cdb.SetMaxOpenConns(1)
		cdb.SetMaxIdleConns(1)
		cdb.SetConnMaxIdleTime(0)
		cdb.SetConnMaxLifetime(0)
		b.ckpt = newCheckpointer(cdb)
	}
	if err := b.prepare(ctx); err != nil {
		b.Close()
		return nil, fmt.Errorf("sqlite: %s: %w", path, err)
	}
	b.app.db = b.w
	if err := b.app.ready(ctx); err != nil {
		b.Close()
		return nil, fmt.Errorf("sqlite: %s: %w", path, err)
	}
	ms, err := migrations()
	if err == nil {
		b.reg, err = sqlmigrate.Register(ctx, registry{b.w}, sqlmigrate.Self(ms))
	}
	if err != nil {
		b.Close()
		return nil, mapErr(path, fmt.Errorf("sqlite: %s: %w", path, err))
	}
	// The key statements are prepared now, not on first use: a first use
	// inside a write transaction would wait for the writer connection it
	// holds.
	if _, err := b.keyState(); err != nil {
		b.Close()
		return nil, fmt.Errorf("sqlite: %s: %w", path, err)
	}
	// The writer's connection has the WAL index open (it migrated and
	// registered the process), so the index exists at its full size.
	b.readHeads.idx = openWALIndex(path)
	return b, nil
}

// setWAL puts the database in WAL mode. Switching a new file to WAL needs
// an exclusive lock, for which SQLite returns SQLITE_BUSY at once instead of
// waiting (the busy handler is not called): processes opening a new file
// together would fail. So the switch is retried, up to the busy timeout.
// Once the file is in WAL mode the pragma is a no-op.
func setWAL(ctx context.Context, w *sql.DB) error {
	deadline := time.Now().Add(busyTimeout)
	for delay := time.Millisecond; ; delay = min(2*delay, 50*time.Millisecond) {
		var mode string
		err := w.QueryRowContext(ctx, "PRAGMA journal_mode = WAL").Scan(&mode)
		if err == nil {
			if mode != "wal" {
				return fmt.Errorf("journal_mode is %q, cannot switch to WAL", mode)
			}
			return nil
		}
		if !isBusy(err) || time.Now().After(deadline) {
			return fmt.Errorf("journal_mode WAL: %w", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
	}
}

// isBusy reports whether err is SQLITE_BUSY (of any extended kind).
func isBusy(err error) bool {
	var e *msqlite.Error
	return errors.As(err, &e) && e.Code()&0xff == 5
}

// parsePath turns a dsn into an absolute file path.
func parsePath(dsn string) (string, error) {
	p := strings.TrimPrefix(dsn, "file:")
	switch {
	case p == "":
		return "", errors.New("sqlite: empty database path")
	case strings.ContainsRune(p, '?'):
		return "", fmt.Errorf("sqlite: %q: query parameters are not supported (the backend sets its own pragmas)", dsn)
	case p == ":memory:" || strings.HasPrefix(p, ":memory:"):
		return "", fmt.Errorf("sqlite: %q: in-memory SQLite is not supported; use the memory backend", dsn)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("sqlite: %q: %w", dsn, err)
	}
	return abs, nil
}

// Path returns the absolute path of the database file.
func (b *Backend) Path() string { return b.path }

// SetClock replaces the clock that stamps commits, drops, threads and
// documents, and that Now and expiry read (backend.ClockSetter); nil
// restores the process's clock. It is not shared with other processes.
func (b *Backend) SetClock(now backend.Clock) {
	if now == nil {
		now = time.Now
	}
	f := (func() time.Time)(now)
	b.clock.Store(&f)
}

func (b *Backend) now() time.Time { return (*b.clock.Load())().UTC() }

// Now returns the process's clock: every process that opens a SQLite file
// runs on the file's machine.
func (b *Backend) Now(ctx context.Context) (time.Time, error) { return b.now(), nil }

// Vacuum gives the pages that deleted packs freed back to the file system
// (PRAGMA incremental_vacuum) and empties the write-ahead log into the
// database file (PRAGMA wal_checkpoint(TRUNCATE)). The engine calls it
// after a garbage collection that deleted or rewrote packs.
func (b *Backend) Vacuum(ctx context.Context) error {
	if b.readOnly {
		return b.readOnlyErr()
	}
	if _, err := b.w.ExecContext(ctx, "PRAGMA incremental_vacuum"); err != nil {
		return fmt.Errorf("sqlite: incremental_vacuum: %w", err)
	}
	return b.checkpoint(ctx)
}

// checkpoint copies the whole WAL into the main file and truncates it,
// retrying while readers keep it from finishing (busy), for at most the
// busy timeout: DiskSize must not read a half-checkpointed file.
func (b *Backend) checkpoint(ctx context.Context) error {
	deadline := time.Now().Add(busyTimeout)
	for {
		var busy, logPages, done int64
		if err := b.w.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logPages, &done); err != nil {
			return fmt.Errorf("sqlite: wal_checkpoint: %w", err)
		}
		if busy == 0 || time.Now().After(deadline) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// DiskSize checkpoints the write-ahead log into the database file and
// returns the bytes the database occupies on disk: the main file plus what
// remains of the log (nothing, unless readers held the checkpoint back).
func (b *Backend) DiskSize(ctx context.Context) (int64, error) {
	if b.readOnly {
		// Nothing to checkpoint: what is on disk is what there is.
	} else if err := b.checkpoint(ctx); err != nil {
		return 0, err
	}
	var total int64
	for _, p := range []string{b.path, b.path + "-wal"} {
		fi, err := os.Stat(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("sqlite: %w", err)
		}
		total += fi.Size()
	}
	return total, nil
}

// Close closes the database; it may be called more than once. Calls in
// progress finish first.
func (b *Backend) Close() error {
	b.closeOnce.Do(func() {
		if b.reg != nil {
			// A row that cannot be deleted is forgotten once its lease
			// runs out.
			_ = b.reg.Close()
		}
		for _, st := range b.stmts {
			st.Close()
		}
		if b.ckpt != nil {
			b.closeErr = b.ckpt.close()
		}
		b.wmu.Lock()
		b.app.discard() // before the pool closes
		b.wmu.Unlock()
		if b.r != nil && b.r != b.w {
			b.closeErr = errors.Join(b.closeErr, b.r.Close())
		}
		if b.w != nil {
			b.closeErr = errors.Join(b.closeErr, b.w.Close())
		}
		// After the connections: its descriptor's close drops the
		// process's locks on the index (walindex_unix.go).
		b.readHeads.idx.release()
	})
	return b.closeErr
}

// write runs f in one BEGIN IMMEDIATE transaction on the writer.
// Every write but Append (appendTx) forgets the heads Appends remember,
// inside its transaction (headCache).
func (b *Backend) write(ctx context.Context, f func(tx *sql.Tx) error) error {
	if b.readOnly {
		return b.readOnlyErr()
	}
	b.wmu.Lock()
	defer b.wmu.Unlock()
	tx, err := b.w.BeginTx(ctx, nil)
	if err != nil {
		return mapErr(b.path, err)
	}
	b.heads.forget()
	if err := f(tx); err != nil {
		tx.Rollback()
		return mapErr(b.path, err)
	}
	return mapErr(b.path, tx.Commit())
}

// read runs f in one read transaction (one snapshot) on a reader.
func (b *Backend) read(ctx context.Context, f func(tx *sql.Tx) error) error {
	tx, err := b.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	return f(tx)
}

// nanos converts a time to the unix nanoseconds stored in the database,
// clamped to the representable range.
func nanos(t time.Time) int64 {
	switch {
	case t.Before(minTime):
		return math.MinInt64
	case t.After(maxTime):
		return math.MaxInt64
	}
	return t.UnixNano()
}

var (
	minTime = time.Unix(0, math.MinInt64)
	maxTime = time.Unix(0, math.MaxInt64)
)

func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }

// blob makes nil bytes an empty blob: the columns are NOT NULL, and the
// driver binds a nil slice as NULL.
func blob(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

var (
	_ backend.Backend          = (*Backend)(nil)
	_ backend.Documents        = (*Backend)(nil)
	_ backend.Vacuumer         = (*Backend)(nil)
	_ backend.ClockSetter      = (*Backend)(nil)
	_ backend.Migrator         = (*Backend)(nil)
	_ backend.ContractMigrator = (*Backend)(nil)
	_ backend.DiskSizer        = (*Backend)(nil)
	_ backend.HeadsLister      = (*Backend)(nil)
	_ backend.DocBatcher       = (*Backend)(nil)
)
