package sqlite

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
)

// Checkpoints of the write-ahead log.
//
// A checkpoint copies the pages of committed transactions from the WAL
// into the database file (and fsyncs both), after which the WAL can start
// over. SQLite's default runs one on the committing connection whenever
// the WAL passes 1,000 pages, in the middle of an Append: profiles of the
// benchmarks put it at a quarter to a third of the writer's CPU time (each
// 10 KB pack is read back from the WAL and written again), on the one
// connection that every write waits for.
//
// So a goroutine of its own, on a connection of its own, runs PASSIVE
// checkpoints whenever the Appends since the last one wrote about
// walCheckpointBytes. A passive checkpoint never waits for the writer or
// the readers: it copies on the other core while the writer goes on. It
// cannot restart the WAL, though (SQLite restarts it only when a write
// transaction begins on a fully copied WAL), so the writer keeps an
// automatic checkpoint, every 4,000 pages (walBackstop): by then nearly
// every page has been copied, and that checkpoint only finishes the job,
// which bounds the WAL to about 16 MB. Measured on the 2-core machine,
// 6 interleaved runs of BenchmarkAppend: about 4,200 commits/s against
// 2,900 with SQLite's default (the machine was shared and busy; the ratio
// held in every pair).
const walCheckpointBytes = 1 << 20 // about 250 pages

type checkpointer struct {
	db      *sql.DB
	written atomic.Int64  // bytes appended since the last checkpoint
	ran     chan struct{} // receives after each checkpoint, when not full (for tests)
	kick    chan struct{}
	stop    chan struct{}
	once    sync.Once
	wg      sync.WaitGroup
}

func newCheckpointer(db *sql.DB) *checkpointer {
	c := &checkpointer{db: db, kick: make(chan struct{}, 1), ran: make(chan struct{}, 1), stop: make(chan struct{})}
	c.wg.Go(c.run)
	return c
}

func (c *checkpointer) run() {
	for {
		select {
		case <-c.stop:
			return
		case <-c.kick:
			// Errors are not fatal: the next kick, or the writer's
			// backstop, tries again.
			c.db.ExecContext(context.Background(), "PRAGMA wal_checkpoint(PASSIVE)")
			select {
			case c.ran <- struct{}{}:
			default:
			}
		}
	}
}

// wrote records n bytes committed, and wakes the goroutine when enough
// have piled up. It is safe after close.
func (c *checkpointer) wrote(n int64) {
	if c.written.Add(n) < walCheckpointBytes {
		return
	}
	c.written.Store(0)
	select {
	case c.kick <- struct{}{}:
	default: // one is pending already
	}
}

// close stops the goroutine and closes its connection; it may be called
// more than once.
func (c *checkpointer) close() error {
	var err error
	c.once.Do(func() {
		close(c.stop)
		c.wg.Wait()
		err = c.db.Close()
	})
	return err
}
