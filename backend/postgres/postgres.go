// Package postgres is satchel's shared backend: one PostgreSQL database
// that any number of processes and server replicas use at once. It talks
// to the server with pgx (a pgxpool of connections, statements prepared
// once per connection) and needs nothing beyond SQL that Postgres-
// compatible distributed databases also run: no LISTEN/NOTIFY, no
// functions of its own. The one exception is advisory locks (lock.go),
// which keep the writers of a thread that several processes write from
// racing each other; they never decide what lands.
//
// # Opening
//
// Open takes a postgres:// URL as pgx parses it. To keep satchel's tables
// in a schema of their own, add search_path to the URL
// (postgres://host/db?search_path=satchel); the schema must exist. Open
// applies the embedded migrations (migrations/*.sql); processes that start
// together are serialised by a row lock (SELECT ... FOR UPDATE) on the
// schema_migrations table, and the creation of that table is retried when
// two of them race on it. Migrate does the same on demand. Only expand
// (additive) migrations run at open, and a schema newer by expand
// migrations only is run on, so old and new replicas share one schema
// through a rolling upgrade; contract migrations wait for
// MigrateContract (docs/operations.md, "Upgrades"). A database already up
// to date is only read: a role without DDL rights opens it. Each Backend
// registers its process in the processes table until Close
// (docs/decisions/0062-process-registry.md).
//
// # Durability and clock
//
// Append returns once the server has committed the transaction: with
// synchronous_commit on (PostgreSQL's default) a reported commit survives
// a crash or power cut of the server. Commit times, drop times (the grace
// period of garbage collection) and Now come from the database's clock
// (now()), so replicas with skewed clocks agree.
//
// # The compare-and-swap
//
// Every NewCommit is one statement, in READ COMMITTED:
//
//	INSERT INTO commits (...) SELECT ... FROM threads WHERE id = $1 (FOR KEY SHARE)
//	  AND (SELECT coalesce(max(seq), 0) FROM commits WHERE thread_id = $1) = $2 - 1
//	ON CONFLICT (thread_id, seq) DO NOTHING RETURNING id, time
//
// No row inserted means the entry failed; the same statement returns what
// tells why (no thread, stale head, source not retained, checkpoint name
// taken). Two writers of the same seq both see its predecessor and conflict
// on the unique index: the second waits for the first and does nothing. A
// writer of seq s while s-1 is not yet committed does not see s-1 in its
// snapshot, so its check fails: a log never gets a gap. The KEY SHARE lock
// on the thread's row makes a concurrent DeleteThread or PurgeScope wait
// for the append (or the append find the thread gone), so no commit is
// left behind in a deleted thread. A required commit (fork, restore) is
// read FOR SHARE in the same statement, so a concurrent Drop (an UPDATE of
// that row) happens entirely before or after.
//
// # Group commit
//
// All the NewCommits of one Append are sent in one pgx batch: one round
// trip, one implicit transaction, one WAL flush. Entries are sent in
// thread order (stable, so a thread's entries keep their order), so that
// two batches over the same threads lock in the same order. A batch that
// fails as a whole (deadlock, serialization failure, or the rare race of a
// checkpoint name taken between check and insert) is retried.
//
// # Cost
//
// A commit costs what the server's WAL flush costs: on the test machine
// (PostgreSQL 15 on the same 2 cores, an fdatasync of 1 to 1.5 ms, the
// machine loaded by other work; bench_test.go) one writer appends 230-740
// commits a second, 16 writers one commit per Append 1,200-1,900 (the
// server's own group commit), and 16 writers through a group committer
// 1,300-1,600 with 10 KB packs and 3,900-4,100 with 1 KB packs (8.5 commits
// a batch: each pack over 2 KB is also split into TOAST rows). Head is one
// round trip (95-270 µs there), like Pack.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/internal/sqlmigrate"
)

// Backend is a satchel backend in a PostgreSQL database. It is safe for
// concurrent use, and for use by many processes at once.
type Backend struct {
	pool *pgxpool.Pool
	// retries counts the Appends retried as a whole (for tests).
	retries atomic.Int64
	// analyzer keeps the statistics of docs fresh (analyze.go).
	analyzer analyzer
	// docClock, when set, is the clock of documents (SetClock); nil: the
	// database's.
	docClock atomic.Pointer[func() time.Time]
	// snapshot is set for a Snapshot's backend: reads only.
	snapshot bool
	// reg is the process's row in the processes table (nil for a
	// Snapshot's backend).
	reg *sqlmigrate.Registration
	// locks are the connections of thread locks (lock.go).
	locks locks
	// notes sends the notifications of committed writes (changes.go).
	notes notifier
}

// Open connects to the database at url (postgres://...) and brings its
// schema up to date.
func Open(ctx context.Context, url string) (*Backend, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	return open(ctx, cfg)
}

func open(ctx context.Context, cfg *pgxpool.Config) (*Backend, error) {
	cfg.AfterConnect = preferIndexes
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	b := &Backend{pool: pool}
	if err := b.Migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	ms, err := migrations()
	if err == nil {
		b.reg, err = sqlmigrate.Register(ctx, registry{pool}, sqlmigrate.Self(ms))
	}
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	return b, nil
}

