package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/satchel-dev/satchel/backend"
)

// Idempotency keys and the log of document changes (backend.Keys):
// tables idem_thread_keys (migrations/0009_idem_thread_keys.sql: a key is
// claimed in its scope and thread) and doc_changes (0006_idem.sql). A commit's
// key is claimed by its append statement (appendKeyed); a document
// change's in the transaction of its set or remove. Their times are read
// from the documents' clock (nowArg), so that tests move both.

var _ backend.Keys = (*Backend)(nil)

// appendKeyed is appendFull with the claim of an idempotency key: $10
// scope, $11 key, $12 hash, $13 result, $14 time to live in
// microseconds, $15 the clock (NULL: now()), $21 the caller's thread. The commit is inserted only
// when the key is not live (used); its claim is an upsert that takes the
// place of an expired key. If a concurrent append claims the same key
// between the check and the upsert, the upsert does nothing and the
// statement fails on purpose (a division by zero, as for a checkpoint):
// the whole Append is retried and then sees the key used.
var appendKeyed = `WITH t AS (
	SELECT scope FROM threads WHERE id = $1 FOR KEY SHARE
), ` + quotaCTE("(SELECT scope FROM t)", "$19::bigint", "$18::bigint", "0", "octet_length($5::bytea)") + `, top AS (
	SELECT coalesce(max(seq), 0) AS seq FROM commits WHERE thread_id = $1
), req AS (
	SELECT 1 FROM commits
	WHERE $6::bigint IS NOT NULL AND thread_id = $6::bigint AND seq = $7::bigint AND dropped_at IS NULL
	FOR SHARE
), taken AS (
	SELECT 1 FROM checkpoints WHERE $8::text <> '' AND thread_id = $1 AND name = $8::text
), clock AS (
	SELECT coalesce($15::timestamptz, now()) AS now
), used AS (
	SELECT 1 FROM idem_thread_keys, clock WHERE scope = $10::text AND thread = $21::text AND key = $11::text AND expires > clock.now
), ins AS (
	INSERT INTO commits (thread_id, seq, scope, root, meta, pack, nonce, files, bytes)
	SELECT $1::bigint, $2::bigint, t.scope, $3::bytea, $4::bytea, $5::bytea, $9::bigint, $16::bigint, $17::bigint FROM t, top
	WHERE top.seq = $2::bigint - 1
		AND ($6::bigint IS NULL OR EXISTS (SELECT 1 FROM req))
		AND NOT EXISTS (SELECT 1 FROM taken)
		AND NOT EXISTS (SELECT 1 FROM used)
		AND (SELECT ok FROM fits)
		AND ($20::bigint IS NULL OR EXISTS (SELECT 1 FROM commits WHERE thread_id = $1 AND seq = $2::bigint - 1 AND nonce = $20::bigint))
	ON CONFLICT (thread_id, seq) DO NOTHING
	RETURNING id, time
), cp AS (
	INSERT INTO checkpoints (thread_id, name, seq)
	SELECT $1::bigint, $8::text, $2::bigint FROM ins WHERE $8::text <> ''
	ON CONFLICT DO NOTHING
	RETURNING 1
), k AS (
	INSERT INTO idem_thread_keys (scope, thread, key, hash, result, thread_id, seq, time, expires)
	SELECT $10::text, $21::text, $11::text, $12::bytea, $13::bytea, $1::bigint, $2::bigint, clock.now,
		clock.now + $14::bigint * interval '1 microsecond'
	FROM ins, clock
	ON CONFLICT (scope, thread, key) DO UPDATE SET hash = excluded.hash, result = excluded.result,
		thread_id = excluded.thread_id, seq = excluded.seq, time = excluded.time, expires = excluded.expires
	WHERE idem_thread_keys.expires <= excluded.time
	RETURNING 1
), ` + quotaUpdate("(SELECT scope FROM t)", "$19::bigint", "$18::bigint", "0", "octet_length($5::bytea)") + `
SELECT ins.id, ins.time, EXISTS (SELECT 1 FROM t), (SELECT seq FROM top),
	$6::bigint IS NULL OR EXISTS (SELECT 1 FROM req), EXISTS (SELECT 1 FROM taken), ` + quotaOut + `,
	1 / CASE WHEN ins.id IS NOT NULL AND ($8::text <> '' AND NOT EXISTS (SELECT 1 FROM cp) OR NOT EXISTS (SELECT 1 FROM k)) THEN 0 ELSE 1 END,
	EXISTS (SELECT 1 FROM used), ` + lockFree + `
FROM (SELECT 1) AS one LEFT JOIN ins ON true LEFT JOIN q ON true`

