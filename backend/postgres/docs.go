package postgres

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/satchel-dev/satchel/backend"
)

// Collections (backend.Documents) on PostgreSQL: tables docs and
// doc_history (migrations/0002_docs.sql). Every operation is one
// statement, so one round trip and, for writes, one transaction: a set
// locks the current row (FOR UPDATE), copies it into the history, trims
// the history and rewrites the row, in data-modifying CTEs. Times come from the
// database's clock (now()), except in tests that set one
// (SetClock). Queries run the WHERE and ORDER BY that
// internal/collection compiled, with the store's name written as a literal so
// that the planner can use the store's partial indexes, also in the
// generic plans of prepared statements.

// SetClock makes the documents' times (updates, expiry and the sweeper)
// come from now instead of the database's clock, for tests of expiry; nil
// goes back to the database's clock (backend.ClockSetter). Commits, drops
// and Now keep the database's clock, which every replica shares.
func (b *Backend) SetClock(now backend.Clock) {
	if now == nil {
		b.docClock.Store(nil)
		return
	}
	f := (func() time.Time)(now)
	b.docClock.Store(&f)
}

// nowArg is the argument every statement compares with: NULL for the
// database's clock (the statements say coalesce($n, now())).
func (b *Backend) nowArg() *time.Time {
	if f := b.docClock.Load(); f != nil {
		t := (*f)().UTC()
		return &t
	}
	return nil
}

// ttlArg is the time to live in microseconds, NULL for never.
func ttlArg(ttl time.Duration) *int64 {
	if ttl <= 0 {
		return nil
	}
	us := ttl.Microseconds()
	return &us
}

// replaceDoc is the whole set, one statement: $1 store, $2 scope, $3 key,
// $4 document, $5 ttl in microseconds (NULL: never), $6 the history's
// bound (Keep), $7 the clock (NULL: now()), $8 the new version, $9 the
// expected one (0: none), $10 whether the replaced version moves into the
// history, $11 whether the expected one must not have expired. It locks
// the current row; when its version is $9 (and, with $11, it has not
// expired) it copies it
// into the history ($10), trims the history and rewrites the row, or
// inserts the first version; else it changes nothing and returns the
// current version with done false. It returns no row when another writer
// created the same key at the same moment (the insert did nothing): the
// caller tries again, and then sees that row.
//
// The trim sees the history as of the statement's start (READ COMMITTED):
// when the statement waited for the row lock while other sets of the key
// added history rows, a few rows more than $6 may stay until the next set
// deletes them. Reads never show them: getDoc returns the versions below
// the current one, and the caller keeps the newest $6.
const replaceDoc = `WITH t AS (SELECT coalesce($7::timestamptz, now()) AS now),
old AS (
	SELECT d.id, d.version, d.updated, d.expires, d.doc, (d.expires IS NOT NULL AND d.expires <= t.now) AS expired
	FROM docs d, t WHERE d.store = $1 AND d.scope = $2 AND d.key = $3 FOR UPDATE OF d
),
ok AS (SELECT 1 FROM old WHERE old.version = $9::bigint AND NOT ($11::bool AND old.expired)),
hist AS (
	INSERT INTO doc_history (store, scope, key, version, updated, doc)
	SELECT $1, $2, $3, version, updated, doc FROM old WHERE $10::bool AND EXISTS (SELECT 1 FROM ok)
),
trim AS (
	DELETE FROM doc_history h
	WHERE EXISTS (SELECT 1 FROM ok) AND h.store = $1 AND h.scope = $2 AND h.key = $3
	AND (h.version < $8::bigint - $6::int OR h.version >= $8::bigint)
),
upd AS (
	UPDATE docs d SET version = $8::bigint,
		updated = t.now, expires = t.now + $5::bigint * interval '1 microsecond', doc = $4::json
	FROM old, t WHERE d.id = old.id AND EXISTS (SELECT 1 FROM ok)
	RETURNING d.version, d.updated, d.expires
),
ins AS (
	INSERT INTO docs (store, scope, key, version, updated, expires, doc)
	SELECT $1, $2, $3, $8::bigint, t.now, t.now + $5::bigint * interval '1 microsecond', $4::json FROM t
	WHERE NOT EXISTS (SELECT 1 FROM old) AND $9::bigint = 0
	ON CONFLICT (store, scope, key) DO NOTHING
	RETURNING version, updated, expires
)
SELECT true, version, updated, expires, false FROM upd
UNION ALL SELECT true, version, updated, expires, false FROM ins
UNION ALL SELECT false, version, updated, expires, expired FROM old WHERE NOT EXISTS (SELECT 1 FROM ok)`

