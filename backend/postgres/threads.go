package postgres

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

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
	q := "SELECT id, created FROM threads WHERE scope = $1 AND name = $2"
	if create {
		// Insert it, or find the one that exists. When another writer
		// inserts it at the same moment, ON CONFLICT waits for it and does
		// nothing, but this statement's snapshot predates it: no row. The
		// next attempt, with a new snapshot, finds it.
		// A new thread counts for its scope's quota (quotaCTE).
		q = `WITH ` + quotaCTE("$1::text", "0", "0", "1", "0") + `, ins AS (
			INSERT INTO threads (scope, name) SELECT $1, $2 WHERE (SELECT ok FROM fits) ON CONFLICT DO NOTHING RETURNING id, created
		), ` + quotaUpdate("$1::text", "0", "0", "1", "0") + `
		SELECT id, created FROM ins UNION ALL SELECT id, created FROM threads WHERE scope = $1 AND name = $2`
	}
	for attempt := 0; ; attempt++ {
		var created time.Time
		err := b.pool.QueryRow(ctx, q, scope, name).Scan(&th.ID, &created)
		if create && errors.Is(err, pgx.ErrNoRows) {
			if qerr := b.threadRefusal(ctx, scope); qerr != nil {
				return th, qerr
			}
		}
		switch {
		case err == nil:
			th.Created = created.UTC()
			return th, nil
		case !errors.Is(err, pgx.ErrNoRows):
			return th, fmt.Errorf("postgres: thread: %w", err)
		case !create:
			return th, backend.ErrNoThread
		case attempt == 10:
			return th, fmt.Errorf("postgres: thread %q of scope %q: neither created nor found", name, scope)
		}
	}
}

// CreateThread creates an empty thread, or fails with ErrThreadExists.
func (b *Backend) CreateThread(ctx context.Context, scope, name string) (backend.Thread, error) {
	th := backend.Thread{Scope: scope, Name: name}
	var created time.Time
	// A new thread is empty until its first commit, which is durable and
	// flushes the WAL up to itself, this insert included: so the insert
	// does not wait for its own flush (synchronous_commit off for this
	// transaction only). A crash before the first commit may forget an
	// empty thread, nothing more. One round trip, and a fork costs one
	// disk flush instead of two.
	batch := &pgx.Batch{}
	batch.Queue("BEGIN")
	batch.Queue("SET LOCAL synchronous_commit TO OFF")
	var id *int64
	var at *time.Time
	var fits bool
	batch.Queue(`WITH `+quotaCTE("$1::text", "0", "0", "1", "0")+`, ins AS (
		INSERT INTO threads (scope, name) SELECT $1, $2 WHERE (SELECT ok FROM fits)
		ON CONFLICT DO NOTHING RETURNING id, created
	), `+quotaUpdate("$1::text", "0", "0", "1", "0")+`
	SELECT ins.id, ins.created, (SELECT ok FROM fits) FROM (SELECT 1) AS one LEFT JOIN ins ON true`, scope, name).QueryRow(func(row pgx.Row) error {
		return row.Scan(&id, &at, &fits)
	})
	batch.Queue("COMMIT")
	err := b.pool.SendBatch(ctx, batch).Close()
	if err == nil && id == nil {
		if !fits {
			if qerr := b.threadRefusal(ctx, scope); qerr != nil {
				return backend.Thread{}, qerr
			}
		}
		return backend.Thread{}, backend.ErrThreadExists
	}
	if id != nil {
		th.ID, created = *id, *at
	}
	if err != nil {
		return backend.Thread{}, fmt.Errorf("postgres: create thread: %w", err)
	}
	th.Created = created.UTC()
	return th, nil
}

// Threads lists a scope's threads by name, in byte order.
func (b *Backend) Threads(ctx context.Context, scope string) ([]backend.Thread, error) {
	rows, _ := b.pool.Query(ctx, "SELECT id, name, created FROM threads WHERE scope = $1 ORDER BY name", scope)
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (backend.Thread, error) {
		th := backend.Thread{Scope: scope}
		var created time.Time
		err := row.Scan(&th.ID, &th.Name, &created)
		th.Created = created.UTC()
		return th, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: threads: %w", err)
	}
	return out, nil
}