// micros is a duration in whole microseconds.
func micros(d time.Duration) int64 { return int64(d / time.Microsecond) }

const claimKeySQL = `WITH clock AS (SELECT coalesce($7::timestamptz, now()) AS now)
INSERT INTO idem_thread_keys (scope, thread, key, hash, result, thread_id, seq, time, expires)
SELECT $1, $9, $2, $3, $4, $5, $6, clock.now, clock.now + $8::bigint * interval '1 microsecond' FROM clock
ON CONFLICT (scope, thread, key) DO UPDATE SET hash = excluded.hash, result = excluded.result,
	thread_id = excluded.thread_id, seq = excluded.seq, time = excluded.time, expires = excluded.expires
WHERE idem_thread_keys.expires <= excluded.time`

// execer is a pool or a transaction.
type execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// claimKey claims c through q (the pool or a transaction), or returns
// backend.ErrKeyUsed when it is live.
func (b *Backend) claimKey(ctx context.Context, q execer, c *backend.KeyClaim, thread, seq int64) error {
	tag, err := q.Exec(ctx, claimKeySQL, c.Scope, c.Key, bytea(c.Hash), bytea(c.Result), thread, seq, b.nowArg(), micros(c.TTL), c.Thread)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return backend.ErrKeyUsed
	}
	return nil
}

func (b *Backend) KeyRecord(ctx context.Context, scope, thread, key string) (backend.KeyRecord, bool, error) {
	var r backend.KeyRecord
	err := b.pool.QueryRow(ctx, `SELECT hash, result, thread_id, seq, time, expires FROM idem_thread_keys
		WHERE scope = $1 AND thread = $4 AND key = $2 AND expires > coalesce($3::timestamptz, now())`, scope, key, b.nowArg(), thread).
		Scan(&r.Hash, &r.Result, &r.Thread, &r.Seq, &r.Time, &r.Expires)
	if errors.Is(err, pgx.ErrNoRows) {
		return backend.KeyRecord{}, false, nil
	}
	if err != nil {
		return backend.KeyRecord{}, false, fmt.Errorf("postgres: read key: %w", err)
	}
	r.Time, r.Expires = r.Time.UTC(), r.Expires.UTC()
	return r, true, nil
}

func (b *Backend) ClaimKey(ctx context.Context, c backend.KeyClaim, thread, seq int64) error {
	err := b.claimKey(ctx, b.pool, &c, thread, seq)
	if err != nil && !errors.Is(err, backend.ErrKeyUsed) {
		return fmt.Errorf("postgres: claim key: %w", err)
	}
	return err
}

func (b *Backend) SweepKeys(ctx context.Context) (int64, error) {
	tag, err := b.pool.Exec(ctx, "DELETE FROM idem_thread_keys WHERE expires <= coalesce($1::timestamptz, now())", b.nowArg())
	if err != nil {
		return 0, fmt.Errorf("postgres: sweep keys: %w", err)
	}
	return tag.RowsAffected(), nil
}

func (b *Backend) DocChanges(ctx context.Context, q backend.DocChangeQuery) ([]backend.DocChangeEntry, error) {
	var since *time.Time
	if !q.Since.IsZero() {
		since = &q.Since
	}
	var limit *int
	if q.Limit > 0 {
		limit = &q.Limit
	}
	rows, err := b.pool.Query(ctx, `SELECT id, time, store, scope, key, version, op, meta FROM doc_changes
		WHERE ($1 = '' OR scope = $1) AND ($2 = 0 OR id < $2) AND ($3::timestamptz IS NULL OR time >= $3)
		ORDER BY id DESC LIMIT $4`, q.Scope, q.Before, since, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: document changes: %w", err)
	}
	defer rows.Close()
	var out []backend.DocChangeEntry
	for rows.Next() {
		var e backend.DocChangeEntry
		if err := rows.Scan(&e.ID, &e.Time, &e.Store, &e.Scope, &e.Key, &e.Version, &e.Op, &e.Meta); err != nil {
			return nil, fmt.Errorf("postgres: document changes: %w", err)
		}
		e.Time = e.Time.UTC()
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: document changes: %w", err)
	}
	return out, nil
}

