package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/satchel-dev/satchel/backend"
)

// Drop marks commits of a thread dropped (retention) and deletes the
// checkpoints that named them (the caller never lists the head). Their
// rows, and so their seqs and packs, stay until DeletePacks.
//
// The checkpoints
// are deleted by a second statement: its snapshot also sees a checkpoint
// that a SetCheckpoint holding the commit's row (FOR SHARE) made the
// UPDATE wait for.
func (b *Backend) Drop(ctx context.Context, thread int64, seqs []int64) error {
	err := pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
		var exists bool
		if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM threads WHERE id = $1)", thread).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			return backend.ErrNoThread
		}
		if len(seqs) == 0 {
			return nil
		}
		if _, err := tx.Exec(ctx, `UPDATE commits SET dropped_at = now()
			WHERE thread_id = $1 AND seq = ANY($2) AND dropped_at IS NULL`, thread, seqs); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM checkpoints k
			WHERE k.thread_id = $1 AND k.seq = ANY($2) AND EXISTS (
				SELECT 1 FROM commits c WHERE c.thread_id = $1 AND c.seq = k.seq AND c.dropped_at IS NOT NULL)`, thread, seqs)
		return err
	})
	if err != nil && !errors.Is(err, backend.ErrNoThread) {
		return fmt.Errorf("postgres: drop: %w", err)
	}
	return err
}

// GCSnapshot reads, in one statement (one snapshot), every retained commit
// of a scope and the packs dropped before cutoff.
func (b *Backend) GCSnapshot(ctx context.Context, scope string, cutoff time.Time) (backend.GCSnapshot, error) {
	var s backend.GCSnapshot
	rows, _ := b.pool.Query(ctx, `SELECT false, c.id, c.thread_id, c.seq, c.time, c.root
		FROM threads t JOIN commits c ON c.thread_id = t.id
		WHERE t.scope = $1 AND c.dropped_at IS NULL
		UNION ALL
		SELECT true, id, 0, 0, NULL, NULL FROM commits
		WHERE scope = $1 AND dropped_at IS NOT NULL AND dropped_at < $2
		ORDER BY 2`, scope, cutoff)
	var (
		dropped bool
		c       backend.Commit
		at      *time.Time
		root    []byte
	)
	_, err := pgx.ForEachRow(rows, []any{&dropped, &c.ID, &c.Thread, &c.Seq, &at, &root}, func() error {
		if dropped {
			s.Dropped = append(s.Dropped, c.ID)
			return nil
		}
		rc := c
		rc.Root = root
		rc.Time = at.UTC()
		root = nil
		s.Retained = append(s.Retained, rc)
		return nil
	})
	if err != nil {
		return backend.GCSnapshot{}, fmt.Errorf("postgres: gc snapshot: %w", err)
	}
	return s, nil
}

// DeletePacks deletes the rows of dropped commits, packs and all; ids of
// retained commits are ignored. Identity values are never given again.
func (b *Backend) DeletePacks(ctx context.Context, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	if _, err := b.pool.Exec(ctx, `WITH del AS (
		DELETE FROM commits WHERE id = ANY($1) AND dropped_at IS NOT NULL RETURNING scope, octet_length(pack) AS n
	), per AS (SELECT scope, sum(n) AS n FROM del GROUP BY scope)
	UPDATE scope_quotas q SET history_bytes = q.history_bytes - per.n FROM per WHERE q.scope = per.scope`, ids); err != nil {
		return fmt.Errorf("postgres: delete packs: %w", err)
	}
	return nil
}

// RewritePack replaces a dropped commit's pack; a retained commit's pack
// is left alone.
func (b *Backend) RewritePack(ctx context.Context, id int64, pack []byte) error {
	if _, err := b.pool.Exec(ctx, `WITH old AS (
		SELECT scope, octet_length(pack) AS n FROM commits WHERE id = $1 AND dropped_at IS NOT NULL FOR UPDATE
	), upd AS (
		UPDATE commits SET pack = $2 WHERE id = $1 AND dropped_at IS NOT NULL
	)
	UPDATE scope_quotas q SET history_bytes = q.history_bytes + octet_length($2::bytea) - old.n FROM old WHERE q.scope = old.scope`, id, bytea(pack)); err != nil {
		return fmt.Errorf("postgres: rewrite pack: %w", err)
	}
	return nil
}