// preferIndexes turns sequential scans off for the connection's session
// (docs/decisions/0010-postgres-plans.md). Every statement of satchel reads
// by key, and pgx runs them as prepared statements: once PostgreSQL settles
// on a statement's generic plan it keeps it until the table is analyzed
// again, and a plan made while a table was small (or with statistics that
// no autovacuum refreshes) scans the whole table on every call, which made
// a document set 50 times slower at 70,000 documents. With sequential scans
// off, the planner takes an index wherever one applies, whatever the
// statistics say. A server that does not know the setting (a distributed
// database speaking PostgreSQL's protocol) keeps its own planner: the
// error is ignored.
func preferIndexes(ctx context.Context, conn *pgx.Conn) error {
	conn.Exec(ctx, "SET enable_seqscan = off")
	return nil
}

// OpenFresh creates schema (dropping it first if it exists, with all it
// holds) on the server at url and opens a backend whose tables live in
// it. It is meant for tests and benchmarks: each gets an empty database of
// its own; DropSchema removes it.
func OpenFresh(ctx context.Context, url, schema string) (*Backend, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	conn, err := pgx.ConnectConfig(ctx, cfg.ConnConfig.Copy())
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	defer conn.Close(ctx)
	id := pgx.Identifier{schema}.Sanitize()
	if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+id+" CASCADE; CREATE SCHEMA "+id); err != nil {
		return nil, fmt.Errorf("postgres: create schema %s: %w", id, err)
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	return open(ctx, cfg)
}

// Connect opens one connection (no pool) to the database at url. url is
// read as Open reads it, so the pool's own parameters (pool_max_conns and
// the other pool_* settings that size a replica's pool) are accepted and
// left out, instead of reaching the server as unknown settings.
func Connect(ctx context.Context, url string) (*pgx.Conn, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	conn, err := pgx.ConnectConfig(ctx, cfg.ConnConfig)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	return conn, nil
}

// DropSchema drops a schema that OpenFresh created, with everything in it.
func DropSchema(ctx context.Context, url, schema string) error {
	conn, err := Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
		return fmt.Errorf("postgres: drop schema: %w", err)
	}
	return nil
}

// Close closes the pool's connections.
func (b *Backend) Close() error {
	if b.reg != nil {
		// A row that cannot be deleted (the database unreachable) is
		// forgotten once its lease runs out.
		_ = b.reg.Close()
	}
	b.closeLocks()
	b.pool.Close()
	return nil
}

// Now returns the database's clock.
func (b *Backend) Now(ctx context.Context) (time.Time, error) {
	var t time.Time
	if err := b.pool.QueryRow(ctx, "SELECT now()").Scan(&t); err != nil {
		return time.Time{}, fmt.Errorf("postgres: now: %w", err)
	}
	return t.UTC(), nil
}

// tables are satchel's tables, for DiskSize.
var tables = []string{"threads", "commits", "checkpoints", "settings", "schema_migrations", "docs", "doc_history", "processes"}

// DiskSize returns the bytes satchel's tables occupy, with their indexes
// and TOAST data (pg_total_relation_size), in the first schema of the
// search path.
func (b *Backend) DiskSize(ctx context.Context) (int64, error) {
	var n int64
	err := b.pool.QueryRow(ctx, `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint
		FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
		WHERE s.nspname = current_schema() AND c.relkind = 'r' AND c.relname = ANY($1)`, tables).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("postgres: disk size: %w", err)
	}
	return n, nil
}

// Vacuum runs VACUUM on the commits table, making the space of deleted
// and rewritten packs reusable (and giving trailing pages back). The
// engine calls it after a garbage collection that deleted or rewrote
// packs; autovacuum would get there too.
func (b *Backend) Vacuum(ctx context.Context) error {
	if _, err := b.pool.Exec(ctx, "VACUUM commits"); err != nil {
		return fmt.Errorf("postgres: vacuum: %w", err)
	}
	return nil
}

// pgCode returns the SQLSTATE of a server error, or "".
func pgCode(err error) string {
	var e *pgconn.PgError
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

var (
	_ backend.Backend            = (*Backend)(nil)
	_ backend.Documents          = (*Backend)(nil)
	_ backend.Forker             = (*Backend)(nil)
	_ backend.CheckpointResolver = (*Backend)(nil)
	_ backend.ClockSetter        = (*Backend)(nil)
	_ backend.Migrator           = (*Backend)(nil)
	_ backend.ContractMigrator   = (*Backend)(nil)
	_ backend.DiskSizer          = (*Backend)(nil)
	_ backend.HeadsLister        = (*Backend)(nil)
	_ backend.DocBatcher         = (*Backend)(nil)
	_ backend.ConcurrentAppender = (*Backend)(nil)
)

var _ backend.PoolReporter = (*Backend)(nil)

// PoolStats implements backend.PoolReporter for the pool that commits and
// reads take their connections from (the lock connections of threads
// that several processes write are a pool of their own, not counted).
func (b *Backend) PoolStats() backend.PoolStats {
	s := b.pool.Stat()
	return backend.PoolStats{
		Max: s.MaxConns(), InUse: s.AcquiredConns(), Idle: s.IdleConns(),
		Acquires: s.AcquireCount(), Waits: s.EmptyAcquireCount(), Waited: s.EmptyAcquireWaitTime(),
	}
}
