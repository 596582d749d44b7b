package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/satchel-dev/satchel/backend"
)

var _ backend.Porter = (*Backend)(nil)

// SetCommitTime implements backend.Porter.
func (b *Backend) SetCommitTime(ctx context.Context, thread, seq int64, t time.Time) error {
	var n int64
	err := b.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE commits SET time = ?
			WHERE id = (SELECT id FROM thread_commits WHERE thread_id = ? AND seq = ?) AND dropped_at IS NULL`,
			nanos(t), thread, seq)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: set commit time: %w", err)
	}
	if n == 0 {
		return backend.ErrNoCommit
	}
	return nil
}

// SetThreadCreated implements backend.Porter.
func (b *Backend) SetThreadCreated(ctx context.Context, thread int64, t time.Time) error {
	var n int64
	err := b.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE threads SET created = ? WHERE id = ?`, nanos(t), thread)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: set thread created: %w", err)
	}
	if n == 0 {
		return backend.ErrNoThread
	}
	return nil
}

// PutDocVersions implements backend.Porter, in one transaction.
func (b *Backend) PutDocVersions(ctx context.Context, id backend.DocID, versions []backend.Doc) error {
	if len(versions) == 0 {
		return errors.New("sqlite: put document versions: no versions")
	}
	err := b.write(ctx, func(tx *sql.Tx) error {
		for _, q := range []string{
			`DELETE FROM docs WHERE store = ? AND scope = ? AND key = ?`,
			`DELETE FROM doc_history WHERE store = ? AND scope = ? AND key = ?`,
		} {
			if _, err := tx.ExecContext(ctx, q, id.Store, id.Scope, id.Key); err != nil {
				return err
			}
		}
		cur := versions[0]
		var exp any
		if !cur.Expires.IsZero() {
			exp = nanos(cur.Expires)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO docs (store, scope, key, version, updated, expires, doc) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			id.Store, id.Scope, id.Key, cur.Version, nanos(cur.Updated), exp, string(cur.JSON)); err != nil {
			return err
		}
		for _, h := range versions[1:] {
			if _, err := tx.ExecContext(ctx, `INSERT INTO doc_history (store, scope, key, version, updated, doc) VALUES (?, ?, ?, ?, ?, ?)`,
				id.Store, id.Scope, id.Key, h.Version, nanos(h.Updated), string(h.JSON)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: put document versions: %w", err)
	}
	return nil
}

// DocScopes implements backend.Porter.
func (b *Backend) DocScopes(ctx context.Context, store string) ([]string, error) {
	return b.queryStrings(ctx, "document scopes", `SELECT DISTINCT scope FROM docs WHERE store = ? ORDER BY scope`, store)
}

// DocStores lists the stores that hold documents (backend.Porter).
func (b *Backend) DocStores(ctx context.Context) ([]string, error) {
	return b.queryStrings(ctx, "document stores", `SELECT DISTINCT store FROM docs ORDER BY store`)
}

// queryStrings runs a read query of one text column and returns its
// values in order; what names the query in errors.
func (b *Backend) queryStrings(ctx context.Context, what, query string, args ...any) ([]string, error) {
	rows, err := b.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %s: %w", what, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, fmt.Errorf("sqlite: %s: %w", what, err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: %s: %w", what, err)
	}
	return out, nil
}

var _ backend.DocCounter = (*Backend)(nil)

// DocsByScope counts the documents of every store of every scope
// (backend.DocCounter).
func (b *Backend) DocsByScope(ctx context.Context) ([]backend.ScopeDocs, error) {
	rows, err := b.r.QueryContext(ctx, `SELECT scope, store, count(*), max(updated) FROM docs GROUP BY scope, store ORDER BY scope, store`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: documents by scope: %w", err)
	}
	defer rows.Close()
	var out []backend.ScopeDocs
	for rows.Next() {
		var d backend.ScopeDocs
		var updated int64
		if err := rows.Scan(&d.Scope, &d.Store, &d.Docs, &updated); err != nil {
			return nil, fmt.Errorf("sqlite: documents by scope: %w", err)
		}
		d.Updated = fromNanos(updated)
		out = append(out, d)
	}
	return out, rows.Err()
}
