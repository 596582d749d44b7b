package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/satchel-dev/satchel/backend"
)

// Append stores commits, each compare-and-swapped against its thread's
// head, all in one BEGIN IMMEDIATE transaction: n commits cost one
// transaction, which is what makes the engine's group commit pay.
//
// The transaction holds the database's write lock from its first
// statement, so the heads it reads cannot move before it commits. The
// heads come from the last Append when nothing else has written since
// (headCache), else from one query for the whole batch; the compare-and-
// swap of each entry is decided from them (a later entry of the same
// thread sees the earlier one's seq), and each accepted entry is one plain
// INSERT. Every indexEvery commits of the database, the Append that passes
// the mark also writes their commit_seq entries (decision 0015).
func (b *Backend) Append(ctx context.Context, ncs []backend.NewCommit) ([]backend.AppendResult, error) {
	res := make([]backend.AppendResult, len(ncs))
	if len(ncs) == 0 {
		return res, nil
	}
	defer b.changed.Notify("")
	now := nanos(b.now())
	err := b.appendTx(ctx, func(st *writeTx) (headsKnown, error) {
		known, err := b.heads.load(st, ncs)
		if err != nil {
			return known, err
		}
		var last int64
		dirty := map[string]bool(nil)
		for i := range ncs {
			if ncs[i].Chained && !backend.ChainHolds(ncs, res, i) {
				res[i] = backend.AppendResult{Err: backend.ErrStale}
				continue
			}
			c, err := st.append(&ncs[i], &known, now)
			if err != nil && !isEntryErr(err) {
				return known, err
			}
			res[i] = backend.AppendResult{Commit: c, Err: err}
			if err == nil {
				last = c.ID
				if h := known.heads[ncs[i].Thread]; known.quotas[h.scope] != nil {
					if dirty == nil {
						dirty = map[string]bool{}
					}
					dirty[h.scope] = true
				}
			}
		}
		for scope := range dirty {
			if err := st.putUsage(known.quotas[scope]); err != nil {
				return known, err
			}
		}
		if last-known.upto >= b.indexEvery {
			for _, q := range indexCommits {
				if _, err := st.conn.ExecContext(ctx, q); err != nil {
					return known, err
				}
			}
			known.upto = last
		}
		return known, nil
	})
	var dbe *dbError
	if errors.As(err, &dbe) {
		return nil, err // a full disk or a read-only file, said as such
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: append: %w", err)
	}
	if b.ckpt != nil {
		var n int64
		for i := range ncs {
			if res[i].Err == nil {
				n += int64(len(ncs[i].Pack)+len(ncs[i].Root)+len(ncs[i].Meta)) + 64
			}
		}
		b.ckpt.wrote(n)
	}
	return res, nil
}

// appendTx runs f in a write transaction on the appender's connection and
// commits it while holding the head cache's lock, then keeps the heads f
// learnt (or forgets the cache when the commit failed): the next Append,
// which may begin as soon as this one commits, reads the cache only after
// that.
func (b *Backend) appendTx(ctx context.Context, f func(w *writeTx) (headsKnown, error)) error {
	if b.readOnly {
		return b.readOnlyErr()
	}
	b.wmu.Lock()
	defer b.wmu.Unlock()
	a := &b.app
	if err := a.begin(ctx); err != nil {
		return mapErr(b.path, err)
	}
	known, err := f(&writeTx{ctx: ctx, conn: a.conn, s: &a.stmts, a: a})
	if err != nil {
		// Nothing changed: what the cache holds is still true.
		_ = a.end(ctx, false)
		return mapErr(b.path, err)
	}
	b.heads.mu.Lock()
	defer b.heads.mu.Unlock()
	if err := a.end(ctx, true); err != nil {
		b.heads.forgetLocked() // the commit's outcome may be unknown
		return mapErr(b.path, err)
	}
	b.heads.keepLocked(known)
	return nil
}

// isEntryErr tells the refusals of one entry from failures of the call.
func isEntryErr(err error) bool {
	var qe *backend.QuotaError
	return err == backend.ErrStale || err == backend.ErrNoThread ||
		err == backend.ErrNotRetained || err == backend.ErrCheckpointExists ||
		err == backend.ErrKeyUsed || errors.As(err, &qe)
}