// ThreadHeads lists a scope's threads with their heads in one query
// (backend.HeadsLister): for each thread, its highest seq, as Head reads
// it.
func (b *Backend) ThreadHeads(ctx context.Context, scope string) ([]backend.ThreadHead, error) {
	rows, _ := b.pool.Query(ctx, `SELECT t.id, t.name, t.created, h.id, h.seq, h.time, h.meta FROM threads t
	LEFT JOIN LATERAL (SELECT c.id, c.seq, c.time, c.meta FROM commits c
		WHERE c.thread_id = t.id AND c.seq = (SELECT max(seq) FROM commits WHERE thread_id = t.id) AND c.dropped_at IS NULL) h ON true
	WHERE t.scope = $1 ORDER BY t.name`, scope)
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (backend.ThreadHead, error) {
		th := backend.ThreadHead{Thread: backend.Thread{Scope: scope}}
		var created time.Time
		var id, seq *int64
		var at *time.Time
		var meta []byte
		err := row.Scan(&th.ID, &th.Name, &created, &id, &seq, &at, &meta)
		th.Created = created.UTC()
		if id != nil {
			th.Head = backend.Commit{ID: *id, Thread: th.ID, Seq: *seq, Time: at.UTC(), Meta: meta}
		}
		return th, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: thread heads: %w", err)
	}
	return out, nil
}

// DeleteThread removes a thread, its checkpoints and its settings, and
// drops its commits: their packs stay until garbage collection deletes
// them, since forks may share their objects.
//
// The thread's row goes first: deleting it waits for the appends that
// hold it (KEY SHARE), and the appends after it find no thread. The
// statements that follow, each with a new snapshot (READ COMMITTED), see
// the commits of the appends it waited for.
func (b *Backend) DeleteThread(ctx context.Context, id int64) error {
	err := pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
		var scope, name string
		err := tx.QueryRow(ctx, "DELETE FROM threads WHERE id = $1 RETURNING scope, name", id).Scan(&scope, &name)
		if errors.Is(err, pgx.ErrNoRows) {
			return backend.ErrNoThread
		}
		if err != nil {
			return err
		}
		// The head's totals leave the scope's usage (NULL on a commit of
		// an earlier version, counted before any quota was set).
		var files, bytes *int64
		err = tx.QueryRow(ctx, `SELECT files, bytes FROM commits WHERE thread_id = $1
			AND seq = (SELECT max(seq) FROM commits WHERE thread_id = $1)`, id).Scan(&files, &bytes)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		d := backend.Usage{Threads: -1}
		if files != nil {
			d.Files = -*files
		}
		if bytes != nil {
			d.Bytes = -*bytes
		}
		if err := addUsage(ctx, tx, scope, d); err != nil {
			return err
		}
		batch := &pgx.Batch{}
		batch.Queue("UPDATE commits SET dropped_at = now() WHERE thread_id = $1 AND dropped_at IS NULL", id)
		batch.Queue("DELETE FROM checkpoints WHERE thread_id = $1", id)
		batch.Queue("DELETE FROM settings WHERE scope = $1 AND thread = $2", scope, name)
		return tx.SendBatch(ctx, batch).Close()
	})
	if err != nil && !errors.Is(err, backend.ErrNoThread) {
		return fmt.Errorf("postgres: delete thread: %w", err)
	}
	return err
}

// PurgeScope deletes every thread, commit, pack, checkpoint, setting and
// document of a scope, in one transaction. As in DeleteThread, the threads go first.
func (b *Backend) PurgeScope(ctx context.Context, scope string) error {
	err := pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
		rows, _ := tx.Query(ctx, "DELETE FROM threads WHERE scope = $1 RETURNING id", scope)
		ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return err
		}
		batch := &pgx.Batch{}
		batch.Queue("DELETE FROM commits WHERE thread_id = ANY($1)", ids)
		batch.Queue("DELETE FROM commits WHERE scope = $1 AND dropped_at IS NOT NULL", scope)
		batch.Queue("DELETE FROM checkpoints WHERE thread_id = ANY($1)", ids)
		batch.Queue("DELETE FROM settings WHERE scope = $1", scope)
		batch.Queue("DELETE FROM scope_quotas WHERE scope = $1", scope)
		// Its documents (a shared store's are under scope '', which no
		// scope is).
		batch.Queue("DELETE FROM docs WHERE scope = $1", scope)
		batch.Queue("DELETE FROM doc_history WHERE scope = $1", scope)
		batch.Queue("DELETE FROM idem_thread_keys WHERE scope = $1", scope)
		return tx.SendBatch(ctx, batch).Close()
	})
	if err != nil {
		return fmt.Errorf("postgres: purge scope: %w", err)
	}
	return nil
}

