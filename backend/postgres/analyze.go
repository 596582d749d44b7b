package postgres

import (
	"context"
	"sync/atomic"
	"time"
)

// The planner chooses among a store's indexes by the statistics of docs.
// Autovacuum keeps them fresh on a default server; where it is off (as on
// the project's own machine), a table that grew from empty has none, and
// the planner guesses: W2's query-in at 100,000 documents walked the
// confidence index through half the table, 380 ms, instead of 12 ms with
// statistics (docs/decisions/0010-postgres-plans.md). So the backend checks
// now and then whether docs has changed much since it was last analyzed,
// by the server's own counters, and analyzes it when autovacuum's default
// rule (50 rows plus a tenth of the table) was passed twice over: a server
// whose autovacuum works gets there first, and several processes see the
// same counters.

// analyzeEvery is how many document writes of this process pass between
// two checks.
var analyzeEvery int64 = 1000

type analyzer struct {
	writes  atomic.Int64
	running atomic.Bool
	off     atomic.Bool // ANALYZE was refused: not ours to run
}

// wrote counts a write of docs and, every analyzeEvery, checks in the
// background whether the table needs new statistics.
func (a *analyzer) wrote(b *Backend) {
	if a.writes.Add(1)%analyzeEvery != 0 || a.off.Load() || !a.running.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer a.running.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := b.analyzeIfStale(ctx); err != nil && pgCode(err) == "42501" {
			a.off.Store(true) // insufficient privilege
		}
	}()
}

// analyzeIfStale analyzes docs when more of it changed since its last
// analysis than 100 rows and a fifth of the table.
func (b *Backend) analyzeIfStale(ctx context.Context) error {
	var stale bool
	err := b.pool.QueryRow(ctx, `SELECT coalesce(s.n_mod_since_analyze > 100 + 0.2 * greatest(c.reltuples, 0), false)
		FROM pg_class c LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
		WHERE c.oid = 'docs'::regclass`).Scan(&stale)
	if err != nil || !stale {
		return err
	}
	_, err = b.pool.Exec(ctx, "ANALYZE docs")
	return err
}
