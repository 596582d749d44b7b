package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/satchel-dev/satchel/backend"
)

var _ backend.ThreadLocker = (*Backend)(nil)

// lockKey is the two keys of a thread's advisory lock, for thread $1: the
// first a hash of satchel's namespace, the schema (two stores in one
// database do not share locks) and the thread's high 32 bits; the second
// its low 32 bits. Other users of advisory locks in the database would
// have to hash to the same first key to share one with satchel, and even
// then only wait for each other: nothing depends on the lock for
// correctness.
const lockKey = `hashtext('satchel.thread:' || coalesce(current_schema(), '') || ':' || ($1::bigint >> 32)::text),
	(($1::bigint & 4294967295) - 2147483648)::int4`

// lockFree is the column of each Append entry (thread $1) that tells
// whether no other session holds or waits for the thread's lock
// (backend.AppendResult.Contended). A shared lock of the transaction,
// tried without waiting: compatible with every other append's, refused
// while a LockThread holds or waits for the exclusive one, and gone when
// the append's transaction ends. It is taken in memory on the server, with
// no round trip and no write: the price of telling a writer that never
// loses a race (it commits on its own head each time) that others wait to
// write the thread.
const lockFree = `pg_try_advisory_xact_lock_shared(` + lockKey + `)`

// headPackSQL is the pack of thread $1's head unless it is commit $2 or
// empty (after the head's statement, in its pipeline: the same snapshot
// rule), so that the holder reads the other process's commit it builds
// on in the lock's round trip.
const headPackSQL = `SELECT id, pack FROM commits
WHERE thread_id = $1 AND seq = (SELECT max(seq) FROM commits WHERE thread_id = $1)
	AND id <> $2 AND dropped_at IS NULL AND octet_length(pack) > 0`

// locks holds the connections that wait on and hold threads' advisory
// locks. They are a pool of their own, never the one Append takes its
// connections from: a process whose lock waiters held every connection
// could not append the commit of the lock's holder (its own or another
// process's), and nobody would unlock.
type locks struct {
	once sync.Once
	pool *pgxpool.Pool
	err  error
	// sem bounds the locks held or waited for at once: one a connection.
	sem chan struct{}
	// off is set once the server refuses advisory locks (a database that
	// speaks PostgreSQL's protocol without them): every LockThread is
	// then ErrLockBusy, and writers stay optimistic.
	off atomic.Bool
}

// lockConns bounds the connections kept for thread locks: as many locks
// as this can be waited on, held or being released at once by one
// process. They are opened as they are needed.
const lockConns = 8

// LockThread implements backend.ThreadLocker with a session advisory lock
// (pg_advisory_lock) on a connection of a pool of lockConns connections of
// its own. The lock and the head are read in one round trip: two
// statements of one pipeline, the head's taking its snapshot once the lock
// is held (READ COMMITTED: a snapshot a statement). A connection whose
// lock may be held in a state unknown (an error, a cancelled wait) is
// closed: the server drops a session's locks with it.
func (b *Backend) LockThread(ctx context.Context, thread, known int64) (backend.Commit, bool, string, func(), error) {
	if b.snapshot || b.locks.off.Load() {
		return backend.Commit{}, false, "", nil, backend.ErrLockBusy
	}
	pool, err := b.lockPool(ctx)
	if err != nil {
		return backend.Commit{}, false, "", nil, err
	}
	select {
	case b.locks.sem <- struct{}{}:
	default:
		return backend.Commit{}, false, "", nil, backend.ErrLockBusy
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		<-b.locks.sem
		if ctx.Err() != nil {
			return backend.Commit{}, false, "", nil, ctx.Err()
		}
		return backend.Commit{}, false, "", nil, fmt.Errorf("postgres: lock: %w", err)
	}
	fail := func(err error) (backend.Commit, bool, string, func(), error) {
		_ = conn.Conn().Close(context.WithoutCancel(ctx))
		conn.Release()
		<-b.locks.sem
		var pe *pgconn.PgError
		if errors.As(err, &pe) && (pe.Code == "42883" || pe.Code == "0A000") {
			// undefined_function, feature_not_supported
			b.locks.off.Store(true)
			return backend.Commit{}, false, "", nil, backend.ErrLockBusy
		}
		if ctx.Err() != nil {
			return backend.Commit{}, false, "", nil, ctx.Err()
		}
		return backend.Commit{}, false, "", nil, fmt.Errorf("postgres: lock: %w", err)
	}
	var batch pgx.Batch
	batch.Queue("SELECT pg_advisory_lock("+lockKey+")", thread)
	batch.Queue(headSQL, thread)
	batch.Queue(headPackSQL, thread, known)
	br := conn.SendBatch(ctx, &batch)
	_, err = br.Exec()
	var (
		exists     bool
		id, seq    *int64
		at         *time.Time
		root, meta []byte
	)
	if err == nil {
		err = br.QueryRow().Scan(&exists, &id, &seq, &at, &root, &meta)
	}
	var (
		pid  int64
		pack []byte
	)
	if err == nil {
		if err = br.QueryRow().Scan(&pid, &pack); errors.Is(err, pgx.ErrNoRows) {
			err = nil
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fail(err)
	}
	var once sync.Once
	unlock := func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var ok bool
			if err := conn.QueryRow(ctx, "SELECT pg_advisory_unlock("+lockKey+")", thread).Scan(&ok); err != nil || !ok {
				// The connection was lost (its locks with it), or
				// holds a lock it should not: a new session is clean.
				_ = conn.Conn().Close(ctx)
			}
			conn.Release()
			<-b.locks.sem
		})
	}
	if !exists {
		unlock()
		return backend.Commit{}, false, "", nil, backend.ErrNoThread
	}
	if id == nil {
		return backend.Commit{}, false, "", unlock, nil
	}
	if pid != *id {
		pack = nil // a writer that did not take the lock moved the head
	}
	// pack was allocated for this scan and is referenced nowhere else.
	return backend.Commit{ID: *id, Thread: thread, Seq: *seq, Root: root, Meta: meta, Time: at.UTC()}, true,
		unsafe.String(unsafe.SliceData(pack), len(pack)), unlock, nil
}

// lockPool opens the pool of lock connections on first use: a process
// that never meets a contended thread opens none.
func (b *Backend) lockPool(ctx context.Context) (*pgxpool.Pool, error) {
	l := &b.locks
	l.once.Do(func() {
		cfg := b.pool.Config()
		cfg.MinConns = 0
		cfg.MaxConns = lockConns
		// A wait that ends with its context is cancelled on the server
		// (a cancel request), which then answers at once; the default
		// only gives up on the socket, leaving the server's session
		// waiting in the lock's queue.
		cfg.ConnConfig.BuildContextWatcherHandler = func(pc *pgconn.PgConn) ctxwatch.Handler {
			return &pgconn.CancelRequestContextWatcherHandler{Conn: pc, DeadlineDelay: time.Second}
		}
		l.sem = make(chan struct{}, lockConns)
		l.pool, l.err = pgxpool.NewWithConfig(context.WithoutCancel(ctx), cfg)
		if l.err != nil {
			l.err = fmt.Errorf("postgres: lock: %w", l.err)
		}
	})
	return l.pool, l.err
}

// closeLocks closes the lock connections (and so drops their locks).
func (b *Backend) closeLocks() {
	l := &b.locks
	l.once.Do(func() { l.err = errors.New("postgres: closed") })
	if l.pool != nil {
		l.pool.Close()
	}
}