func (b *Backend) ReplaceDoc(ctx context.Context, r backend.DocReplace) (backend.Doc, error) {
	defer b.changed(r.Scope)
	d := backend.Doc{Key: r.Key, JSON: r.JSON}
	if r.Change != nil {
		return b.replaceDocAs(ctx, r, d)
	}
	var done bool
	var exp *time.Time
	err := b.pool.QueryRow(ctx, replaceDoc, r.Store, r.Scope, r.Key, string(r.JSON), ttlArg(r.TTL), r.Keep, b.nowArg(),
		r.Version, r.Expect, r.Archive, r.Live).Scan(&done, &d.Version, &d.Updated, &exp, &d.Expired)
	return b.replaced(ctx, r, d, done, exp, err)
}

// replaced is the outcome of one replacement's statement (ReplaceDoc,
// and replaceDocAs after its claim): d scanned with done and exp, or err.
func (b *Backend) replaced(ctx context.Context, r backend.DocReplace, d backend.Doc, done bool, exp *time.Time, err error) (backend.Doc, error) {
	switch {
	case errors.Is(err, pgx.ErrNoRows) || retryable(err, "23505"):
		// Nothing was written (the statement is its own transaction, or
		// its transaction rolled back): a concurrent first set of the
		// key, or no document where one was expected.
		return backend.Doc{Key: r.Key}, backend.ErrDocChanged
	case pgCode(err) == "SQ001":
		if qerr := b.refusal(ctx, r.Scope, backend.Usage{Documents: 1}); qerr != nil {
			return backend.Doc{}, qerr
		}
		return backend.Doc{}, fmt.Errorf("postgres: put document: %w", err)
	case err != nil:
		return backend.Doc{}, fmt.Errorf("postgres: put document: %w", err)
	}
	d.Updated = d.Updated.UTC()
	if exp != nil {
		d.Expires = exp.UTC()
	}
	if !done {
		d.JSON = nil
		return d, backend.ErrDocChanged
	}
	b.analyzer.wrote(b)
	return d, nil
}

// ReplaceDocs runs the statement of ReplaceDoc for each replacement, in
// one pipeline and one implicit transaction: one round trip and one
// durable flush for all of them (backend.DocBatcher). Each statement sees
// what the ones before it wrote (READ COMMITTED, a snapshot per
// statement), so a later replacement of the same key is decided against
// the earlier one. The statements run in key order (the results are put
// back in the order of rs), so that two processes' batches lock their rows
// in the same order and do not deadlock one another; a deadlock or a
// serialization failure all the same (with a third party) runs the batch
// again. Any other error rolls the whole transaction back and is
// returned: the caller stores the replacements one by one. When the
// connection fails before the transaction's outcome is known, every entry
// gets that error, as a lone ReplaceDoc would.
func (b *Backend) ReplaceDocs(ctx context.Context, rs []backend.DocReplace) ([]backend.DocResult, error) {
	defer b.changed("")
	out := make([]backend.DocResult, len(rs))
	order := make([]int, 0, len(rs))
	for i := range rs {
		if ch := rs[i].Change; ch != nil && ch.Key != nil {
			// A keyed set claims its key in a transaction of its own,
			// before the batch.
			out[i].Doc, out[i].Err = b.replaceDocAs(ctx, rs[i], backend.Doc{Key: rs[i].Key, JSON: rs[i].JSON})
			continue
		}
		order = append(order, i)
	}
	slices.SortStableFunc(order, func(i, j int) int {
		a, c := &rs[i].DocID, &rs[j].DocID
		return cmp.Or(strings.Compare(a.Store, c.Store), strings.Compare(a.Scope, c.Scope), strings.Compare(a.Key, c.Key))
	})
	now := b.nowArg()
	for attempt := 1; ; attempt++ {
		err := b.replaceDocsOnce(ctx, rs, order, now, out)
		switch {
		case err == nil:
			for _, r := range out {
				if r.Err == nil {
					b.analyzer.wrote(b)
				}
			}
			return out, nil
		case outcomeUnknown(err):
			err = fmt.Errorf("postgres: put document: the connection failed before the transaction's outcome was known: %w", err)
			for _, i := range order {
				out[i] = backend.DocResult{Err: err}
			}
			return out, nil
		case !retryable(err) || attempt == 5:
			return nil, fmt.Errorf("postgres: put documents: %w", err)
		}
		b.retries.Add(1)
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("postgres: put documents: %w", ctx.Err())
		case <-time.After(time.Duration(rand.Int64N(int64(attempt) * int64(time.Millisecond)))):
		}
	}
}

