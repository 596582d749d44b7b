package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/satchel-dev/satchel/backend"
)

// quotaCTE is the part of a statement that checks the quota of a scope
// (scope, an SQL expression) against what the statement adds (SQL
// expressions for bytes, files, threads and history bytes): q, the scope's
// row locked FOR UPDATE (none, and no lock, for a scope without a quota),
// and fits, whether the additions stay within its limits, by the rule of
// backend.Quota.Add. Waiting for the lock, READ COMMITTED reads the row as
// the writer before left it: two writers of one scope cannot both pass
// its limit.
func quotaCTE(scope, bytes, files, threads, history string) string {
	over := func(d, used, lim string) string {
		return fmt.Sprintf("(%s > 0 AND %s <> -1 AND %s + %s > %s)", d, lim, used, d, lim)
	}
	return `q AS (
	SELECT * FROM scope_quotas WHERE scope = ` + scope + ` FOR UPDATE
), fits AS (
	SELECT NOT EXISTS (SELECT 1 FROM q WHERE ` + strings.Join([]string{
		over(bytes, "bytes", "max_bytes"), over(files, "files", "max_files"),
		over(threads, "threads", "max_threads"), over(history, "history_bytes", "max_history_bytes"),
	}, " OR ") + `) AS ok
)`
}

// quotaUpdate is the CTE qu that adds to the counters of the scope's row
// once the statement's CTE ins has inserted its row.
func quotaUpdate(scope, bytes, files, threads, history string) string {
	return `qu AS (
	UPDATE scope_quotas SET bytes = bytes + ` + bytes + `, files = files + ` + files +
		`, threads = threads + ` + threads + `, history_bytes = history_bytes + ` + history + `
	WHERE scope = ` + scope + ` AND EXISTS (SELECT 1 FROM ins)
)`
}

// quotaOut are the output columns quotaRow scans: fits, then q's row.
const quotaOut = `(SELECT ok FROM fits), q.scope, q.max_bytes, q.max_files, q.max_threads, q.max_documents, q.max_history_bytes,
	q.bytes, q.files, q.threads, q.documents, q.history_bytes`

// quotaRow scans quotaOut.
type quotaRow struct {
	fits  bool
	scope *string
	v     [10]*int64
}

func (r *quotaRow) dest() []any {
	d := []any{&r.fits, &r.scope}
	for i := range r.v {
		d = append(d, &r.v[i])
	}
	return d
}

func (r *quotaRow) quota() *backend.Quota {
	if r.scope == nil {
		return nil
	}
	q := &backend.Quota{Scope: *r.scope}
	lim, used := q.Limits.Fields(), q.Used.Fields()
	for i := range lim {
		*lim[i], *used[i] = *r.v[i], *r.v[5+i]
	}
	return q
}

// refusal is the QuotaError of an addition that did not fit.
func (r *quotaRow) refusal(d backend.Usage) error {
	q := r.quota()
	if q == nil {
		return fmt.Errorf("postgres: quota refused without a quota row")
	}
	if err := q.Add(d); err != nil {
		return err
	}
	return fmt.Errorf("postgres: quota refused an addition that fits")
}

const quotaSelect = `SELECT scope, max_bytes, max_files, max_threads, max_documents, max_history_bytes,
	bytes, files, threads, documents, history_bytes FROM scope_quotas`

func scanQuota(row pgx.Row) (backend.Quota, error) {
	var q backend.Quota
	lim, used := q.Limits.Fields(), q.Used.Fields()
	err := row.Scan(&q.Scope, lim[0], lim[1], lim[2], lim[3], lim[4], used[0], used[1], used[2], used[3], used[4])
	return q, err
}

// addUsage adds d to the counters of scope's row in tx, if it has one,
// refused when d grows a counter past its limit.
func addUsage(ctx context.Context, tx pgx.Tx, scope string, d backend.Usage) error {
	q, err := scanQuota(tx.QueryRow(ctx, quotaSelect+" WHERE scope = $1 FOR UPDATE", scope))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := q.Add(d); err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `UPDATE scope_quotas SET bytes = $2, files = $3, threads = $4, documents = $5, history_bytes = $6
		WHERE scope = $1`, scope, q.Used.Bytes, q.Used.Files, q.Used.Threads, q.Used.Documents, q.Used.HistoryBytes)
	return err
}

// scopeHeads lists a scope's threads with their head commits (Seq 0 for
// an empty thread), by id.
func scopeHeads(ctx context.Context, tx pgx.Tx, scope string) ([]backend.Commit, error) {
	rows, _ := tx.Query(ctx, `SELECT t.id, c.id, c.seq, c.root FROM threads t
		LEFT JOIN commits c ON c.thread_id = t.id AND c.seq = (SELECT max(seq) FROM commits WHERE thread_id = t.id) AND c.dropped_at IS NULL
		WHERE t.scope = $1 ORDER BY t.id`, scope)
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (backend.Commit, error) {
		var c backend.Commit
		var id, seq *int64
		err := row.Scan(&c.Thread, &id, &seq, &c.Root)
		if id != nil {
			c.ID, c.Seq = *id, *seq
		}
		return c, err
	})
}

