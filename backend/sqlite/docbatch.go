package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/satchel-dev/satchel/backend"
)

// A batch of document replacements (ReplaceDocs) in a handful of
// statements rather than three or four per document
// (docs/decisions/0083-sqlite-document-batches.md). Inside the one
// BEGIN IMMEDIATE transaction:
//
//  1. one read of the current versions of all the batch's keys of a
//     store and scope (key IN (...)), instead of an insert attempt and a
//     point query per document;
//  2. each entry decided from it alone, as replace decides it: stored,
//     or refused with the current version;
//  3. one multi-row INSERT of the new documents;
//  4. per replaced document, its history row and trim and the rewrite of
//     its row, with the prepared statements bound to the transaction
//     once per batch;
//  5. one multi-row INSERT of the log of document changes.
//
// The entries the bulk path cannot decide from one read (a key that
// appears twice in the batch, where a later entry sees the earlier's
// version; a set with an idempotency key, whose claim may refuse it) run
// afterwards, one by one, in order, through replace, exactly as before.
// Their keys are not the bulk entries' keys, so the order between the two
// changes no outcome.
//
// The multi-row statements are prepared once per number of rows, for 1 to
// 16 rows and 32, 64, 128 and 256; a batch is cut into the largest that
// fit. Preparing happens on the writer's only connection, so before the
// transaction begins, for the sizes the batch will most likely need; a
// size found missing inside the transaction is made of smaller ones
// (one row always exists).

// batchSizes are the row counts multi-row statements are prepared for,
// largest first.
var batchSizes = []int{256, 128, 64, 32, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1}

type batchKind int

const (
	batchSelect  batchKind = iota // current versions of keys of one store and scope
	batchInsert                   // new documents of one store and scope
	batchChanges                  // entries of the log of document changes
)

type batchStmtKey struct {
	kind batchKind
	n    int
}

// batchStmts caches the multi-row statements, on the writer.
type batchStmts struct {
	mu sync.Mutex
	m  map[batchStmtKey]*sql.Stmt
}

// batchSQL is the SQL of a statement of kind for n rows. Its parameters
// are anonymous: the driver looks each bound parameter's name up, and the
// names of numbered ones are a list that SQLite searches linearly.
func batchSQL(kind batchKind, n int) string {
	var sb strings.Builder
	rows := func(row string) {
		for i := range n {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString(row)
		}
	}
	switch kind {
	case batchSelect:
		// store, scope, then the keys.
		sb.WriteString("SELECT key, id, version, updated, expires FROM docs WHERE store = ? AND scope = ? AND key IN (")
		rows("?")
		sb.WriteString(")")
	case batchInsert:
		sb.WriteString("INSERT INTO docs (store, scope, key, version, updated, expires, doc) VALUES ")
		rows("(?, ?, ?, ?, ?, ?, ?)")
	case batchChanges:
		sb.WriteString("INSERT INTO doc_changes (time, store, scope, key, version, op, meta) VALUES ")
		rows("(?, ?, ?, ?, ?, ?, ?)")
	}
	return sb.String()
}

// chunks cuts n rows into the sizes of batchSizes, largest first.
func chunks(n int, f func(size int)) {
	for _, s := range batchSizes {
		for n >= s {
			f(s)
			n -= s
		}
	}
}

// warm prepares, on the writer, the statements of kind for a batch of n
// rows. It must not run inside a write transaction (the writer has one
// connection).
func (bs *batchStmts) warm(ctx context.Context, w *sql.DB, kind batchKind, n int) error {
	var err error
	chunks(n, func(size int) {
		k := batchStmtKey{kind, size}
		bs.mu.Lock()
		_, ok := bs.m[k]
		bs.mu.Unlock()
		if ok || err != nil {
			return
		}
		q := batchSQL(kind, size)
		s, perr := w.PrepareContext(ctx, q)
		if perr != nil {
			err = fmt.Errorf("sqlite: prepare %q: %w", q, perr)
			return
		}
		bs.mu.Lock()
		if bs.m == nil {
			bs.m = map[batchStmtKey]*sql.Stmt{}
		}
		if _, ok := bs.m[k]; ok {
			s.Close()
		} else {
			bs.m[k] = s
		}
		bs.mu.Unlock()
	})
	return err
}

