package postgres

import (
	"context"
	"time"
)

// SetResolveTimeout sets how long Append tries to learn the outcome of a
// batch whose connection failed, and returns the function that restores it.
func SetResolveTimeout(d time.Duration) (restore func()) {
	old := resolveTimeout
	resolveTimeout = d
	return func() { resolveTimeout = old }
}

// KillLockHolder terminates the server session that holds thread's lock
// (LockThread) and reports how many it terminated.
func (b *Backend) KillLockHolder(ctx context.Context, thread int64) (int, error) {
	var n int
	err := b.pool.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_locks
		WHERE locktype = 'advisory' AND granted AND objsubid = 2
			AND classid = (hashtext('satchel.thread:' || coalesce(current_schema(), '') || ':' || ($1::bigint >> 32)::text))::oid
			AND objid = ((($1::bigint & 4294967295) - 2147483648)::int4)::oid`, thread).Scan(&n)
	return n, err
}

// LockConns is the bound of lock connections.
const LockConns = lockConns
