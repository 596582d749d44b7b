package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/satchel-dev/satchel/backend"
)

// jsonInts encodes ids as a JSON array, for json_each: one statement
// whatever the number of ids.
func jsonInts(ids []int64) string {
	buf := make([]byte, 0, 2+len(ids)*8)
	buf = append(buf, '[')
	for i, id := range ids {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = strconv.AppendInt(buf, id, 10)
	}
	return string(append(buf, ']'))
}

// Drop marks commits of a thread dropped (retention) and deletes the
// checkpoints that named them (the caller never lists the head). Their rows, and so their seqs
// and packs, stay until DeletePacks.
func (b *Backend) Drop(ctx context.Context, thread int64, seqs []int64) error {
	err := b.write(ctx, func(tx *sql.Tx) error {
		var one int
		err := tx.QueryRowContext(ctx, threadByID, thread).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return backend.ErrNoThread
		}
		if err != nil || len(seqs) == 0 {
			return err
		}
		list := jsonInts(seqs)
		if _, err := tx.ExecContext(ctx, `UPDATE commits SET dropped_at = ?1
			WHERE id IN (SELECT id FROM thread_commits WHERE thread_id = ?2 AND seq IN (SELECT value FROM json_each(?3)))
			AND dropped_at IS NULL`,
			nanos(b.now()), thread, list); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM checkpoints
			WHERE thread_id = ?1 AND seq IN (SELECT value FROM json_each(?2))`, thread, list)
		return err
	})
	if err != nil && !errors.Is(err, backend.ErrNoThread) {
		return fmt.Errorf("sqlite: drop: %w", err)
	}
	return err
}

// GCSnapshot reads, in one read transaction, every retained commit of a
// scope and the packs dropped before cutoff.
func (b *Backend) GCSnapshot(ctx context.Context, scope string, cutoff time.Time) (backend.GCSnapshot, error) {
	var s backend.GCSnapshot
	err := b.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT c.id, c.thread_id, c.seq, c.time, c.root
			FROM threads t JOIN thread_commits v ON v.thread_id = t.id JOIN commits c ON c.id = v.id
			WHERE t.scope = ? AND c.dropped_at IS NULL ORDER BY c.id`, scope)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var c backend.Commit
			var t int64
			if err := rows.Scan(&c.ID, &c.Thread, &c.Seq, &t, &c.Root); err != nil {
				return err
			}
			c.Time = fromNanos(t)
			s.Retained = append(s.Retained, c)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		rows, err = tx.QueryContext(ctx, `SELECT id FROM commits
			WHERE scope = ? AND dropped_at IS NOT NULL AND dropped_at < ? ORDER BY id`, scope, nanos(cutoff))
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				return err
			}
			s.Dropped = append(s.Dropped, id)
		}
		return rows.Err()
	})
	if err != nil {
		return backend.GCSnapshot{}, fmt.Errorf("sqlite: gc snapshot: %w", err)
	}
	return s, nil
}

// DeletePacks deletes the rows of dropped commits, packs, commit_seq
// entries and all; ids of
// retained commits are ignored. The ids are never given again
// (AUTOINCREMENT).
func (b *Backend) DeletePacks(ctx context.Context, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	err := b.write(ctx, func(tx *sql.Tx) error {
		list := jsonInts(ids)
		if _, err := tx.ExecContext(ctx, `UPDATE scope_quotas SET history_bytes = history_bytes - (
			SELECT coalesce(sum(length(pack)), 0) FROM commits
			WHERE id IN (SELECT value FROM json_each(?1)) AND dropped_at IS NOT NULL AND scope = scope_quotas.scope)
			WHERE scope IN (SELECT scope FROM commits WHERE id IN (SELECT value FROM json_each(?1)))`, list); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM commit_seq WHERE (thread_id, seq) IN (SELECT thread_id, seq FROM commits
			WHERE id IN (SELECT value FROM json_each(?)) AND dropped_at IS NOT NULL)`, list); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM commits
			WHERE id IN (SELECT value FROM json_each(?)) AND dropped_at IS NOT NULL`, list)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: delete packs: %w", err)
	}
	return nil
}

// RewritePack replaces a dropped commit's pack; a retained commit's pack
// is left alone.
func (b *Backend) RewritePack(ctx context.Context, id int64, pack []byte) error {
	err := b.write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE scope_quotas SET history_bytes = history_bytes + ?1 - (
			SELECT length(pack) FROM commits WHERE id = ?2)
			WHERE scope = (SELECT scope FROM commits WHERE id = ?2 AND dropped_at IS NOT NULL)`, len(pack), id); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, "UPDATE commits SET pack = ? WHERE id = ? AND dropped_at IS NOT NULL", blob(pack), id)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: rewrite pack: %w", err)
	}
	return nil
}
