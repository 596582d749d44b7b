package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/satchel-dev/satchel/backend"
)

var _ backend.Porter = (*Backend)(nil)

// SetCommitTime implements backend.Porter.
func (b *Backend) SetCommitTime(ctx context.Context, thread, seq int64, t time.Time) error {
	tag, err := b.pool.Exec(ctx, `UPDATE commits SET time = $3 WHERE thread_id = $1 AND seq = $2 AND dropped_at IS NULL`, thread, seq, t)
	if err != nil {
		return fmt.Errorf("postgres: set commit time: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return backend.ErrNoCommit
	}
	return nil
}

// SetThreadCreated implements backend.Porter.
func (b *Backend) SetThreadCreated(ctx context.Context, thread int64, t time.Time) error {
	tag, err := b.pool.Exec(ctx, `UPDATE threads SET created = $2 WHERE id = $1`, thread, t)
	if err != nil {
		return fmt.Errorf("postgres: set thread created: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return backend.ErrNoThread
	}
	return nil
}

// PutDocVersions implements backend.Porter, in one transaction.
func (b *Backend) PutDocVersions(ctx context.Context, id backend.DocID, versions []backend.Doc) error {
	if len(versions) == 0 {
		return errors.New("postgres: put document versions: no versions")
	}
	err := pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
		for _, q := range []string{
			`DELETE FROM docs WHERE store = $1 AND scope = $2 AND key = $3`,
			`DELETE FROM doc_history WHERE store = $1 AND scope = $2 AND key = $3`,
		} {
			if _, err := tx.Exec(ctx, q, id.Store, id.Scope, id.Key); err != nil {
				return err
			}
		}
		cur := versions[0]
		var exp *time.Time
		if !cur.Expires.IsZero() {
			exp = &cur.Expires
		}
		if _, err := tx.Exec(ctx, `INSERT INTO docs (store, scope, key, version, updated, expires, doc) VALUES ($1, $2, $3, $4, $5, $6, $7::json)`,
			id.Store, id.Scope, id.Key, cur.Version, cur.Updated, exp, string(cur.JSON)); err != nil {
			return err
		}
		for _, h := range versions[1:] {
			if _, err := tx.Exec(ctx, `INSERT INTO doc_history (store, scope, key, version, updated, doc) VALUES ($1, $2, $3, $4, $5, $6::json)`,
				id.Store, id.Scope, id.Key, h.Version, h.Updated, string(h.JSON)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("postgres: put document versions: %w", err)
	}
	return nil
}

// DocScopes implements backend.Porter.
func (b *Backend) DocScopes(ctx context.Context, store string) ([]string, error) {
	return b.queryStrings(ctx, "document scopes", `SELECT DISTINCT scope FROM docs WHERE store = $1 ORDER BY scope`, store)
}

// DocStores lists the stores that hold documents (backend.Porter).
func (b *Backend) DocStores(ctx context.Context) ([]string, error) {
	return b.queryStrings(ctx, "document stores", `SELECT DISTINCT store COLLATE "C" FROM docs ORDER BY 1`)
}

// queryStrings runs a query of one text column and returns its values in
// order; what names the query in errors.
func (b *Backend) queryStrings(ctx context.Context, what, query string, args ...any) ([]string, error) {
	rows, _ := b.pool.Query(ctx, query, args...) // CollectRows reports a failed query
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("postgres: %s: %w", what, err)
	}
	return out, nil
}

var _ backend.DocCounter = (*Backend)(nil)

// DocsByScope counts the documents of every store of every scope
// (backend.DocCounter).
func (b *Backend) DocsByScope(ctx context.Context) ([]backend.ScopeDocs, error) {
	rows, _ := b.pool.Query(ctx, `SELECT scope, store, count(*), max(updated) FROM docs GROUP BY scope, store ORDER BY scope, store`)
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (backend.ScopeDocs, error) {
		var d backend.ScopeDocs
		err := row.Scan(&d.Scope, &d.Store, &d.Docs, &d.Updated)
		d.Updated = d.Updated.UTC()
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: documents by scope: %w", err)
	}
	return out, nil
}
