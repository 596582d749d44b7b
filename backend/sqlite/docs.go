package sqlite

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/satchel-dev/satchel/backend"
)

// Collections (backend.Documents) on SQLite: tables docs and doc_history
// (migrations/0002_docs.sql). A set of a new key is one statement in
// autocommit mode (an insert that does nothing when the key exists), its
// own transaction; a replacement is then one BEGIN IMMEDIATE transaction
// of up to four (look up, copy the old row into the history, trim the
// history, rewrite the row in place). Document writes wake the WAL
// checkpointer as Appends do (docs/decisions/0011-sqlite-documents.md).
// A get is one prepared point query on the reader pool. Queries run the
// WHERE and ORDER BY that internal/collection compiled, with the store's name
// written into the SQL as a literal: that is what lets SQLite use the
// store's partial indexes (a bound parameter would hide from the planner
// that the index's WHERE store = '<name>' holds). Store names are checked
// by the definition loader (lowercase letters, digits, '-' and '_'), and
// quoted all the same.

// docState is the per-backend state of collections, a field of Backend:
// prepared statements and a cache of prepared query statements.
type docState struct {
	once sync.Once
	err  error

	selCur, insDoc, updDoc, histIns, histTrim *sql.Stmt  // writer
	getCur, getHist                           *sql.Stmt  // readers
	batch                                     batchStmts // writer: multi-row (docbatch.go)

	mu    sync.RWMutex
	cache map[string]*sql.Stmt // query SQL → statement on the readers
}

const maxCachedQueries = 256

// docStmts prepares the statements of collections once, and returns them.
func (b *Backend) docStmts() (*docState, error) {
	st := &b.docs
	st.once.Do(func() { st.err = st.prepare(b) })
	return st, st.err
}

const docCols = "key, version, updated, expires, doc"

func (st *docState) prepare(b *Backend) error {
	ctx := context.Background()
	for _, s := range []struct {
		db  *sql.DB
		s   **sql.Stmt
		sql string
	}{
		{b.w, &st.selCur, "SELECT id, version, updated, expires FROM docs WHERE store = ? AND scope = ? AND key = ?"},
		{b.w, &st.insDoc, "INSERT INTO docs (store, scope, key, version, updated, expires, doc) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (store, scope, key) DO NOTHING"},
		{b.w, &st.updDoc, "UPDATE docs SET version = ?, updated = ?, expires = ?, doc = ? WHERE id = ?"},
		{b.w, &st.histIns, "INSERT INTO doc_history (store, scope, key, version, updated, doc) SELECT store, scope, key, version, updated, doc FROM docs WHERE id = ?"},
		{b.w, &st.histTrim, "DELETE FROM doc_history WHERE store = ? AND scope = ? AND key = ? AND (version < ? OR version >= ?)"},
		{b.r, &st.getCur, "SELECT " + docCols + " FROM docs WHERE store = ? AND scope = ? AND key = ?"},
		{b.r, &st.getHist, "SELECT version, updated, doc FROM doc_history WHERE store = ? AND scope = ? AND key = ? ORDER BY version DESC"},
	} {
		stmt, err := s.db.PrepareContext(ctx, s.sql)
		if err != nil {
			return fmt.Errorf("sqlite: prepare %q: %w", s.sql, err)
		}
		*s.s = stmt
	}
	return nil
}

// expiresArg is the expires column of a document put at now with ttl.
func expiresArg(now time.Time, ttl time.Duration) any {
	if ttl <= 0 {
		return nil
	}
	return nanos(now.Add(ttl))
}