// Setting reads a setting; ok is false when it is unset.
func (b *Backend) Setting(ctx context.Context, scope, thread, key string) ([]byte, bool, error) {
	var v []byte
	err := b.pool.QueryRow(ctx, "SELECT value FROM settings WHERE scope = $1 AND thread = $2 AND key = $3",
		scope, thread, key).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("postgres: setting: %w", err)
	}
	if v == nil {
		v = []byte{}
	}
	return v, true, nil
}

// PutSetting writes a setting; a nil value deletes it.
func (b *Backend) PutSetting(ctx context.Context, scope, thread, key string, v []byte) error {
	var err error
	if v == nil {
		_, err = b.pool.Exec(ctx, "DELETE FROM settings WHERE scope = $1 AND thread = $2 AND key = $3", scope, thread, key)
	} else {
		_, err = b.pool.Exec(ctx, `INSERT INTO settings (scope, thread, key, value) VALUES ($1, $2, $3, $4)
			ON CONFLICT (scope, thread, key) DO UPDATE SET value = excluded.value`, scope, thread, key, v)
	}
	if err != nil {
		return fmt.Errorf("postgres: put setting: %w", err)
	}
	return nil
}

// Settings lists the settings of a scope and thread whose keys start with
// prefix (compared byte for byte).
func (b *Backend) Settings(ctx context.Context, scope, thread, prefix string) (map[string][]byte, error) {
	rows, _ := b.pool.Query(ctx, `SELECT key, value FROM settings
		WHERE scope = $1 AND thread = $2 AND substr(key, 1, length($3)) = $3`, scope, thread, prefix)
	out := map[string][]byte{}
	var k string
	var v []byte
	_, err := pgx.ForEachRow(rows, []any{&k, &v}, func() error {
		if v == nil {
			v = []byte{}
		}
		out[k] = v
		v = nil
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: settings: %w", err)
	}
	return out, nil
}

// forkSQL creates a thread and its first commit, which requires the source
// commit ($6, $7) to be retained, read FOR SHARE so that a concurrent Drop
// serialises with it. Both inserts always run (a data-modifying CTE does);
// when the thread was made but the commit could not be, the statement
// fails on purpose (division by zero, SQLSTATE 22012), which rolls the
// thread back: nothing is created.
var forkSQL = `WITH ` + quotaCTE("$1::text", "$10::bigint", "$9::bigint", "1", "octet_length($5::bytea)") + `, th AS (
	INSERT INTO threads (scope, name) SELECT $1, $2 WHERE (SELECT ok FROM fits)
	ON CONFLICT DO NOTHING
	RETURNING id, created
), req AS (
	SELECT 1 FROM commits
	WHERE thread_id = $6::bigint AND seq = $7::bigint AND dropped_at IS NULL
	FOR SHARE
), ins AS (
	INSERT INTO commits (thread_id, seq, scope, root, meta, pack, nonce, files, bytes)
	SELECT th.id, 1, $1, $3::bytea, $4::bytea, $5::bytea, $8::bigint, $9::bigint, $10::bigint FROM th
	WHERE EXISTS (SELECT 1 FROM req)
	RETURNING id, time
), ` + quotaUpdate("$1::text", "$10::bigint", "$9::bigint", "1", "octet_length($5::bytea)") + `
SELECT th.id, th.created, ins.id, ins.time, (SELECT ok FROM fits),
	1 / CASE WHEN th.id IS NOT NULL AND ins.id IS NULL THEN 0 ELSE 1 END
FROM (SELECT 1) AS one LEFT JOIN th ON true LEFT JOIN ins ON true`

// Fork implements backend.Forker: the thread and its first commit in one
// statement, one round trip and one durable flush (a fork was two of
// each: CreateThread, then Append). When the connection fails after the
// statement was sent, Fork sends it again until the server answers: the
// name then taken by a thread whose first commit holds this fork's nonce
// means the first attempt committed, and the caller is told so.
func (b *Backend) Fork(ctx context.Context, scope, name string, c backend.NewCommit) (backend.Thread, backend.Commit, error) {
	if c.Requires == nil || c.Seq != 1 {
		return backend.Thread{}, backend.Commit{}, fmt.Errorf("postgres: fork: the first commit must be seq 1 and require its source")
	}
	nonce := rand.Int64()
	unknown := false // an earlier attempt may have committed
	defer b.changed(scope)
	for attempt := 1; ; attempt++ {
		t, cm, err, lost := b.forkOnce(ctx, scope, name, c, nonce)
		if unknown && errors.Is(err, backend.ErrThreadExists) {
			return b.claimFork(ctx, scope, name, c, nonce)
		}
		if !lost {
			return t, cm, err
		}
		if !unknown {
			unknown = true
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), resolveTimeout)
			defer cancel()
		}
		b.retries.Add(1)
		select {
		case <-ctx.Done():
			return backend.Thread{}, backend.Commit{}, fmt.Errorf("postgres: fork: the connection failed before the outcome was known, and it could not be learned: %w", err)
		case <-time.After(min(time.Second, 10*time.Millisecond<<min(attempt, 7))):
		}
	}
}

