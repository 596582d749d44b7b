package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/satchel-dev/satchel/backend"
)

// docsQuotaExceeded is the message of the trigger that refuses a new
// document over its scope's quota (migration 0005).
const docsQuotaExceeded = "satchel: documents quota exceeded"

// quotaCols are the columns of a scope_quotas row, prefixed q., in the
// order quotaRow scans them.
const quotaCols = `q.max_bytes, q.max_files, q.max_threads, q.max_documents, q.max_history_bytes,
	q.bytes, q.files, q.threads, q.documents, q.history_bytes`

// quotaRow scans quotaCols, NULL when the scope has no row.
type quotaRow struct{ v [10]sql.NullInt64 }

func (r *quotaRow) dest() []any {
	d := make([]any, len(r.v))
	for i := range r.v {
		d[i] = &r.v[i]
	}
	return d
}

// quota returns the row, or nil when there is none.
func (r *quotaRow) quota(scope string) *backend.Quota {
	if !r.v[0].Valid {
		return nil
	}
	q := &backend.Quota{Scope: scope}
	lim, used := q.Limits.Fields(), q.Used.Fields()
	for i := range lim {
		*lim[i] = r.v[i].Int64
		*used[i] = r.v[5+i].Int64
	}
	return q
}

// putUsageSQL writes a row's counters (prepared once, as writeStmts.putUsage).
const putUsageSQL = `UPDATE scope_quotas SET bytes = ?, files = ?, threads = ?, documents = ?, history_bytes = ?
	WHERE scope = ?`

// putUsage writes a row's counters.
func putUsage(ctx context.Context, tx *sql.Tx, q *backend.Quota) error {
	_, err := tx.ExecContext(ctx, putUsageSQL, q.Used.Bytes, q.Used.Files, q.Used.Threads, q.Used.Documents, q.Used.HistoryBytes, q.Scope)
	return err
}

// putUsage writes a row's counters with the writer's prepared statement:
// once per Append of a scope with a quota.
func (w *writeTx) putUsage(q *backend.Quota) error {
	_, err := w.s.putUsage.ExecContext(w.ctx, q.Used.Bytes, q.Used.Files, q.Used.Threads, q.Used.Documents, q.Used.HistoryBytes, q.Scope)
	return err
}

// addUsage adds d to the counters of scope's row, if it has one, refused
// (a *backend.QuotaError) when d grows a counter past its limit.
func addUsage(ctx context.Context, tx *sql.Tx, scope string, d backend.Usage) error {
	q, err := readQuota(ctx, tx, scope)
	if err != nil || q == nil {
		return err
	}
	if err := q.Add(d); err != nil {
		return err
	}
	return putUsage(ctx, tx, q)
}

func readQuota(ctx context.Context, tx queryer, scope string) (*backend.Quota, error) {
	var r quotaRow
	err := tx.QueryRowContext(ctx, "SELECT "+quotaCols+" FROM scope_quotas q WHERE q.scope = ?", scope).Scan(r.dest()...)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return r.quota(scope), nil
}

// scopeHeads lists a scope's threads with their head commits (Seq 0 for
// an empty thread), by id.
func scopeHeads(ctx context.Context, tx queryer, scope string) ([]backend.Commit, error) {
	rows, err := tx.QueryContext(ctx, `SELECT t.id, c.id, c.seq, c.root FROM threads t
		LEFT JOIN commits c ON c.id = (SELECT v.id FROM thread_commits v WHERE v.thread_id = t.id ORDER BY v.seq DESC LIMIT 1)
		WHERE t.scope = ? ORDER BY t.id`, scope)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []backend.Commit
	for rows.Next() {
		var c backend.Commit
		var id, seq sql.NullInt64
		if err := rows.Scan(&c.Thread, &id, &seq, &c.Root); err != nil {
			return nil, err
		}
		c.ID, c.Seq = id.Int64, seq.Int64
		out = append(out, c)
	}
	return out, rows.Err()
}

// countStored counts what SQL can of a scope's usage: threads, documents
// and the bytes of its packs.
func countStored(ctx context.Context, tx queryer, scope string) (backend.Usage, error) {
	var u backend.Usage
	err := tx.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM threads WHERE scope = ?1),
		(SELECT count(*) FROM docs WHERE scope = ?1),
		(SELECT coalesce(sum(length(pack)), 0) FROM commits WHERE scope = ?1)`, scope).Scan(&u.Threads, &u.Documents, &u.HistoryBytes)
	return u, err
}

// SetQuota implements backend.Quotas. The first row of a scope is counted
// under the write lock: no change to the scope can land meanwhile.
func (b *Backend) SetQuota(ctx context.Context, scope string, limits backend.Usage, live backend.LiveFunc) error {
	err := b.write(ctx, func(tx *sql.Tx) error {
		if limits.Unlimited() {
			_, err := tx.ExecContext(ctx, "DELETE FROM scope_quotas WHERE scope = ?", scope)
			return err
		}
		args := []any{limits.Bytes, limits.Files, limits.Threads, limits.Documents, limits.HistoryBytes, scope}
		r, err := tx.ExecContext(ctx, `UPDATE scope_quotas SET max_bytes = ?, max_files = ?, max_threads = ?,
			max_documents = ?, max_history_bytes = ? WHERE scope = ?`, args...)
		if err != nil {
			return err
		}
		if n, err := r.RowsAffected(); err != nil || n > 0 {
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
		for i, h := range heads {
			u.Files += files[i]
			u.Bytes += bytes[i]
			if h.Seq == 0 {
				continue
			}
			if _, err := tx.ExecContext(ctx, "UPDATE commits SET files = ?, bytes = ? WHERE id = ?", files[i], bytes[i], h.ID); err != nil {
				return err
			}
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO scope_quotas (max_bytes, max_files, max_threads, max_documents, max_history_bytes, scope,
			bytes, files, threads, documents, history_bytes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			append(args, u.Bytes, u.Files, u.Threads, u.Documents, u.HistoryBytes)...)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: set quota: %w", err)
	}
	return nil
}

// Quotas implements backend.Quotas.
func (b *Backend) Quotas(ctx context.Context, scope string) ([]backend.Quota, error) {
	rows, err := b.r.QueryContext(ctx, "SELECT q.scope, "+quotaCols+" FROM scope_quotas q WHERE ?1 = '' OR q.scope = ?1 ORDER BY q.scope", scope)
	if err != nil {
		return nil, fmt.Errorf("sqlite: quotas: %w", err)
	}
	defer rows.Close()
	var out []backend.Quota
	for rows.Next() {
		var s string
		var r quotaRow
		if err := rows.Scan(append([]any{&s}, r.dest()...)...); err != nil {
			return nil, fmt.Errorf("sqlite: quotas: %w", err)
		}
		out = append(out, *r.quota(s))
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: quotas: %w", err)
	}
	return out, nil
}

// CountUsage implements backend.Quotas, in one read transaction.
func (b *Backend) CountUsage(ctx context.Context, scope string, live backend.LiveFunc) (backend.Usage, *backend.Quota, error) {
	var u backend.Usage
	var row *backend.Quota
	err := b.read(ctx, func(tx *sql.Tx) error {
		var err error
		if row, err = readQuota(ctx, tx, scope); err != nil {
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
		return u, nil, fmt.Errorf("sqlite: count usage: %w", err)
	}
	return u, row, nil
}