func (b *Backend) replaceDocsOnce(ctx context.Context, rs []backend.DocReplace, order []int, now *time.Time, out []backend.DocResult) error {
	batch, bulk, alone := docBatch(rs, order, now)
	br := b.pool.SendBatch(ctx, batch)
	if bulk != nil {
		if err := readInsertDocs(br, rs, order, bulk, out); err != nil {
			br.Close()
			return err
		}
	}
	for _, i := range alone {
		r := &rs[i]
		d := backend.Doc{Key: r.Key, JSON: r.JSON}
		var done bool
		var exp *time.Time
		err := br.QueryRow().Scan(&done, &d.Version, &d.Updated, &exp, &d.Expired)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			// A concurrent first set of the key by another transaction.
			out[i] = backend.DocResult{Doc: backend.Doc{Key: r.Key}, Err: backend.ErrDocChanged}
			continue
		case err != nil:
			br.Close()
			return err
		}
		d.Updated = d.Updated.UTC()
		if exp != nil {
			d.Expires = exp.UTC()
		}
		out[i] = backend.DocResult{Doc: d}
		if !done {
			d.JSON = nil
			out[i] = backend.DocResult{Doc: d, Err: backend.ErrDocChanged}
		}
	}
	// Close waits for the end of the implicit transaction: the results are
	// returned only once it is durable.
	return br.Close()
}

// docBatch is the pipeline of a batch: the first sets of new keys in one
// statement, first (bulk, positions in order; docbulk.go), then the
// others (alone, indexes of rs), one statement each, in key order.
func docBatch(rs []backend.DocReplace, order []int, now *time.Time) (batch *pgx.Batch, bulk, alone []int) {
	batch = &pgx.Batch{}
	bulk = bulkEntries(rs, order)
	if bulk != nil {
		queueInsertDocs(batch, rs, order, bulk, now)
	}
	alone = make([]int, 0, len(order)-len(bulk))
	for p, i := range order {
		if _, in := slices.BinarySearch(bulk, p); !in {
			alone = append(alone, i)
		}
	}
	for _, i := range alone {
		r := &rs[i]
		if ch := r.Change; ch != nil {
			// Logged with the set (a keyed set is never batched: its
			// claim needs a transaction of its own, replaceDocAs).
			batch.Queue(replaceDocLogged, r.Store, r.Scope, r.Key, string(r.JSON), ttlArg(r.TTL), r.Keep, now,
				r.Version, r.Expect, r.Archive, r.Live, ch.Scope, bytea(ch.Meta))
			continue
		}
		batch.Queue(replaceDoc, r.Store, r.Scope, r.Key, string(r.JSON), ttlArg(r.TTL), r.Keep, now,
			r.Version, r.Expect, r.Archive, r.Live)
	}
	return batch, bulk, alone
}

// getDoc returns the current version (h = 0, with whether it is visible)
// and, when $5 is true, the history (h = 1), newest first, in one snapshot.
const getDoc = `SELECT 0 AS h, version, updated, expires, doc::text,
	(expires IS NULL OR expires > coalesce($4::timestamptz, now())) AS visible
FROM docs WHERE store = $1 AND scope = $2 AND key = $3
UNION ALL
SELECT 1, h.version, h.updated, NULL, h.doc::text, true
FROM doc_history h JOIN docs d ON d.store = h.store AND d.scope = h.scope AND d.key = h.key
WHERE $5 AND h.store = $1 AND h.scope = $2 AND h.key = $3 AND h.version < d.version
ORDER BY 1, 2 DESC`

const getDocOnly = `SELECT version, updated, expires, doc::text,
	(expires IS NULL OR expires > coalesce($4::timestamptz, now())) AS visible
FROM docs WHERE store = $1 AND scope = $2 AND key = $3`

