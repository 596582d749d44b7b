package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/satchel-dev/satchel/backend"
)

// Scopes lists the scopes that have at least one thread, in byte order.
func (b *Backend) Scopes(ctx context.Context) ([]string, error) {
	return b.queryStrings(ctx, "scopes", "SELECT DISTINCT scope FROM threads ORDER BY scope")
}

// Thread returns a thread by scope and name, creating it when create is
// set and it is missing.
func (b *Backend) Thread(ctx context.Context, scope, name string, create bool) (backend.Thread, error) {
	th := backend.Thread{Scope: scope, Name: name}
	var created int64
	err := b.rs.threadByName.QueryRowContext(ctx, scope, name).Scan(&th.ID, &created)
	switch {
	case err == nil:
		th.Created = fromNanos(created)
		return th, nil
	case !errors.Is(err, sql.ErrNoRows):
		return th, fmt.Errorf("sqlite: thread: %w", err)
	case !create:
		return th, backend.ErrNoThread
	}
	// Create it, or read the one another writer created meanwhile, under
	// the write lock.
	err = b.write(ctx, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, "INSERT INTO threads (scope, name, created) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
			scope, name, nanos(b.now()))
		if err != nil {
			return err
		}
		if n, err := r.RowsAffected(); err != nil {
			return err
		} else if n > 0 {
			if err := addUsage(ctx, tx, scope, backend.Usage{Threads: 1}); err != nil {
				return err
			}
		}
		return tx.QueryRowContext(ctx, threadByKey, scope, name).Scan(&th.ID, &created)
	})
	var qe *backend.QuotaError
	if errors.As(err, &qe) {
		return th, err
	}
	if err != nil {
		return th, fmt.Errorf("sqlite: thread: %w", err)
	}
	th.Created = fromNanos(created)
	return th, nil
}

// CreateThread creates an empty thread, or fails with ErrThreadExists.
func (b *Backend) CreateThread(ctx context.Context, scope, name string) (backend.Thread, error) {
	th := backend.Thread{Scope: scope, Name: name, Created: b.now()}
	err := b.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "INSERT INTO threads (scope, name, created) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
			scope, name, nanos(th.Created))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return backend.ErrThreadExists
		}
		if th.ID, err = res.LastInsertId(); err != nil {
			return err
		}
		return addUsage(ctx, tx, scope, backend.Usage{Threads: 1})
	})
	var qe *backend.QuotaError
	if errors.Is(err, backend.ErrThreadExists) || errors.As(err, &qe) {
		return backend.Thread{}, err
	}
	if err != nil {
		return backend.Thread{}, fmt.Errorf("sqlite: create thread: %w", err)
	}
	th.Created = fromNanos(nanos(th.Created))
	return th, nil
}

// Threads lists a scope's threads by name, in byte order.
func (b *Backend) Threads(ctx context.Context, scope string) ([]backend.Thread, error) {
	rows, err := b.r.QueryContext(ctx, "SELECT id, name, created FROM threads WHERE scope = ? ORDER BY name", scope)
	if err != nil {
		return nil, fmt.Errorf("sqlite: threads: %w", err)
	}
	defer rows.Close()
	var out []backend.Thread
	for rows.Next() {
		th := backend.Thread{Scope: scope}
		var created int64
		if err := rows.Scan(&th.ID, &th.Name, &created); err != nil {
			return nil, fmt.Errorf("sqlite: threads: %w", err)
		}
		th.Created = fromNanos(created)
		out = append(out, th)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: threads: %w", err)
	}
	return out, nil
}

// ThreadHeads lists a scope's threads with their heads in one query
// (backend.HeadsLister). A thread's newest commit is found as Head finds
// it (headSQL): its newest recent entry, else the end of its commit_seq
// range; the recent entries are read once for all the threads (GROUP BY),
// not once a thread.
func (b *Backend) ThreadHeads(ctx context.Context, scope string) ([]backend.ThreadHead, error) {
	rows, err := b.r.QueryContext(ctx, `WITH recent AS (
		SELECT thread_id, max(id) AS id FROM commits WHERE id > (SELECT upto FROM seq_indexed) GROUP BY thread_id)
	SELECT t.id, t.name, t.created, c.id, c.seq, c.time, c.meta FROM threads t
	LEFT JOIN recent r ON r.thread_id = t.id
	LEFT JOIN commits c ON c.id = coalesce(r.id,
		(SELECT id FROM commit_seq WHERE thread_id = t.id ORDER BY seq DESC LIMIT 1)) AND c.dropped_at IS NULL
	WHERE t.scope = ? ORDER BY t.name`, scope)
	if err != nil {
		return nil, fmt.Errorf("sqlite: thread heads: %w", err)
	}
	defer rows.Close()
	var out []backend.ThreadHead
	for rows.Next() {
		th := backend.ThreadHead{Thread: backend.Thread{Scope: scope}}
		var created int64
		var id, seq, at sql.NullInt64
		var meta []byte
		if err := rows.Scan(&th.ID, &th.Name, &created, &id, &seq, &at, &meta); err != nil {
			return nil, fmt.Errorf("sqlite: thread heads: %w", err)
		}
		th.Created = fromNanos(created)
		if id.Valid {
			th.Head = backend.Commit{ID: id.Int64, Thread: th.ID, Seq: seq.Int64, Time: fromNanos(at.Int64), Meta: meta}
		}
		out = append(out, th)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: thread heads: %w", err)
	}
	return out, nil
}

