package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/satchel-dev/satchel/backend"
)

// WatchChanges implements backend.ChangeWatcher. A change of this process
// is signalled as it lands; another process's is found by polling, every
// backend.ChangePollInterval, the header of the WAL index (a read of
// shared memory, which every commit changes) or, where that cannot be
// read, SQLite's data_version on a connection kept for it (a counter that
// changes when another connection commits).
func (b *Backend) WatchChanges(ctx context.Context, changed func(scope string)) error {
	b.changed.Watch(ctx, changed)
	go b.pollChanges(ctx, changed)
	return nil
}

func (b *Backend) pollChanges(ctx context.Context, changed func(scope string)) {
	t := time.NewTicker(backend.ChangePollInterval)
	defer t.Stop()
	var (
		conn    *sql.Conn
		version int64 = -1
	)
	defer func() {
		if conn != nil {
			_ = conn.Close()
		}
	}()
	last, lastOK := b.readHeads.idx.header()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if h, ok := b.readHeads.idx.header(); ok {
			if !lastOK || h != last {
				changed("")
			}
			last, lastOK = h, true
			continue
		}
		lastOK = false
		if conn == nil {
			c, err := b.r.Conn(ctx)
			if err != nil {
				continue // closed, or busy: try again at the next tick
			}
			conn = c
		}
		var v int64
		if err := conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v); err != nil {
			_ = conn.Close()
			conn = nil
			changed("") // what happened meanwhile is not known
			continue
		}
		if version >= 0 && v != version {
			changed("")
		}
		version = v
	}
}