// each runs f over rows [0, n) cut into chunks for which a statement of
// kind is prepared (one row always is, after warm(..., 1)), with the
// chunk's statement in tx.
func (bs *batchStmts) each(ctx context.Context, tx *sql.Tx, kind batchKind, n int, f func(s *sql.Stmt, from, to int) error) error {
	from := 0
	for from < n {
		left := n - from
		var stmt *sql.Stmt
		size := 0
		bs.mu.Lock()
		for _, s := range batchSizes {
			if s <= left {
				if st, ok := bs.m[batchStmtKey{kind, s}]; ok {
					stmt, size = st, s
					break
				}
			}
		}
		bs.mu.Unlock()
		if stmt == nil {
			return fmt.Errorf("sqlite: no statement of %d rows (kind %d)", left, kind)
		}
		if err := f(tx.StmtContext(ctx, stmt), from, from+size); err != nil {
			return err
		}
		from += size
	}
	return nil
}

// docGroup is the bulk entries of one store and scope, by index in rs.
type docGroup struct {
	store, scope string
	idx          []int
}

// batchPlan splits a batch: bulk entries, grouped by store and scope, and
// the entries that run one by one after them.
type batchPlan struct {
	groups []*docGroup
	serial []int
	bulk   int
}

func planBatch(rs []backend.DocReplace) batchPlan {
	count := make(map[backend.DocID]int, len(rs))
	for _, r := range rs {
		count[r.DocID]++
	}
	var p batchPlan
	byScope := map[[2]string]*docGroup{}
	for i, r := range rs {
		if count[r.DocID] > 1 || r.Change != nil && r.Change.Key != nil {
			p.serial = append(p.serial, i)
			continue
		}
		k := [2]string{r.Store, r.Scope}
		g := byScope[k]
		if g == nil {
			g = &docGroup{store: r.Store, scope: r.Scope}
			byScope[k] = g
			p.groups = append(p.groups, g)
		}
		g.idx = append(g.idx, i)
		p.bulk++
	}
	return p
}

// warmBatch prepares the statements a batch planned as p most likely
// needs: every entry stored.
func (st *docState) warmBatch(ctx context.Context, w *sql.DB, p batchPlan, rs []backend.DocReplace) error {
	for _, kind := range []batchKind{batchSelect, batchInsert, batchChanges} {
		if err := st.batch.warm(ctx, w, kind, 1); err != nil {
			return err
		}
	}
	changes := 0
	for _, g := range p.groups {
		inserts := 0
		for _, i := range g.idx {
			if rs[i].Expect == 0 {
				inserts++
			}
			if rs[i].Change != nil {
				changes++
			}
		}
		if err := st.batch.warm(ctx, w, batchSelect, len(g.idx)); err != nil {
			return err
		}
		if err := st.batch.warm(ctx, w, batchInsert, inserts); err != nil {
			return err
		}
	}
	return st.batch.warm(ctx, w, batchChanges, changes)
}

// curVersion is a current version read by the batch's lookup.
type curVersion struct {
	id, version, updated int64
	expires              sql.NullInt64
}

