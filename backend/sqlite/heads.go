package sqlite

import (
	"strconv"
	"sync"

	"github.com/satchel-dev/satchel/backend"
)

// headCache keeps, from one Append to the next, the heads of the threads
// the last one wrote and seq_indexed.upto, so that an Append of a busy
// process reads nothing before it inserts: the heads query was 13–16% of
// the CPU of a group commit's Append (decision 0015).
//
// What it keeps is only used while still true:
//   - no other connection has committed since: SQLite's data_version, read
//     in the Append's own transaction (under the write lock), is the one
//     it was read at;
//   - it is the same connection: the appender replaces a broken one,
//     whose data_version would mean nothing, and a new connection lacks
//     the temporary table satchel_conn;
//   - no other write of this backend has begun since (gen): every write
//     but Append forgets the cache inside its transaction, before it can
//     change a thread (DeleteThread, PurgeScope);
//   - an Append commits while holding mu and updates the cache before it
//     lets go, so the next Append (which may take the connection the
//     moment this one commits) never reads heads older than the commit.
type headCache struct {
	mu    sync.Mutex
	gen   uint64 // writes begun
	valid bool
	known headsKnown
}

// headsKnown is what an Append knew, at a data_version.
type headsKnown struct {
	version int64
	gen     uint64
	upto    int64
	heads   map[int64]*head
	// quotas holds the quota row of the scope of every thread in heads
	// (nil for a scope without one).
	quotas map[string]*backend.Quota
}

// forget is called by every write but Append, inside its transaction.
func (c *headCache) forget() {
	c.mu.Lock()
	c.forgetLocked()
	c.mu.Unlock()
}

func (c *headCache) forgetLocked() {
	c.gen++
	c.valid = false
	c.known = headsKnown{}
}

// load returns the heads of the threads of ncs and seq_indexed.upto, from
// the cache where it still holds, else from the database. The heads are
// the Append's to move.
func (c *headCache) load(w *writeTx, ncs []backend.NewCommit) (headsKnown, error) {
	var k headsKnown
	var marked int
	if err := w.s.connState.QueryRowContext(w.ctx).Scan(&k.version, &marked); err != nil {
		return k, err
	}
	if marked == 0 {
		if _, err := w.conn.ExecContext(w.ctx, "CREATE TEMP TABLE IF NOT EXISTS satchel_conn (x)"); err != nil {
			return k, err
		}
	}
	k.heads = make(map[int64]*head, len(ncs))
	k.quotas = map[string]*backend.Quota{}
	c.mu.Lock()
	k.gen = c.gen
	cached := c.valid && marked != 0 && c.known.version == k.version
	if cached {
		k.upto = c.known.upto
		for i := range ncs {
			h := c.known.heads[ncs[i].Thread]
			if h == nil {
				continue
			}
			q, ok := c.known.quotas[h.scope]
			if !ok {
				continue
			}
			hc := *h
			k.heads[ncs[i].Thread] = &hc
			if _, ok := k.quotas[h.scope]; !ok {
				if q != nil {
					qc := *q // the Append's to move
					q = &qc
				}
				k.quotas[h.scope] = q
			}
		}
	}
	c.mu.Unlock()
	var ids []byte
	for i := range ncs {
		if k.heads[ncs[i].Thread] != nil {
			continue
		}
		if ids == nil {
			ids = append(ids, '[')
		} else {
			ids = append(ids, ',')
		}
		ids = strconv.AppendInt(ids, ncs[i].Thread, 10)
	}
	if ids == nil {
		return k, nil
	}
	upto, err := w.readHeads(append(ids, ']'), &k)
	if err != nil {
		return k, err
	}
	if !cached {
		k.upto = upto
	}
	return k, nil
}

// keepLocked remembers what a committed Append knew, unless another write
// began after it did. The caller holds c.mu, and took it before its
// commit.
func (c *headCache) keepLocked(k headsKnown) {
	if c.gen != k.gen {
		return
	}
	if !c.valid || c.known.version != k.version {
		c.known = headsKnown{version: k.version, heads: make(map[int64]*head, len(k.heads)), quotas: map[string]*backend.Quota{}}
	}
	c.valid = true
	c.known.gen = k.gen
	c.known.upto = k.upto
	for id, h := range k.heads {
		c.known.heads[id] = h
	}
	for s, q := range k.quotas {
		c.known.quotas[s] = q
	}
	if len(c.known.heads) > maxCachedHeads {
		c.known.heads, c.known.quotas = k.heads, k.quotas
	}
}

// maxCachedHeads bounds the cache: beyond it, only the last Append's
// threads are kept.
const maxCachedHeads = 4096