func (b *Backend) ReplaceDoc(ctx context.Context, r backend.DocReplace) (backend.Doc, error) {
	defer b.changed.Notify("")
	if b.readOnly {
		return backend.Doc{}, b.readOnlyErr() // the insert below bypasses write
	}
	st, err := b.docStmts()
	if err != nil {
		return backend.Doc{}, err
	}
	now := b.now()
	d := backend.Doc{Key: r.Key, Version: r.Version, Updated: now, JSON: r.JSON}
	if r.TTL > 0 {
		d.Expires = now.Add(r.TTL)
	}
	upd, exp := nanos(now), expiresArg(now, r.TTL)
	if r.Change != nil {
		return b.replaceDocLogged(ctx, st, r, d, now)
	}
	if r.Expect == 0 {
		// A new key: one statement in autocommit mode, its own
		// transaction. SQLite takes the write lock as the statement
		// starts (waiting under busy_timeout, as BEGIN IMMEDIATE does)
		// and commits as it ends; no snapshot is open before it, so it
		// cannot fail as stale. It saves the BEGIN and COMMIT statements
		// of a transaction (database/sql and the driver prepare each
		// anew).
		res, err := st.insDoc.ExecContext(ctx, r.Store, r.Scope, r.Key, r.Version, upd, exp, r.JSON)
		if err != nil {
			return backend.Doc{}, b.putDocErr(ctx, []backend.DocReplace{r}, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return backend.Doc{}, fmt.Errorf("sqlite: put document: %w", err)
		} else if n == 1 {
			b.wroteDocs(1, len(r.JSON))
			return d, nil
		}
		// The key exists: the caller decides again from its version.
		cur, _, ok, err := b.GetDoc(ctx, r.DocID, false)
		if err != nil {
			return backend.Doc{}, err
		}
		if !ok {
			cur = backend.Doc{Key: r.Key} // removed since
		}
		cur.JSON = nil
		return cur, backend.ErrDocChanged
	}
	// A replacement, in one BEGIN IMMEDIATE transaction.
	var changed *backend.Doc
	err = b.write(ctx, func(tx *sql.Tx) error {
		var err error
		changed, err = st.replace(ctx, tx, r, now)
		return err
	})
	if err != nil {
		return backend.Doc{}, fmt.Errorf("sqlite: put document: %w", err)
	}
	if changed != nil {
		return *changed, backend.ErrDocChanged
	}
	b.wroteDocs(1, len(r.JSON))
	return d, nil
}

// ReplaceDocs applies each replacement as ReplaceDoc does, in order, in
// one BEGIN IMMEDIATE transaction, and returns once it has committed
// (backend.DocBatcher): concurrent sets share its COMMIT and its WAL
// frames, and its statements (docbatch.go): one read of the current
// versions of the batch's keys, one insert of its new documents, one of
// its entries in the log of changes.
func (b *Backend) ReplaceDocs(ctx context.Context, rs []backend.DocReplace) ([]backend.DocResult, error) {
	defer b.changed.Notify("")
	if b.readOnly {
		return nil, b.putDocErr(ctx, rs, b.readOnlyErr()) // before any statement is prepared on the writer
	}
	st, err := b.docStmts()
	if err != nil {
		return nil, err
	}
	p := planBatch(rs)
	if err := st.warmBatch(ctx, b.w, p, rs); err != nil {
		return nil, err
	}
	now := b.now()
	out := make([]backend.DocResult, len(rs))
	size := 0
	err = b.write(ctx, func(tx *sql.Tx) error {
		stored, err := st.replaceBatch(ctx, tx, p, rs, now, out)
		if err != nil {
			return err
		}
		if err := st.logChanges(ctx, tx, rs, stored, nanos(now)); err != nil {
			return err
		}
		for _, i := range p.serial {
			r := rs[i]
			changed, err := st.replace(ctx, tx, r, now)
			if err != nil {
				return err
			}
			if changed != nil {
				out[i] = backend.DocResult{Doc: *changed, Err: backend.ErrDocChanged}
				continue
			}
			if r.Change != nil {
				// A key already used breaks the batch: its entries are
				// then stored one by one, and only this one is refused.
				if err := b.logDocChange(ctx, tx, r.Change, r.DocID, r.Version, nanos(now)); err != nil {
					return err
				}
			}
			out[i] = backend.DocResult{Doc: storedDoc(r, now)}
		}
		size = 0
		for i, r := range rs {
			if out[i].Err == nil {
				size += len(r.JSON)
			}
		}
		return nil
	})
	if err != nil {
		return nil, b.putDocErr(ctx, rs, err)
	}
	b.wroteDocs(len(rs), size)
	return out, nil
}

// replace is one replacement in the writer's transaction tx, the
// per-document step of ReplaceDoc and ReplaceDocs: it stores r at now and
// returns nil, or, when r's condition does not hold, writes nothing and
// returns the current version.
func (st *docState) replace(ctx context.Context, tx *sql.Tx, r backend.DocReplace, now time.Time) (*backend.Doc, error) {
	upd, exp := nanos(now), expiresArg(now, r.TTL)
	if r.Expect == 0 {
		res, err := tx.StmtContext(ctx, st.insDoc).ExecContext(ctx, r.Store, r.Scope, r.Key, r.Version, upd, exp, r.JSON)
		if err != nil {
			return nil, err
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			return nil, err
		}
	}
	var id, version, updated int64
	var expires sql.NullInt64
	err := tx.StmtContext(ctx, st.selCur).QueryRowContext(ctx, r.Store, r.Scope, r.Key).Scan(&id, &version, &updated, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return &backend.Doc{Key: r.Key}, nil
	}
	if err != nil {
		return nil, err
	}
	if version != r.Expect || r.Live && expires.Valid && expires.Int64 <= upd {
		changed := &backend.Doc{Key: r.Key, Version: version, Updated: fromNanos(updated)}
		if expires.Valid {
			changed.Expires = fromNanos(expires.Int64)
			changed.Expired = expires.Int64 <= upd
		}
		return changed, nil
	}
	if r.Archive {
		if _, err := tx.StmtContext(ctx, st.histIns).ExecContext(ctx, id); err != nil {
			return nil, err
		}
	}
	if _, err := tx.StmtContext(ctx, st.histTrim).ExecContext(ctx, r.Store, r.Scope, r.Key, r.Version-int64(r.Keep), r.Version); err != nil {
		return nil, err
	}
	_, err = tx.StmtContext(ctx, st.updDoc).ExecContext(ctx, r.Version, upd, exp, r.JSON, id)
	return nil, err
}

// replaceDocLogged is ReplaceDoc with r.Change: the set, the claim of its
// key and the entry of the log of document changes, in one transaction.
func (b *Backend) replaceDocLogged(ctx context.Context, st *docState, r backend.DocReplace, d backend.Doc, now time.Time) (backend.Doc, error) {
	var changed *backend.Doc
	err := b.write(ctx, func(tx *sql.Tx) error {
		var err error
		if changed, err = st.replace(ctx, tx, r, now); err != nil || changed != nil {
			return err
		}
		return b.logDocChange(ctx, tx, r.Change, r.DocID, r.Version, nanos(now))
	})
	if errors.Is(err, backend.ErrKeyUsed) {
		return backend.Doc{Key: r.Key}, err
	}
	if err != nil {
		return backend.Doc{}, b.putDocErr(ctx, []backend.DocReplace{r}, err)
	}
	if changed != nil {
		return *changed, backend.ErrDocChanged
	}
	b.wroteDocs(1, len(r.JSON))
	return d, nil
}

// putDocErr is the error of a failed write of the documents rs: the
// documents quota's refusal when its trigger aborted the write.
func (b *Backend) putDocErr(ctx context.Context, rs []backend.DocReplace, err error) error {
	if strings.Contains(err.Error(), docsQuotaExceeded) && len(rs) > 0 {
		if q, qerr := readQuota(ctx, b.r, rs[0].Scope); qerr == nil && q != nil && len(rs) == 1 {
			if qerr := q.Add(backend.Usage{Documents: 1}); qerr != nil {
				return qerr
			}
		}
	}
	if len(rs) == 1 {
		return fmt.Errorf("sqlite: put document: %w", err)
	}
	return fmt.Errorf("sqlite: put documents: %w", err)
}

// docWritePages is about how many pages one document write adds to the
// WAL beyond its JSON: the leaf of the table it lands in, its entry in
// the (store, scope, key) index, an index or two of the store's.
const docWritePages = 4

// wroteDocs tells the checkpointer (checkpoint.go) that n document
// writes with size bytes of JSON in all committed, so that the writer
// does not run the checkpoints itself: without it, every 4,000 pages of
// documents the writer's own backstop copied the WAL into the file and
// synced it in the middle of a set.
func (b *Backend) wroteDocs(n, size int) {
	if b.ckpt != nil && n > 0 {
		b.ckpt.wrote(int64(size) + int64(n)*docWritePages*4096)
	}
}

// scanDoc reads the columns of docCols.
func scanDoc(sc interface{ Scan(...any) error }) (backend.Doc, error) {
	var d backend.Doc
	var upd int64
	var exp sql.NullInt64
	if err := sc.Scan(&d.Key, &d.Version, &upd, &exp, &d.JSON); err != nil {
		return d, err
	}
	d.Updated = fromNanos(upd)
	if exp.Valid {
		d.Expires = fromNanos(exp.Int64)
	}
	return d, nil
}

func (b *Backend) GetDoc(ctx context.Context, id backend.DocID, history bool) (backend.Doc, []backend.Doc, bool, error) {
	st, err := b.docStmts()
	if err != nil {
		return backend.Doc{}, nil, false, err
	}
	now := b.now()
	expired := func(d backend.Doc) bool { return !d.Expires.IsZero() && !d.Expires.After(now) }
	if !history {
		d, err := scanDoc(st.getCur.QueryRowContext(ctx, id.Store, id.Scope, id.Key))
		if errors.Is(err, sql.ErrNoRows) {
			return backend.Doc{}, nil, false, nil
		}
		if err != nil {
			return backend.Doc{}, nil, false, fmt.Errorf("sqlite: get document: %w", err)
		}
		d.Expired = expired(d)
		return d, nil, true, nil
	}
	var d backend.Doc
	var h []backend.Doc
	ok := false
	err = b.read(ctx, func(tx *sql.Tx) error {
		var err error
		d, err = scanDoc(tx.StmtContext(ctx, st.getCur).QueryRowContext(ctx, id.Store, id.Scope, id.Key))
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		d.Expired, ok = expired(d), true
		rows, err := tx.StmtContext(ctx, st.getHist).QueryContext(ctx, id.Store, id.Scope, id.Key)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			v := backend.Doc{Key: id.Key}
			var upd int64
			if err := rows.Scan(&v.Version, &upd, &v.JSON); err != nil {
				return err
			}
			v.Updated = fromNanos(upd)
			h = append(h, v)
		}
		return rows.Err()
	})
	if err != nil {
		return backend.Doc{}, nil, false, fmt.Errorf("sqlite: get document: %w", err)
	}
	if !ok {
		return backend.Doc{}, nil, false, nil
	}
	return d, h, true, nil
}