// writeTx is an Append's transaction: the appender's connection, inside
// BEGIN IMMEDIATE, and the statements prepared on it.
type writeTx struct {
	ctx  context.Context
	conn *sql.Conn
	s    *writeStmts
	a    *appender
}

// head is what an Append knows of a thread: its scope, which every commit
// row repeats, and its newest seq, dropped commits included.
type head struct {
	scope string
	top   int64
}

// readHeads reads the heads of the threads ids lists (a JSON array) into
// m, in one query (a thread that does not exist stays missing), and
// returns seq_indexed.upto.
func (w *writeTx) readHeads(ids []byte, k *headsKnown) (int64, error) {
	rows, err := w.s.heads.QueryContext(w.ctx, string(ids))
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var upto int64
	for rows.Next() {
		var id int64
		h := new(head)
		var q quotaRow
		if err := rows.Scan(append([]any{&id, &h.scope, &h.top, &upto}, q.dest()...)...); err != nil {
			return 0, err
		}
		k.heads[id] = h
		if _, ok := k.quotas[h.scope]; !ok {
			k.quotas[h.scope] = q.quota(h.scope)
		}
	}
	return upto, rows.Err()
}

func (w *writeTx) append(nc *backend.NewCommit, k *headsKnown, now int64) (backend.Commit, error) {
	// The refusals in the order the contract ranks them: thread, head,
	// required commit, checkpoint name, quota.
	h := k.heads[nc.Thread]
	if h == nil {
		return backend.Commit{}, backend.ErrNoThread
	}
	if nc.Seq != h.top+1 {
		return backend.Commit{}, backend.ErrStale
	}
	if r := nc.Requires; r != nil {
		var one int
		err := w.s.retained.QueryRowContext(w.ctx, r.Thread, r.Seq).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return backend.Commit{}, backend.ErrNotRetained
		}
		if err != nil {
			return backend.Commit{}, err
		}
	}
	if nc.Checkpoint != "" {
		var one int
		err := w.s.checkpointExists.QueryRowContext(w.ctx, nc.Thread, nc.Checkpoint).Scan(&one)
		if err == nil {
			return backend.Commit{}, backend.ErrCheckpointExists
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return backend.Commit{}, err
		}
	}
	q := k.quotas[h.scope]
	added := backend.Usage{Files: nc.DeltaFiles, Bytes: nc.DeltaBytes, HistoryBytes: int64(len(nc.Pack))}
	if q != nil {
		if err := q.Add(added); err != nil {
			return backend.Commit{}, err
		}
	}
	if nc.Key != nil {
		// A key already used writes nothing: the usage is taken back.
		claim, err := w.a.claimStmt(w.ctx)
		if err == nil {
			err = claimKey(w.ctx, claim, nc.Key, nc.Thread, nc.Seq, now)
		}
		if err != nil {
			if q != nil {
				_ = q.Add(backend.Usage{Files: -added.Files, Bytes: -added.Bytes, HistoryBytes: -added.HistoryBytes})
			}
			return backend.Commit{}, err
		}
	}
	r, err := w.s.insertCommit.ExecContext(w.ctx,
		nc.Thread, nc.Seq, now, h.scope, blob(nc.Root), blob(nc.Meta), blob(nc.Pack), nc.Files, nc.Bytes)
	if err != nil {
		return backend.Commit{}, err
	}
	id, err := r.LastInsertId()
	if err != nil {
		return backend.Commit{}, err
	}
	h.top = nc.Seq
	if nc.Checkpoint != "" {
		if _, err := w.s.insertCheckpoint.ExecContext(w.ctx, nc.Thread, nc.Checkpoint, nc.Seq); err != nil {
			return backend.Commit{}, err
		}
	}
	return backend.Commit{
		ID:     id,
		Thread: nc.Thread,
		Seq:    nc.Seq,
		Root:   slices.Clone(nc.Root),
		Meta:   slices.Clone(nc.Meta),
		Time:   fromNanos(now),
	}, nil
}