func (b *Backend) GetDoc(ctx context.Context, id backend.DocID, history bool) (backend.Doc, []backend.Doc, bool, error) {
	if !history {
		d := backend.Doc{Key: id.Key}
		var exp *time.Time
		var visible bool
		err := b.pool.QueryRow(ctx, getDocOnly, id.Store, id.Scope, id.Key, b.nowArg()).Scan(&d.Version, &d.Updated, &exp, &d.JSON, &visible)
		if errors.Is(err, pgx.ErrNoRows) {
			return backend.Doc{}, nil, false, nil
		}
		if err != nil {
			return backend.Doc{}, nil, false, fmt.Errorf("postgres: get document: %w", err)
		}
		d.Updated = d.Updated.UTC()
		if exp != nil {
			d.Expires = exp.UTC()
		}
		d.Expired = !visible
		return d, nil, true, nil
	}
	rows, err := b.pool.Query(ctx, getDoc, id.Store, id.Scope, id.Key, b.nowArg(), history)
	if err != nil {
		return backend.Doc{}, nil, false, fmt.Errorf("postgres: get document: %w", err)
	}
	defer rows.Close()
	var cur backend.Doc
	var h []backend.Doc
	found := false
	for rows.Next() {
		var kind int
		d := backend.Doc{Key: id.Key}
		var exp *time.Time
		var vis bool
		if err := rows.Scan(&kind, &d.Version, &d.Updated, &exp, &d.JSON, &vis); err != nil {
			return backend.Doc{}, nil, false, fmt.Errorf("postgres: get document: %w", err)
		}
		d.Updated = d.Updated.UTC()
		if exp != nil {
			d.Expires = exp.UTC()
		}
		if kind == 0 {
			d.Expired = !vis
			cur, found = d, true
		} else {
			h = append(h, d)
		}
	}
	if err := rows.Err(); err != nil {
		return backend.Doc{}, nil, false, fmt.Errorf("postgres: get document: %w", err)
	}
	if !found {
		return backend.Doc{}, nil, false, nil
	}
	return cur, h, true, nil
}

const deleteDoc = `WITH del AS (
	DELETE FROM docs WHERE store = $1 AND scope = $2 AND key = $3
	RETURNING version, updated, expires, (expires IS NOT NULL AND expires <= coalesce($4::timestamptz, now())) AS expired
),
h AS (DELETE FROM doc_history WHERE store = $1 AND scope = $2 AND key = $3)
SELECT version, updated, expires, expired FROM del`

func (b *Backend) DeleteDoc(ctx context.Context, id backend.DocID) (backend.Doc, bool, error) {
	defer b.changed(id.Scope)
	d := backend.Doc{Key: id.Key}
	var exp *time.Time
	err := b.pool.QueryRow(ctx, deleteDoc, id.Store, id.Scope, id.Key, b.nowArg()).Scan(&d.Version, &d.Updated, &exp, &d.Expired)
	if errors.Is(err, pgx.ErrNoRows) {
		return backend.Doc{}, false, nil
	}
	if err != nil {
		return backend.Doc{}, false, fmt.Errorf("postgres: remove document: %w", err)
	}
	d.Updated = d.Updated.UTC()
	if exp != nil {
		d.Expires = exp.UTC()
	}
	b.analyzer.wrote(b)
	return d, true, nil
}

// sweepBatch bounds the documents one statement of SweepExpired deletes.
const sweepBatch = 1000

const sweepDocs = `WITH del AS (
	DELETE FROM docs WHERE id IN (
		SELECT id FROM docs WHERE expires <= coalesce($1::timestamptz, now())
		ORDER BY expires LIMIT $2 FOR UPDATE SKIP LOCKED)
	RETURNING store, scope, key
),
h AS (
	DELETE FROM doc_history dh USING del
	WHERE dh.store = del.store AND dh.scope = del.scope AND dh.key = del.key
)
SELECT count(*) FROM del`

func (b *Backend) SweepExpired(ctx context.Context) (int64, error) {
	now := b.nowArg()
	var total int64
	for {
		var n int64
		if err := b.pool.QueryRow(ctx, sweepDocs, now, sweepBatch).Scan(&n); err != nil {
			return total, fmt.Errorf("postgres: sweep documents: %w", err)
		}
		total += n
		if n < sweepBatch {
			return total, nil
		}
	}
}

