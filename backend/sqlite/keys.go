package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"

	"github.com/satchel-dev/satchel/backend"
)

// Idempotency keys and the log of document changes (backend.Keys):
// tables idem_thread_keys (migrations/0007_idem_thread_keys.sql: a key is
// claimed in its scope and thread) and doc_changes (0006_idem.sql). A
// claim is one upsert in the write's transaction, under the write lock.

var _ backend.Keys = (*Backend)(nil)

const claimKeySQL = `INSERT INTO idem_thread_keys (scope, key, hash, result, thread_id, seq, time, expires, thread)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
ON CONFLICT (scope, thread, key) DO UPDATE SET hash = excluded.hash, result = excluded.result,
	thread_id = excluded.thread_id, seq = excluded.seq, time = excluded.time, expires = excluded.expires
WHERE idem_thread_keys.expires <= ?7`

const logChangeSQL = "INSERT INTO doc_changes (time, store, scope, key, version, op, meta) VALUES (?, ?, ?, ?, ?, ?, ?)"

const keyRecordSQL = "SELECT hash, result, thread_id, seq, time, expires FROM idem_thread_keys WHERE scope = ? AND thread = ? AND key = ? AND expires > ?"

// keyState holds the statements of keys, prepared by Open (a read-only
// open prepares them on first use: a database opened read-only before
// its migration has no idem_thread_keys).
type keyState struct {
	once          sync.Once
	err           error
	claim, record *sql.Stmt // claim: on the writer pool (Append has its own)
	logChange     *sql.Stmt // writer: one entry of the log of document changes
}

func (b *Backend) keyState() (*keyState, error) {
	k := &b.keyStmts
	k.once.Do(func() {
		ctx := context.Background()
		if k.claim, k.err = b.w.PrepareContext(ctx, claimKeySQL); k.err != nil {
			return
		}
		if k.logChange, k.err = b.w.PrepareContext(ctx, logChangeSQL); k.err != nil {
			return
		}
		k.record, k.err = b.r.PrepareContext(ctx, keyRecordSQL)
	})
	return k, k.err
}

// claimKey claims c with claim (claimKeySQL, prepared on the connection
// of the transaction) at now (unix nanoseconds), or returns
// backend.ErrKeyUsed when it is live.
func claimKey(ctx context.Context, claim *sql.Stmt, c *backend.KeyClaim, thread, seq, now int64) error {
	r, err := claim.ExecContext(ctx, c.Scope, c.Key, blob(c.Hash), blob(c.Result), thread, seq, now, now+int64(c.TTL), c.Thread)
	if err != nil {
		return err
	}
	n, err := r.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return backend.ErrKeyUsed
	}
	return nil
}

// logDocChange claims ch's key and, when version >= 0, logs ch, in tx.
func (b *Backend) logDocChange(ctx context.Context, tx *sql.Tx, ch *backend.DocChange, id backend.DocID, version, now int64) error {
	k, err := b.keyState()
	if err != nil {
		return err
	}
	if ch.Key != nil {
		if err := claimKey(ctx, tx.StmtContext(ctx, k.claim), ch.Key, 0, version, now); err != nil {
			return err
		}
	}
	if version < 0 {
		return nil
	}
	_, err = tx.StmtContext(ctx, k.logChange).ExecContext(ctx, now, id.Store, ch.Scope, id.Key, version, ch.Op, blob(ch.Meta))
	return err
}

func (b *Backend) KeyRecord(ctx context.Context, scope, thread, key string) (backend.KeyRecord, bool, error) {
	k, err := b.keyState()
	if err != nil {
		return backend.KeyRecord{}, false, fmt.Errorf("sqlite: read key: %w", err)
	}
	var r backend.KeyRecord
	var t, exp int64
	err = k.record.QueryRowContext(ctx, scope, thread, key, nanos(b.now())).Scan(&r.Hash, &r.Result, &r.Thread, &r.Seq, &t, &exp)
	if errors.Is(err, sql.ErrNoRows) {
		return backend.KeyRecord{}, false, nil
	}
	if err != nil {
		return backend.KeyRecord{}, false, fmt.Errorf("sqlite: read key: %w", err)
	}
	r.Time, r.Expires = fromNanos(t), fromNanos(exp)
	return r, true, nil
}

func (b *Backend) ClaimKey(ctx context.Context, c backend.KeyClaim, thread, seq int64) error {
	var used bool
	k, err := b.keyState()
	if err != nil {
		return fmt.Errorf("sqlite: claim key: %w", err)
	}
	err = b.write(ctx, func(tx *sql.Tx) error {
		err := claimKey(ctx, tx.StmtContext(ctx, k.claim), &c, thread, seq, nanos(b.now()))
		if errors.Is(err, backend.ErrKeyUsed) {
			used = true
			return nil
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: claim key: %w", err)
	}
	if used {
		return backend.ErrKeyUsed
	}
	return nil
}

func (b *Backend) SweepKeys(ctx context.Context) (int64, error) {
	var n int64
	err := b.write(ctx, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, "DELETE FROM idem_thread_keys WHERE expires <= ?", nanos(b.now()))
		if err != nil {
			return err
		}
		n, err = r.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("sqlite: sweep keys: %w", err)
	}
	return n, nil
}

func (b *Backend) DocChanges(ctx context.Context, q backend.DocChangeQuery) ([]backend.DocChangeEntry, error) {
	query := "SELECT id, time, store, scope, key, version, op, meta FROM doc_changes WHERE (?1 = '' OR scope = ?1) AND (?2 = 0 OR id < ?2) AND time >= ?3 ORDER BY id DESC"
	var since int64 = -1 << 63
	if !q.Since.IsZero() {
		since = nanos(q.Since)
	}
	args := []any{q.Scope, q.Before, since}
	if q.Limit > 0 {
		query += " LIMIT ?4"
		args = append(args, q.Limit)
	}
	rows, err := b.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: document changes: %w", err)
	}
	defer rows.Close()
	var out []backend.DocChangeEntry
	for rows.Next() {
		var e backend.DocChangeEntry
		var t int64
		if err := rows.Scan(&e.ID, &t, &e.Store, &e.Scope, &e.Key, &e.Version, &e.Op, &e.Meta); err != nil {
			return nil, fmt.Errorf("sqlite: document changes: %w", err)
		}
		e.Time = fromNanos(t)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: document changes: %w", err)
	}
	return out, nil
}

func (b *Backend) DeleteDocAs(ctx context.Context, id backend.DocID, ch backend.DocChange) (backend.Doc, bool, error) {
	defer b.changed.Notify("")
	return b.deleteDoc(ctx, id, &ch)
}