// replaceDocLogged is replaceDoc that also logs the change ($12 the
// caller's scope, $13 its metadata) when it was made.
var replaceDocLogged = strings.Replace(replaceDoc, "\nSELECT true, version", `,
chg AS (
	INSERT INTO doc_changes (time, store, scope, key, version, op, meta)
	SELECT t.now, $1, $12, $3, $8::bigint, 'set', $13::bytea FROM t
	WHERE EXISTS (SELECT 1 FROM upd) OR EXISTS (SELECT 1 FROM ins)
)
SELECT true, version`, 1)

// deleteDocLogged is deleteDoc that also logs the change ($5 the caller's
// scope, $6 its metadata) when a document was deleted.
var deleteDocLogged = strings.Replace(deleteDoc, "\nSELECT version", `,
chg AS (
	INSERT INTO doc_changes (time, store, scope, key, version, op, meta)
	SELECT coalesce($4::timestamptz, now()), $1, $5, $3, version, 'remove', $6::bytea FROM del
)
SELECT version`, 1)

// errNotDone rolls back a keyed set that the statement refused.
var errNotDone = errors.New("postgres: document changed")

// replaceDocAs is ReplaceDoc with r.Change: the set and its log entry in
// one statement and, with a key, the claim after it in one transaction.
func (b *Backend) replaceDocAs(ctx context.Context, r backend.DocReplace, d backend.Doc) (backend.Doc, error) {
	var done bool
	var exp *time.Time
	ch := r.Change
	run := func(q pgx.Tx) error {
		var row pgx.Row
		args := []any{r.Store, r.Scope, r.Key, string(r.JSON), ttlArg(r.TTL), r.Keep, b.nowArg(),
			r.Version, r.Expect, r.Archive, r.Live, ch.Scope, bytea(ch.Meta)}
		if q == nil {
			row = b.pool.QueryRow(ctx, replaceDocLogged, args...)
		} else {
			row = q.QueryRow(ctx, replaceDocLogged, args...)
		}
		if err := row.Scan(&done, &d.Version, &d.Updated, &exp, &d.Expired); err != nil {
			return err
		}
		if q == nil {
			return nil
		}
		if !done {
			return errNotDone
		}
		return b.claimKey(ctx, q, ch.Key, 0, r.Version)
	}
	var err error
	if ch.Key == nil {
		err = run(nil)
	} else {
		err = pgx.BeginFunc(ctx, b.pool, run)
	}
	switch {
	case errors.Is(err, backend.ErrKeyUsed):
		return backend.Doc{Key: r.Key}, err
	case errors.Is(err, errNotDone):
		err = nil // the statement's answer, done false, says what happened
	}
	return b.replaced(ctx, r, d, done, exp, err)
}

func (b *Backend) DeleteDocAs(ctx context.Context, id backend.DocID, ch backend.DocChange) (backend.Doc, bool, error) {
	defer b.changed(id.Scope)
	d := backend.Doc{Key: id.Key}
	var exp *time.Time
	found := false
	run := func(q pgx.Tx) error {
		var row pgx.Row
		args := []any{id.Store, id.Scope, id.Key, b.nowArg(), ch.Scope, bytea(ch.Meta)}
		if q == nil {
			row = b.pool.QueryRow(ctx, deleteDocLogged, args...)
		} else {
			row = q.QueryRow(ctx, deleteDocLogged, args...)
		}
		err := row.Scan(&d.Version, &d.Updated, &exp, &d.Expired)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return err
		default:
			found = true
		}
		if q == nil {
			return nil
		}
		seq := int64(-1) // nothing deleted
		if found {
			seq = d.Version
		}
		return b.claimKey(ctx, q, ch.Key, 0, seq)
	}
	var err error
	if ch.Key == nil {
		err = run(nil)
	} else {
		err = pgx.BeginFunc(ctx, b.pool, run)
	}
	if errors.Is(err, backend.ErrKeyUsed) {
		return backend.Doc{Key: id.Key}, false, err
	}
	if err != nil {
		return backend.Doc{}, false, fmt.Errorf("postgres: remove document: %w", err)
	}
	if !found {
		return backend.Doc{}, false, nil
	}
	d.Updated = d.Updated.UTC()
	if exp != nil {
		d.Expires = exp.UTC()
	}
	b.analyzer.wrote(b)
	return d, true, nil
}
