package postgres

import (
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/satchel-dev/satchel/backend"
)

// The first sets of new keys in a batch (ReplaceDocs) go in one statement
// rather than one statement each
// (docs/decisions/0099-postgres-new-documents-in-one-statement.md): the
// entries travel as arrays, unnested in key order; one read finds the
// keys that already exist, one INSERT ... ON CONFLICT DO NOTHING stores
// the others, and one INSERT logs their changes. Every entry gets the
// answer replaceDoc would give it: stored, or refused with the current
// version when its key exists (a key created by a transaction that
// committed after the statement began shows in neither, and is refused
// without a version, as replaceDoc's empty answer is).

// insertDocs is that statement: $1 the clock (NULL: now()), then one array
// per column of the entries: $2 store, $3 scope, $4 key, $5 document, $6
// ttl in microseconds (NULL: never), $7 version, $8 the change's scope and
// $9 its metadata (NULL: not logged). It returns, per entry (i, from 1),
// whether it was stored, and the stored or current version.
const insertDocs = `WITH t AS (SELECT coalesce($1::timestamptz, now()) AS now),
v AS (
	SELECT * FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::bigint[], $8::text[], $9::bytea[])
	WITH ORDINALITY AS v(store, scope, key, doc, ttl, version, chscope, meta, i)
),
old AS (
	SELECT v.i, d.version, d.updated, d.expires, (d.expires IS NOT NULL AND d.expires <= t.now) AS expired
	FROM v JOIN docs d ON d.store = v.store AND d.scope = v.scope AND d.key = v.key, t
),
ins AS (
	INSERT INTO docs (store, scope, key, version, updated, expires, doc)
	SELECT v.store, v.scope, v.key, v.version, t.now, t.now + v.ttl * interval '1 microsecond', v.doc::json
	FROM v, t WHERE NOT EXISTS (SELECT 1 FROM old WHERE old.i = v.i) ORDER BY v.i
	ON CONFLICT (store, scope, key) DO NOTHING
	RETURNING store, scope, key, version, updated, expires
),
done AS (
	SELECT v.i, ins.version, ins.updated, ins.expires, v.store, v.key, v.chscope, v.meta
	FROM ins JOIN v ON v.store = ins.store AND v.scope = ins.scope AND v.key = ins.key
),
chg AS (
	INSERT INTO doc_changes (time, store, scope, key, version, op, meta)
	SELECT t.now, done.store, done.chscope, done.key, done.version, 'set', done.meta
	FROM done, t WHERE done.meta IS NOT NULL ORDER BY done.i
)
SELECT i, true, version, updated, expires, false FROM done
UNION ALL SELECT i, false, version, updated, expires, expired FROM old`

// The statement runs on a generic plan, forced for it alone: its custom
// plans look cheaper to the planner (the arrays' lengths are known), so
// it would plan every execution anew, about 300 µs of the server's time,
// more than storing a batch of a few documents takes. SET inside the
// batch's transaction is undone if that transaction rolls back.
const (
	genericPlans = "SET plan_cache_mode = force_generic_plan"
	defaultPlans = "RESET plan_cache_mode"
)

// bulkOff sends every entry as a statement of its own (for the benchmark
// that compares both).
var bulkOff = false

// bulkEntries returns the positions of order (rs sorted by key) whose
// entries can go in insertDocs: a set that expects no document, with no
// idempotency key, the first of its key in the batch (a later one is
// decided against it, after it). It takes only two or more: one alone
// goes as replaceDoc.
func bulkEntries(rs []backend.DocReplace, order []int) []int {
	if bulkOff {
		return nil
	}
	var bulk []int
	for p, i := range order {
		r := &rs[i]
		if r.Expect != 0 || r.Change != nil && r.Change.Key != nil {
			continue
		}
		if p > 0 && rs[order[p-1]].DocID == r.DocID {
			continue
		}
		bulk = append(bulk, p)
	}
	if len(bulk) < 2 {
		return nil
	}
	return bulk
}

// queueInsertDocs queues insertDocs for the entries at positions bulk of
// order.
func queueInsertDocs(batch *pgx.Batch, rs []backend.DocReplace, order, bulk []int, now *time.Time) {
	n := len(bulk)
	stores, scopes, keys, docs := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	ttls, versions := make([]*int64, n), make([]int64, n)
	chScopes, metas := make([]*string, n), make([][]byte, n)
	for k, p := range bulk {
		r := &rs[order[p]]
		stores[k], scopes[k], keys[k], docs[k] = r.Store, r.Scope, r.Key, string(r.JSON)
		ttls[k], versions[k] = ttlArg(r.TTL), r.Version
		if ch := r.Change; ch != nil {
			chScopes[k], metas[k] = &ch.Scope, bytea(ch.Meta)
		}
	}
	batch.Queue(genericPlans)
	batch.Queue(insertDocs, now, stores, scopes, keys, docs, ttls, versions, chScopes, metas)
	batch.Queue(defaultPlans)
}

// readInsertDocs reads insertDocs's answer into out; an entry it does not
// name was created meanwhile by another transaction.
func readInsertDocs(br pgx.BatchResults, rs []backend.DocReplace, order, bulk []int, out []backend.DocResult) error {
	for _, p := range bulk {
		i := order[p]
		out[i] = backend.DocResult{Doc: backend.Doc{Key: rs[i].Key}, Err: backend.ErrDocChanged}
	}
	if _, err := br.Exec(); err != nil {
		return err
	}
	rows, err := br.Query()
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var k int
		var done bool
		var d backend.Doc
		var exp *time.Time
		if err := rows.Scan(&k, &done, &d.Version, &d.Updated, &exp, &d.Expired); err != nil {
			return err
		}
		i := order[bulk[k-1]]
		d.Key = rs[i].Key
		d.Updated = d.Updated.UTC()
		if exp != nil {
			d.Expires = exp.UTC()
		}
		if !done {
			out[i] = backend.DocResult{Doc: d, Err: backend.ErrDocChanged}
			continue
		}
		d.JSON = rs[i].JSON
		out[i] = backend.DocResult{Doc: d}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	_, err = br.Exec()
	return err
}