// scanCommit reads the columns of commitCols.
func scanCommit(row interface{ Scan(...any) error }, thread int64) (backend.Commit, error) {
	c := backend.Commit{Thread: thread}
	var t int64
	if err := row.Scan(&c.ID, &c.Seq, &t, &c.Root, &c.Meta); err != nil {
		return c, err
	}
	c.Time = fromNanos(t)
	return c, nil
}

// threadMissing tells, after a read found nothing, whether that is because
// the thread does not exist.
func (b *Backend) threadMissing(ctx context.Context, thread int64) (bool, error) {
	var one int
	err := b.rs.threadExists.QueryRowContext(ctx, thread).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return true, nil
	}
	return false, err
}

// Head returns the newest commit of a thread. The newest commit is never
// dropped, so it is the retained commit with the highest seq.
//
// Between commits to the database a thread's head is answered from memory
// (readheads.go): the WAL index's header, read first, shows whether any
// connection of any process has committed since it was read.
func (b *Backend) Head(ctx context.Context, thread int64) (backend.Commit, bool, error) {
	hdr, cached := b.readHeads.current()
	if cached {
		if c, ok := b.readHeads.get(hdr, thread); ok {
			return c, true, nil
		}
	}
	c, err := scanCommit(b.rs.head.QueryRowContext(ctx, thread), thread)
	if err == nil {
		if cached {
			b.readHeads.put(hdr, c)
		}
		return c, true, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return backend.Commit{}, false, fmt.Errorf("sqlite: head: %w", err)
	}
	missing, err := b.threadMissing(ctx, thread)
	if err != nil {
		return backend.Commit{}, false, fmt.Errorf("sqlite: head: %w", err)
	}
	if missing {
		return backend.Commit{}, false, backend.ErrNoThread
	}
	return backend.Commit{}, false, nil
}

// CommitAt returns a retained commit by sequence number.
func (b *Backend) CommitAt(ctx context.Context, thread, seq int64) (backend.Commit, error) {
	c, err := scanCommit(b.rs.commitAt.QueryRowContext(ctx, thread, seq), thread)
	if err == nil {
		return c, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return backend.Commit{}, fmt.Errorf("sqlite: commit: %w", err)
	}
	missing, err := b.threadMissing(ctx, thread)
	if err != nil {
		return backend.Commit{}, fmt.Errorf("sqlite: commit: %w", err)
	}
	if missing {
		return backend.Commit{}, backend.ErrNoThread
	}
	return backend.Commit{}, backend.ErrNoCommit
}

