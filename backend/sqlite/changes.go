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
// changes when another connection commits). What the poll compares with
// is read before WatchChanges returns: a commit after it is seen.
func (b *Backend) WatchChanges(ctx context.Context, changed func(scope string)) error {
	b.changed.Watch(ctx, changed)
	p := b.newPoller(ctx, b.readHeads.idx)
	go p.run(ctx, changed)
	return nil
}

// poller looks for other processes' changes through idx, or through
// data_version when idx is nil or cannot be read.
type poller struct {
	b       *Backend
	idx     *walIndex
	last    walHeader
	lastOK  bool
	conn    *sql.Conn
	version int64 // -1: not read yet
}

// newPoller reads what the first look compares with.
func (b *Backend) newPoller(ctx context.Context, idx *walIndex) *poller {
	p := &poller{b: b, idx: idx, version: -1}
	p.last, p.lastOK = idx.header()
	if !p.lastOK {
		p.readVersion(ctx)
	}
	return p
}

// readVersion returns data_version now (-1 when it cannot be read).
func (p *poller) readVersion(ctx context.Context) int64 {
	if p.conn == nil {
		c, err := p.b.r.Conn(ctx)
		if err != nil {
			return -1 // closed, or busy: try again at the next look
		}
		p.conn = c
	}
	var v int64
	if err := p.conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v); err != nil {
		_ = p.conn.Close()
		p.conn = nil
		return -1
	}
	return v
}

func (p *poller) run(ctx context.Context, changed func(scope string)) {
	t := time.NewTicker(backend.ChangePollInterval)
	defer t.Stop()
	defer func() {
		if p.conn != nil {
			_ = p.conn.Close()
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if h, ok := p.idx.header(); ok {
			if !p.lastOK || h != p.last {
				changed("")
			}
			p.last, p.lastOK = h, true
			continue
		}
		p.lastOK = false
		v := p.readVersion(ctx)
		if v < 0 || p.version < 0 || v != p.version {
			changed("") // changed, or what happened meanwhile is not known
		}
		p.version = v
	}
}