// countStored counts what SQL can of a scope's usage.
func countStored(ctx context.Context, tx pgx.Tx, scope string) (backend.Usage, error) {
	var u backend.Usage
	err := tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM threads WHERE scope = $1),
		(SELECT count(*) FROM docs WHERE scope = $1),
		(SELECT coalesce(sum(octet_length(pack)), 0) FROM commits WHERE scope = $1)`, scope).Scan(&u.Threads, &u.Documents, &u.HistoryBytes)
	return u, err
}

// SetQuota implements backend.Quotas. The first row of a scope is counted
// while the tables its counters follow are locked against writes (SHARE
// ROW EXCLUSIVE: reads go on, every append, thread creation and document
// write of every scope waits for the count), so nothing lands between the
// count and the row; the lock is held only for that first count.
func (b *Backend) SetQuota(ctx context.Context, scope string, limits backend.Usage, live backend.LiveFunc) error {
	err := pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
		if limits.Unlimited() {
			_, err := tx.Exec(ctx, "DELETE FROM scope_quotas WHERE scope = $1", scope)
			return err
		}
		args := []any{scope, limits.Bytes, limits.Files, limits.Threads, limits.Documents, limits.HistoryBytes}
		tag, err := tx.Exec(ctx, `UPDATE scope_quotas SET max_bytes = $2, max_files = $3, max_threads = $4,
			max_documents = $5, max_history_bytes = $6 WHERE scope = $1`, args...)
		if err != nil || tag.RowsAffected() > 0 {
			return err
		}
		if _, err := tx.Exec(ctx, "LOCK TABLE commits, threads, docs, scope_quotas IN SHARE ROW EXCLUSIVE MODE"); err != nil {
			return err
		}
		u, err := countStored(ctx, tx, scope)
		if err != nil {
			return err
		}
		heads, err := scopeHeads(ctx, tx, scope)
		if err != nil {
			return err
		}
		files, bytes, err := live(ctx, heads)
		if err != nil {
			return err
		}
		batch := &pgx.Batch{}
		for i, h := range heads {
			u.Files += files[i]
			u.Bytes += bytes[i]
			if h.Seq != 0 {
				batch.Queue("UPDATE commits SET files = $2, bytes = $3 WHERE id = $1", h.ID, files[i], bytes[i])
			}
		}
		batch.Queue(`INSERT INTO scope_quotas (scope, max_bytes, max_files, max_threads, max_documents, max_history_bytes,
			bytes, files, threads, documents, history_bytes) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
			ON CONFLICT (scope) DO UPDATE SET max_bytes = $2, max_files = $3, max_threads = $4, max_documents = $5, max_history_bytes = $6`,
			append(args, u.Bytes, u.Files, u.Threads, u.Documents, u.HistoryBytes)...)
		return tx.SendBatch(ctx, batch).Close()
	})
	if err != nil {
		return fmt.Errorf("postgres: set quota: %w", err)
	}
	return nil
}

// Quotas implements backend.Quotas.
func (b *Backend) Quotas(ctx context.Context, scope string) ([]backend.Quota, error) {
	rows, _ := b.pool.Query(ctx, quotaSelect+" WHERE $1 = '' OR scope = $1 ORDER BY scope", scope)
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (backend.Quota, error) { return scanQuota(row) })
	if err != nil {
		return nil, fmt.Errorf("postgres: quotas: %w", err)
	}
	return out, nil
}

// CountUsage implements backend.Quotas, in one REPEATABLE READ snapshot.
func (b *Backend) CountUsage(ctx context.Context, scope string, live backend.LiveFunc) (backend.Usage, *backend.Quota, error) {
	var u backend.Usage
	var row *backend.Quota
	err := pgx.BeginTxFunc(ctx, b.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		q, err := scanQuota(tx.QueryRow(ctx, quotaSelect+" WHERE scope = $1", scope))
		switch {
		case err == nil:
			row = &q
		case !errors.Is(err, pgx.ErrNoRows):
			return err
		}
		if u, err = countStored(ctx, tx, scope); err != nil {
			return err
		}
		heads, err := scopeHeads(ctx, tx, scope)
		if err != nil {
			return err
		}
		files, bytes, err := live(ctx, heads)
		if err != nil {
			return err
		}
		for i := range heads {
			u.Files += files[i]
			u.Bytes += bytes[i]
		}
		return nil
	})
	if err != nil {
		return u, nil, fmt.Errorf("postgres: count usage: %w", err)
	}
	return u, row, nil
}