// Log lists retained commits newest first.
func (b *Backend) Log(ctx context.Context, thread, before int64, limit int) ([]backend.Commit, error) {
	if before <= 0 {
		before = math.MaxInt64
	}
	lim := int64(limit)
	if limit <= 0 {
		lim = -1 // SQLite: no limit
	}
	rows, err := b.rs.log.QueryContext(ctx, thread, before, lim)
	if err != nil {
		return nil, fmt.Errorf("sqlite: log: %w", err)
	}
	defer rows.Close()
	var out []backend.Commit
	for rows.Next() {
		c, err := scanCommit(rows, thread)
		if err != nil {
			return nil, fmt.Errorf("sqlite: log: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: log: %w", err)
	}
	if len(out) == 0 {
		missing, err := b.threadMissing(ctx, thread)
		if err != nil {
			return nil, fmt.Errorf("sqlite: log: %w", err)
		}
		if missing {
			return nil, backend.ErrNoThread
		}
	}
	return out, nil
}

// Pack returns the pack stored with a commit, retained or dropped, until
// garbage collection deletes it.
func (b *Backend) Pack(ctx context.Context, id int64) (string, error) {
	var p string
	err := b.rs.pack.QueryRowContext(ctx, id).Scan(&p)
	if errors.Is(err, sql.ErrNoRows) {
		return "", backend.ErrNoPack
	}
	if err != nil {
		return "", fmt.Errorf("sqlite: pack: %w", err)
	}
	return p, nil
}

// packsSQL reads the packs of the IDs of the JSON array ?1 in the order
// of their IDs while their running total stays within ?2 bytes (the
// first whatever its size), and the IDs of the others without their
// packs: length of a blob is read from its record's header, not from the
// overflow pages that hold it.
const packsSQL = `WITH s AS (
	SELECT id, sum(length(pack)) OVER w <= ?2 OR row_number() OVER w = 1 AS taken
	FROM commits WHERE id IN (SELECT value FROM json_each(?1)) WINDOW w AS (ORDER BY id)
) SELECT s.id, s.taken, CASE WHEN s.taken THEN c.pack END FROM s JOIN commits c ON c.id = s.id`

// Packs reads many packs in one statement (backend.PacksReader).
func (b *Backend) Packs(ctx context.Context, ids []int64, maxBytes int64) (map[int64]string, []int64, error) {
	packs := make(map[int64]string, len(ids))
	if len(ids) == 0 {
		return packs, nil, nil
	}
	rows, err := b.rs.packs.QueryContext(ctx, jsonInts(ids), maxBytes)
	if err != nil {
		return nil, nil, fmt.Errorf("sqlite: packs: %w", err)
	}
	defer rows.Close()
	var rest []int64
	for rows.Next() {
		var id int64
		var taken bool
		var p sql.NullString
		if err := rows.Scan(&id, &taken, &p); err != nil {
			return nil, nil, fmt.Errorf("sqlite: packs: %w", err)
		}
		if taken {
			packs[id] = p.String
		} else {
			rest = append(rest, id)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("sqlite: packs: %w", err)
	}
	return packs, rest, nil
}

// SetCheckpoint names a retained commit.
func (b *Backend) SetCheckpoint(ctx context.Context, thread int64, name string, seq int64) error {
	err := b.write(ctx, func(tx *sql.Tx) error {
		var one int
		err := tx.QueryRowContext(ctx, threadByID, thread).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return backend.ErrNoThread
		}
		if err != nil {
			return err
		}
		err = tx.QueryRowContext(ctx, retainedSQL, thread, seq).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return backend.ErrNoCommit
		}
		if err != nil {
			return err
		}
		r, err := tx.ExecContext(ctx, "INSERT INTO checkpoints (thread_id, name, seq) VALUES (?, ?, ?) ON CONFLICT DO NOTHING", thread, name, seq)
		if err != nil {
			return err
		}
		if n, err := r.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return backend.ErrCheckpointExists
		}
		return nil
	})
	if err != nil && !isSentinel(err) {
		return fmt.Errorf("sqlite: set checkpoint: %w", err)
	}
	return err
}

func isSentinel(err error) bool {
	return err == backend.ErrNoThread || err == backend.ErrNoCommit || err == backend.ErrCheckpointExists ||
		err == backend.ErrNoCheckpoint
}

// Checkpoints lists a thread's checkpoints, newest commit first, then by
// name.
func (b *Backend) Checkpoints(ctx context.Context, thread int64) ([]backend.Checkpoint, error) {
	var out []backend.Checkpoint
	err := b.read(ctx, func(tx *sql.Tx) error {
		var one int
		err := tx.QueryRowContext(ctx, threadByID, thread).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return backend.ErrNoThread
		}
		if err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, "SELECT name, seq FROM checkpoints WHERE thread_id = ? ORDER BY seq DESC, name", thread)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var c backend.Checkpoint
			if err := rows.Scan(&c.Name, &c.Seq); err != nil {
				return err
			}
			out = append(out, c)
		}
		return rows.Err()
	})
	if err != nil && !isSentinel(err) {
		return nil, fmt.Errorf("sqlite: checkpoints: %w", err)
	}
	return out, err
}

// CheckpointSeq resolves a checkpoint name.
func (b *Backend) CheckpointSeq(ctx context.Context, thread int64, name string) (int64, error) {
	var seq int64
	err := b.r.QueryRowContext(ctx, "SELECT seq FROM checkpoints WHERE thread_id = ? AND name = ?", thread, name).Scan(&seq)
	if err == nil {
		return seq, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("sqlite: checkpoint: %w", err)
	}
	missing, err := b.threadMissing(ctx, thread)
	if err != nil {
		return 0, fmt.Errorf("sqlite: checkpoint: %w", err)
	}
	if missing {
		return 0, backend.ErrNoThread
	}
	return 0, backend.ErrNoCheckpoint
}