// replaceBatch stores the entries of p in tx at now, as replace would
// each, and sets out[i] for each; the serial entries are left to the
// caller. It returns the entries stored, for the log of changes.
func (st *docState) replaceBatch(ctx context.Context, tx *sql.Tx, p batchPlan, rs []backend.DocReplace, now time.Time, out []backend.DocResult) ([]int, error) {
	upd := nanos(now)
	stored := make([]int, 0, p.bulk)
	var (
		hist, trim, rewrite *sql.Stmt // prepared for the transaction on first use
		args                []any
	)
	for _, g := range p.groups {
		// 1. The current versions of the group's keys.
		cur := make(map[string]curVersion, len(g.idx))
		err := st.batch.each(ctx, tx, batchSelect, len(g.idx), func(s *sql.Stmt, from, to int) error {
			args = append(args[:0], g.store, g.scope)
			for _, i := range g.idx[from:to] {
				args = append(args, rs[i].Key)
			}
			rows, err := s.QueryContext(ctx, args...)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var k string
				var c curVersion
				if err := rows.Scan(&k, &c.id, &c.version, &c.updated, &c.expires); err != nil {
					return err
				}
				cur[k] = c
			}
			return rows.Err()
		})
		if err != nil {
			return nil, err
		}
		// 2. Each entry decided alone, as replace decides it.
		var inserts, updates []int
		for _, i := range g.idx {
			r := rs[i]
			c, ok := cur[r.Key]
			switch {
			case !ok && r.Expect == 0:
				inserts = append(inserts, i)
				continue
			case !ok:
				out[i] = backend.DocResult{Doc: backend.Doc{Key: r.Key}, Err: backend.ErrDocChanged}
				continue
			}
			if c.version != r.Expect || r.Live && c.expires.Valid && c.expires.Int64 <= upd {
				d := backend.Doc{Key: r.Key, Version: c.version, Updated: fromNanos(c.updated)}
				if c.expires.Valid {
					d.Expires = fromNanos(c.expires.Int64)
					d.Expired = c.expires.Int64 <= upd
				}
				out[i] = backend.DocResult{Doc: d, Err: backend.ErrDocChanged}
				continue
			}
			updates = append(updates, i)
		}
		// 3. The new documents, in multi-row inserts.
		err = st.batch.each(ctx, tx, batchInsert, len(inserts), func(s *sql.Stmt, from, to int) error {
			args = args[:0]
			for _, i := range inserts[from:to] {
				r := rs[i]
				args = append(args, g.store, g.scope, r.Key, r.Version, upd, expiresArg(now, r.TTL), r.JSON)
			}
			_, err := s.ExecContext(ctx, args...)
			return err
		})
		if err != nil {
			return nil, err
		}
		stored = append(stored, inserts...)
		// 4. The replacements, each with its history.
		for _, i := range updates {
			r := rs[i]
			id := cur[r.Key].id
			if hist == nil {
				hist, trim, rewrite = tx.StmtContext(ctx, st.histIns), tx.StmtContext(ctx, st.histTrim), tx.StmtContext(ctx, st.updDoc)
			}
			if r.Archive {
				if _, err := hist.ExecContext(ctx, id); err != nil {
					return nil, err
				}
			}
			if _, err := trim.ExecContext(ctx, r.Store, r.Scope, r.Key, r.Version-int64(r.Keep), r.Version); err != nil {
				return nil, err
			}
			if _, err := rewrite.ExecContext(ctx, r.Version, upd, expiresArg(now, r.TTL), r.JSON, id); err != nil {
				return nil, err
			}
			stored = append(stored, i)
		}
	}
	for _, i := range stored {
		out[i] = backend.DocResult{Doc: storedDoc(rs[i], now)}
	}
	return stored, nil
}

// logChanges writes the entries of the log of document changes of the
// stored entries of rs that carry one (none of them claims a key), in
// multi-row inserts.
func (st *docState) logChanges(ctx context.Context, tx *sql.Tx, rs []backend.DocReplace, stored []int, now int64) error {
	var logged []int
	for _, i := range stored {
		if rs[i].Change != nil {
			logged = append(logged, i)
		}
	}
	args := make([]any, 0, 7*min(len(logged), batchSizes[0]))
	return st.batch.each(ctx, tx, batchChanges, len(logged), func(s *sql.Stmt, from, to int) error {
		args = args[:0]
		for _, i := range logged[from:to] {
			r := rs[i]
			args = append(args, now, r.Store, r.Change.Scope, r.Key, r.Version, r.Change.Op, blob(r.Change.Meta))
		}
		_, err := s.ExecContext(ctx, args...)
		return err
	})
}

// storedDoc is the version r stored at now.
func storedDoc(r backend.DocReplace, now time.Time) backend.Doc {
	d := backend.Doc{Key: r.Key, Version: r.Version, Updated: now, JSON: r.JSON}
	if r.TTL > 0 {
		d.Expires = now.Add(r.TTL)
	}
	return d
}