// forkOnce runs forkSQL once; lost reports an error that leaves open
// whether it committed.
func (b *Backend) forkOnce(ctx context.Context, scope, name string, c backend.NewCommit, nonce int64) (_ backend.Thread, _ backend.Commit, _ error, lost bool) {
	var (
		thread, id  *int64
		created, at *time.Time
		guard       int64
		fits        bool
	)
	err := b.pool.QueryRow(ctx, forkSQL, scope, name, bytea(c.Root), bytea(c.Meta), bytea(c.Pack),
		c.Requires.Thread, c.Requires.Seq, nonce, c.Files, c.Bytes).Scan(&thread, &created, &id, &at, &fits, &guard)
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == "22012":
		return backend.Thread{}, backend.Commit{}, backend.ErrNotRetained, false
	case err != nil:
		return backend.Thread{}, backend.Commit{}, fmt.Errorf("postgres: fork: %w", err), outcomeUnknown(err)
	case thread == nil && !fits:
		return backend.Thread{}, backend.Commit{}, b.forkRefusal(ctx, scope, c), false
	case thread == nil:
		return backend.Thread{}, backend.Commit{}, backend.ErrThreadExists, false
	}
	t := backend.Thread{ID: *thread, Scope: scope, Name: name, Created: created.UTC()}
	return t, backend.Commit{
		ID: *id, Thread: t.ID, Seq: 1,
		Root: slices.Clone(c.Root), Meta: slices.Clone(c.Meta), Time: at.UTC(),
	}, nil, false
}

// claimFork finds the fork an attempt whose answer was lost made: the
// thread of that name whose first commit holds nonce. Another thread of
// the name is ErrThreadExists.
func (b *Backend) claimFork(ctx context.Context, scope, name string, c backend.NewCommit, nonce int64) (backend.Thread, backend.Commit, error) {
	t := backend.Thread{Scope: scope, Name: name}
	cm := backend.Commit{Seq: 1, Root: slices.Clone(c.Root), Meta: slices.Clone(c.Meta)}
	err := b.pool.QueryRow(ctx, `SELECT t.id, t.created, c.id, c.time FROM threads t
		JOIN commits c ON c.thread_id = t.id AND c.seq = 1 AND c.nonce = $3
		WHERE t.scope = $1 AND t.name = $2`, scope, name, nonce).Scan(&t.ID, &t.Created, &cm.ID, &cm.Time)
	if errors.Is(err, pgx.ErrNoRows) {
		return backend.Thread{}, backend.Commit{}, backend.ErrThreadExists
	}
	if err != nil {
		return backend.Thread{}, backend.Commit{}, fmt.Errorf("postgres: fork: %w", err)
	}
	t.Created, cm.Thread, cm.Time = t.Created.UTC(), t.ID, cm.Time.UTC()
	return t, cm, nil
}

// threadRefusal returns the QuotaError of a thread that scope's quota
// refused, or nil when it has room (another writer made the thread).
func (b *Backend) threadRefusal(ctx context.Context, scope string) error {
	return b.refusal(ctx, scope, backend.Usage{Threads: 1})
}

// forkRefusal is threadRefusal for a fork, which adds its first commit.
func (b *Backend) forkRefusal(ctx context.Context, scope string, c backend.NewCommit) error {
	if err := b.refusal(ctx, scope, backend.Usage{Threads: 1, Files: c.DeltaFiles, Bytes: c.DeltaBytes, HistoryBytes: int64(len(c.Pack))}); err != nil {
		return err
	}
	return backend.ErrThreadExists
}

func (b *Backend) refusal(ctx context.Context, scope string, d backend.Usage) error {
	q, err := scanQuota(b.pool.QueryRow(ctx, quotaSelect+" WHERE scope = $1", scope))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("postgres: quota: %w", err)
	}
	return q.Add(d)
}