// DeleteThread removes a thread, its checkpoints and its settings, and
// drops its commits: their packs stay until garbage collection deletes
// them, since forks may share their objects.
func (b *Backend) DeleteThread(ctx context.Context, id int64) error {
	err := b.write(ctx, func(tx *sql.Tx) error {
		var scope, name string
		err := tx.QueryRowContext(ctx, "SELECT scope, name FROM threads WHERE id = ?", id).Scan(&scope, &name)
		if errors.Is(err, sql.ErrNoRows) {
			return backend.ErrNoThread
		}
		if err != nil {
			return err
		}
		// The head's totals leave the scope's usage (NULL on a commit of
		// an earlier version, counted before any quota was set).
		var files, bytes sql.NullInt64
		err = tx.QueryRowContext(ctx, `SELECT files, bytes FROM commits WHERE id =
			(SELECT v.id FROM thread_commits v WHERE v.thread_id = ? ORDER BY v.seq DESC LIMIT 1)`, id).Scan(&files, &bytes)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if err := addUsage(ctx, tx, scope, backend.Usage{Threads: -1, Files: -files.Int64, Bytes: -bytes.Int64}); err != nil {
			return err
		}
		for _, q := range []struct {
			sql  string
			args []any
		}{
			{"UPDATE commits SET dropped_at = ? WHERE id IN (SELECT id FROM thread_commits WHERE thread_id = ?) AND dropped_at IS NULL", []any{nanos(b.now()), id}},
			{"DELETE FROM checkpoints WHERE thread_id = ?", []any{id}},
			{"DELETE FROM git_commits WHERE thread_id = ?", []any{id}},
			{"DELETE FROM git_trees WHERE thread_id = ?", []any{id}},
			{"DELETE FROM settings WHERE scope = ? AND thread = ?", []any{scope, name}},
			{"DELETE FROM threads WHERE id = ?", []any{id}},
		} {
			if _, err := tx.ExecContext(ctx, q.sql, q.args...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, backend.ErrNoThread) {
		return fmt.Errorf("sqlite: delete thread: %w", err)
	}
	return err
}

// PurgeScope deletes every thread, commit, pack, checkpoint, setting and
// document of a scope, in one transaction.
func (b *Backend) PurgeScope(ctx context.Context, scope string) error {
	err := b.write(ctx, func(tx *sql.Tx) error {
		for _, q := range []string{
			// The commits of live threads, through thread_commits; then
			// those of deleted threads, all dropped, through the index of
			// dropped commits (their commit_seq entries first, found from
			// their rows).
			`DELETE FROM commits WHERE id IN (SELECT v.id FROM thread_commits v
				WHERE v.thread_id IN (SELECT id FROM threads WHERE scope = ?1))`,
			"DELETE FROM commit_seq WHERE thread_id IN (SELECT id FROM threads WHERE scope = ?1)",
			`DELETE FROM commit_seq WHERE (thread_id, seq) IN (SELECT thread_id, seq FROM commits
				WHERE scope = ?1 AND dropped_at IS NOT NULL)`,
			"DELETE FROM commits WHERE scope = ?1 AND dropped_at IS NOT NULL",
			"DELETE FROM checkpoints WHERE thread_id IN (SELECT id FROM threads WHERE scope = ?1)",
			"DELETE FROM git_commits WHERE thread_id IN (SELECT id FROM threads WHERE scope = ?1)",
			"DELETE FROM git_trees WHERE thread_id IN (SELECT id FROM threads WHERE scope = ?1)",
			"DELETE FROM threads WHERE scope = ?1",
			"DELETE FROM settings WHERE scope = ?1",
			"DELETE FROM scope_quotas WHERE scope = ?1",
			// Its documents (a shared store's are under scope '', which no
			// scope is).
			"DELETE FROM docs WHERE scope = ?1",
			"DELETE FROM doc_history WHERE scope = ?1",
			"DELETE FROM idem_thread_keys WHERE scope = ?1",
		} {
			if _, err := tx.ExecContext(ctx, q, scope); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: purge scope: %w", err)
	}
	return nil
}

// Setting reads a setting; ok is false when it is unset.
func (b *Backend) Setting(ctx context.Context, scope, thread, key string) ([]byte, bool, error) {
	var v []byte
	err := b.rs.setting.QueryRowContext(ctx, scope, thread, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("sqlite: setting: %w", err)
	}
	if v == nil {
		v = []byte{}
	}
	return v, true, nil
}

// PutSetting writes a setting; a nil value deletes it.
func (b *Backend) PutSetting(ctx context.Context, scope, thread, key string, v []byte) error {
	err := b.write(ctx, func(tx *sql.Tx) error {
		var err error
		if v == nil {
			_, err = tx.ExecContext(ctx, "DELETE FROM settings WHERE scope = ? AND thread = ? AND key = ?", scope, thread, key)
		} else {
			_, err = tx.ExecContext(ctx, `INSERT INTO settings (scope, thread, key, value) VALUES (?, ?, ?, ?)
				ON CONFLICT (scope, thread, key) DO UPDATE SET value = excluded.value`, scope, thread, key, blob(v))
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: put setting: %w", err)
	}
	return nil
}

// Settings lists the settings of a scope and thread whose keys start with
// prefix.
func (b *Backend) Settings(ctx context.Context, scope, thread, prefix string) (map[string][]byte, error) {
	rows, err := b.r.QueryContext(ctx, `SELECT key, value FROM settings
		WHERE scope = ? AND thread = ? AND substr(key, 1, length(?)) = ?`, scope, thread, prefix, prefix)
	if err != nil {
		return nil, fmt.Errorf("sqlite: settings: %w", err)
	}
	defer rows.Close()
	out := map[string][]byte{}
	for rows.Next() {
		var k string
		var v []byte
		if err := rows.Scan(&k, &v); err != nil {
			return nil, fmt.Errorf("sqlite: settings: %w", err)
		}
		if v == nil {
			v = []byte{}
		}
		out[k] = v
	}
	return out, rows.Err()
}