// sqlString quotes s as an SQL string literal.
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func shortHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:6])
}

// indexPrefix starts the name of every index of a store's documents:
// docs_<hash of the store>_<hash of the expression> (PostgreSQL truncates
// names at 63 bytes, and store names may be 48).
func indexPrefix(store string) string { return "docs_" + shortHash(store) + "_" }

func (b *Backend) EnsureIndexes(ctx context.Context, store string, indexes []backend.DocIndex) error {
	if b.snapshot {
		return nil // a snapshot reads; indexes only speed reads up
	}
	want := map[string]string{}
	for _, ix := range indexes {
		expr := ix.Expr("postgres", "doc")
		name := indexPrefix(store) + shortHash(expr)
		want[name] = fmt.Sprintf("CREATE INDEX IF NOT EXISTS %s ON docs (scope, %s, key) WHERE store = %s",
			pgx.Identifier{name}.Sanitize(), expr, sqlString(store))
	}
	have := map[string]bool{}
	prefix := indexPrefix(store)
	rows, _ := b.pool.Query(ctx, `SELECT indexname FROM pg_indexes
		WHERE schemaname = current_schema() AND tablename = 'docs' AND starts_with(indexname, $1)`, prefix)
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("postgres: indexes of %s: %w", store, err)
	}
	for _, n := range names {
		have[n] = true
	}
	same := len(have) == len(want)
	for n := range want {
		same = same && have[n]
	}
	if same {
		return nil
	}
	for attempt := 0; ; attempt++ {
		err = pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
			for n := range have {
				if _, ok := want[n]; !ok {
					if _, err := tx.Exec(ctx, "DROP INDEX IF EXISTS "+pgx.Identifier{n}.Sanitize()); err != nil {
						return err
					}
				}
			}
			for _, create := range want {
				if _, err := tx.Exec(ctx, create); err != nil {
					return err
				}
			}
			// Statistics for the new expressions, so that the planner
			// knows how selective they are.
			_, err := tx.Exec(ctx, "ANALYZE docs")
			return err
		})
		// Processes that create the same index at once may collide on
		// the catalog's unique index: the index then exists.
		if err == nil || attempt == 5 || !retryable(err, "23505", "42P07") {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("postgres: indexes of %s: %w", store, err)
	}
	return nil
}

// docQuery returns the SQL of a page and its arguments.
func (b *Backend) docQuery(q backend.DocQuery) (string, []any) {
	var sb strings.Builder
	sb.WriteString("SELECT key, version, updated, expires, doc::text FROM docs WHERE store = " + sqlString(q.Store) + " AND scope = $1")
	all := []any{q.Scope}
	if !q.IncludeExpired {
		sb.WriteString(" AND (expires IS NULL OR expires > coalesce($2::timestamptz, now()))")
		all = append(all, b.nowArg())
	}
	where, orderBy, args := q.SQL("postgres", "doc", "key", len(all)+1)
	all = append(all, args...)
	sb.WriteString(" AND (" + where + ") ORDER BY " + orderBy + " LIMIT $" + strconv.Itoa(len(all)+1))
	all = append(all, q.Limit)
	return sb.String(), all
}

func (b *Backend) QueryDocs(ctx context.Context, q backend.DocQuery) ([]backend.Doc, error) {
	if q.Limit <= 0 {
		return nil, nil
	}
	query, args := b.docQuery(q)
	// An unnamed statement, planned for these values each time: a cached
	// statement goes to a generic plan after five runs, and a generic plan
	// of "topic IN ($3, $4) AND confidence > $5 ORDER BY key LIMIT $6"
	// does not know which condition is selective (W2's query-in went from
	// a few milliseconds to 170 with one).
	rows, err := b.pool.Query(ctx, query, append([]any{pgx.QueryExecModeExec}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("postgres: query documents: %w", err)
	}
	defer rows.Close()
	out := make([]backend.Doc, 0, min(q.Limit, 128))
	for rows.Next() {
		var d backend.Doc
		var exp *time.Time
		if err := rows.Scan(&d.Key, &d.Version, &d.Updated, &exp, &d.JSON); err != nil {
			return nil, fmt.Errorf("postgres: query documents: %w", err)
		}
		d.Updated = d.Updated.UTC()
		if exp != nil {
			d.Expires = exp.UTC()
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: query documents: %w", err)
	}
	return out, nil
}