func (b *Backend) DeleteDoc(ctx context.Context, id backend.DocID) (backend.Doc, bool, error) {
	defer b.changed.Notify("")
	return b.deleteDoc(ctx, id, nil)
}

func (b *Backend) deleteDoc(ctx context.Context, id backend.DocID, ch *backend.DocChange) (backend.Doc, bool, error) {
	if _, err := b.docStmts(); err != nil {
		return backend.Doc{}, false, err
	}
	now := nanos(b.now())
	var d backend.Doc
	found := false
	err := b.write(ctx, func(tx *sql.Tx) error {
		var upd int64
		var exp sql.NullInt64
		d = backend.Doc{Key: id.Key}
		err := tx.QueryRowContext(ctx, "DELETE FROM docs WHERE store = ? AND scope = ? AND key = ? RETURNING version, updated, expires",
			id.Store, id.Scope, id.Key).Scan(&d.Version, &upd, &exp)
		if errors.Is(err, sql.ErrNoRows) {
			if ch != nil {
				return b.logDocChange(ctx, tx, ch, id, -1, now) // claims the key, logs nothing
			}
			return nil
		}
		if err != nil {
			return err
		}
		if ch != nil {
			if err := b.logDocChange(ctx, tx, ch, id, d.Version, now); err != nil {
				return err
			}
		}
		found, d.Updated = true, fromNanos(upd)
		if exp.Valid {
			d.Expires, d.Expired = fromNanos(exp.Int64), exp.Int64 <= now
		}
		_, err = tx.ExecContext(ctx, "DELETE FROM doc_history WHERE store = ? AND scope = ? AND key = ?", id.Store, id.Scope, id.Key)
		return err
	})
	if errors.Is(err, backend.ErrKeyUsed) {
		return backend.Doc{Key: id.Key}, false, err
	}
	if err != nil {
		return backend.Doc{}, false, fmt.Errorf("sqlite: remove document: %w", err)
	}
	b.wroteDocs(1, 0)
	return d, found, nil
}

// sweepBatch bounds the documents one transaction of SweepExpired deletes,
// so that a large sweep does not hold the write lock for long.
const sweepBatch = 1000

func (b *Backend) SweepExpired(ctx context.Context) (int64, error) {
	if _, err := b.docStmts(); err != nil {
		return 0, err
	}
	now := nanos(b.now())
	var total int64
	for {
		n := 0
		err := b.write(ctx, func(tx *sql.Tx) error {
			rows, err := tx.QueryContext(ctx, `DELETE FROM docs WHERE id IN
				(SELECT id FROM docs WHERE expires <= ? ORDER BY expires LIMIT ?)
				RETURNING store, scope, key`, now, sweepBatch)
			if err != nil {
				return err
			}
			var ids []backend.DocID
			for rows.Next() {
				var id backend.DocID
				if err := rows.Scan(&id.Store, &id.Scope, &id.Key); err != nil {
					rows.Close()
					return err
				}
				ids = append(ids, id)
			}
			if err := rows.Close(); err != nil {
				return err
			}
			for _, id := range ids {
				if _, err := tx.ExecContext(ctx, "DELETE FROM doc_history WHERE store = ? AND scope = ? AND key = ?", id.Store, id.Scope, id.Key); err != nil {
					return err
				}
			}
			n = len(ids)
			return nil
		})
		if err != nil {
			return total, fmt.Errorf("sqlite: sweep documents: %w", err)
		}
		total += int64(n)
		b.wroteDocs(n, 0)
		if n < sweepBatch {
			return total, nil
		}
	}
}

// sqlString quotes s as an SQL string literal.
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// sqlIdent quotes s as an SQL identifier.
func sqlIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// indexPrefix starts the name of every index of a store's documents:
// "docs/<store>/<field>/<hash of the expression>".
func indexPrefix(store string) string { return "docs/" + store + "/" }

func (b *Backend) EnsureIndexes(ctx context.Context, store string, indexes []backend.DocIndex) error {
	if _, err := b.docStmts(); err != nil {
		return err
	}
	want := map[string]string{} // name → CREATE INDEX
	for _, ix := range indexes {
		expr := ix.Expr("sqlite", "doc")
		h := sha256.Sum256([]byte(expr))
		name := indexPrefix(store) + ix.Field + "/" + hex.EncodeToString(h[:4])
		want[name] = fmt.Sprintf("CREATE INDEX IF NOT EXISTS %s ON docs (scope, %s, key) WHERE store = %s",
			sqlIdent(name), expr, sqlString(store))
	}
	// Most calls find everything in place: check on a reader first.
	have := map[string]bool{}
	prefix := indexPrefix(store)
	rows, err := b.r.QueryContext(ctx, "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'docs' AND substr(name, 1, ?) = ?", len(prefix), prefix)
	if err != nil {
		return fmt.Errorf("sqlite: indexes of %s: %w", store, err)
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return fmt.Errorf("sqlite: indexes of %s: %w", store, err)
		}
		have[n] = true
	}
	if err := rows.Close(); err != nil {
		return fmt.Errorf("sqlite: indexes of %s: %w", store, err)
	}
	same := len(have) == len(want)
	for n := range want {
		same = same && have[n]
	}
	if same || b.readOnly {
		return nil // read-only: queries still run, by scanning
	}
	err = b.write(ctx, func(tx *sql.Tx) error {
		for n := range have {
			if _, ok := want[n]; !ok {
				if _, err := tx.ExecContext(ctx, "DROP INDEX IF EXISTS "+sqlIdent(n)); err != nil {
					return err
				}
			}
		}
		for _, create := range want {
			if _, err := tx.ExecContext(ctx, create); err != nil {
				return err
			}
		}
		return plannerStats(ctx, tx, want)
	})
	if err != nil {
		return fmt.Errorf("sqlite: indexes of %s: %w", store, err)
	}
	return nil
}

// Statistics for the query planner. Without them SQLite guesses that an
// equality on the first column of an index leaves 10 rows, a range a
// quarter of them: on the (scope, expression, key) indexes of documents
// it then prefers a range on one indexed field (confidence > 0.5, which
// may hold for half of the documents) to an IN on another (topic IN [...],
// a few), and the (store, scope, key) index of the table to any of them.
// EnsureIndexes writes rows of sqlite_stat1 that describe the shape every
// store has (many documents per scope, few per value of a field, one per
// key), so that an equality or IN on an indexed field wins, and a query
// with none walks the key order. A real ANALYZE replaces them with
// measured figures, which lead to the same plans.
const (
	statTable = "1000000 100000 1000 1" // (store, scope, key)
	statIndex = "1000000 1000 10 1"     // (scope, expression, key)
)

// plannerStats writes the statistics of the indexes named in want (and of
// the table's own index) that sqlite_stat1 does not have yet.
func plannerStats(ctx context.Context, tx *sql.Tx, want map[string]string) error {
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'sqlite_stat1'").Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		// ANALYZE creates sqlite_stat1; this table has a handful of rows.
		if _, err := tx.ExecContext(ctx, "ANALYZE schema_migrations"); err != nil {
			return err
		}
	}
	stats := map[string]string{"sqlite_autoindex_docs_1": statTable}
	for name := range want {
		stats[name] = statIndex
	}
	for idx, stat := range stats {
		if _, err := tx.ExecContext(ctx, `INSERT INTO sqlite_stat1 (tbl, idx, stat) SELECT 'docs', ?1, ?2
			WHERE NOT EXISTS (SELECT 1 FROM sqlite_stat1 WHERE tbl = 'docs' AND idx = ?1)`, idx, stat); err != nil {
			return err
		}
	}
	// Load them on this connection; the others reload the schema, which
	// the CREATE INDEX changed, and the statistics with it.
	_, err := tx.ExecContext(ctx, "ANALYZE sqlite_schema")
	return err
}

func (b *Backend) QueryDocs(ctx context.Context, q backend.DocQuery) ([]backend.Doc, error) {
	st, err := b.docStmts()
	if err != nil {
		return nil, err
	}
	if q.Limit <= 0 {
		return nil, nil
	}
	query, all := b.docQuery(q)
	var out []backend.Doc
	err = st.withQuery(ctx, b.r, query, func(stmt *sql.Stmt) error {
		rows, err := stmt.QueryContext(ctx, all...)
		if err != nil {
			return err
		}
		defer rows.Close()
		out = make([]backend.Doc, 0, min(q.Limit, 128))
		for rows.Next() {
			d, err := scanDoc(rows)
			if err != nil {
				return err
			}
			out = append(out, d)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite: query documents: %w", err)
	}
	return out, nil
}

// docQuery returns the SQL of a page and its arguments.
func (b *Backend) docQuery(q backend.DocQuery) (string, []any) {
	where, orderBy, args := q.SQL("sqlite", "doc", "key", 1)
	var sb strings.Builder
	sb.WriteString("SELECT " + docCols + " FROM docs WHERE store = " + sqlString(q.Store) + " AND scope = ?")
	all := make([]any, 0, len(args)+3)
	all = append(all, q.Scope)
	if !q.IncludeExpired {
		sb.WriteString(" AND (expires IS NULL OR expires > ?)")
		all = append(all, nanos(b.now()))
	}
	sb.WriteString(" AND (" + where + ") ORDER BY " + orderBy + " LIMIT ?")
	all = append(all, args...)
	all = append(all, q.Limit)
	return sb.String(), all
}

// withQuery runs fn with a prepared statement for a query's SQL. The SQL
// of a page depends only on the store, its schema and the shape of the
// query (values are arguments), so a small cache serves the repeated
// shapes. fn runs under the cache's read lock, so that an eviction never
// closes a statement in use.
func (st *docState) withQuery(ctx context.Context, db *sql.DB, q string, fn func(*sql.Stmt) error) error {
	for {
		st.mu.RLock()
		if s, ok := st.cache[q]; ok {
			defer st.mu.RUnlock()
			return fn(s)
		}
		st.mu.RUnlock()

		st.mu.Lock()
		if _, ok := st.cache[q]; !ok {
			s, err := db.PrepareContext(ctx, q)
			if err != nil {
				st.mu.Unlock()
				return err
			}
			if len(st.cache) >= maxCachedQueries {
				for k, old := range st.cache {
					old.Close()
					delete(st.cache, k)
				}
			}
			if st.cache == nil {
				st.cache = map[string]*sql.Stmt{}
			}
			st.cache[q] = s
		}
		st.mu.Unlock()
	}
}
