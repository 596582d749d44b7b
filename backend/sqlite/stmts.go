package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// The statements of the hot paths, prepared once per pool (database/sql
// prepares each on a connection the first time it runs there, then reuses
// it). Rarer operations run their SQL directly.

// insertCommit is the compare-and-swap: it inserts the commit only if the
// thread exists and its newest seq, dropped commits included (a dropped
// commit keeps its seq), is one below the new one. The write transaction
// holds the database's write lock, so nothing moves between the check and
// the insert.
const insertCommit = `INSERT INTO commits (thread_id, seq, time, scope, root, meta, pack)
SELECT ?1, ?2, ?3, scope, ?4, ?5, ?6 FROM threads
WHERE id = ?1 AND (SELECT coalesce(max(seq), 0) FROM commits WHERE thread_id = ?1) = ?2 - 1`

type writeStmts struct {
	insertCommit     *sql.Stmt
	threadExists     *sql.Stmt
	maxSeq           *sql.Stmt
	retained         *sql.Stmt
	checkpointExists *sql.Stmt
	insertCheckpoint *sql.Stmt
}

type readStmts struct {
	head         *sql.Stmt
	commitAt     *sql.Stmt
	log          *sql.Stmt
	pack         *sql.Stmt
	threadExists *sql.Stmt
	threadByName *sql.Stmt
	setting      *sql.Stmt
}

const (
	commitCols  = "id, seq, time, root, meta"
	threadByID  = "SELECT 1 FROM threads WHERE id = ?"
	threadByKey = "SELECT id, created FROM threads WHERE scope = ? AND name = ?"
)

func (b *Backend) prepare(ctx context.Context) error {
	w := []struct {
		s   **sql.Stmt
		sql string
	}{
		{&b.ws.insertCommit, insertCommit},
		{&b.ws.threadExists, threadByID},
		{&b.ws.maxSeq, "SELECT coalesce(max(seq), 0) FROM commits WHERE thread_id = ?"},
		{&b.ws.retained, "SELECT 1 FROM commits WHERE thread_id = ? AND seq = ? AND dropped_at IS NULL"},
		{&b.ws.checkpointExists, "SELECT 1 FROM checkpoints WHERE thread_id = ? AND name = ?"},
		{&b.ws.insertCheckpoint, "INSERT INTO checkpoints (thread_id, name, seq) VALUES (?, ?, ?) ON CONFLICT DO NOTHING"},
	}
	for _, s := range w {
		st, err := b.w.PrepareContext(ctx, s.sql)
		if err != nil {
			return fmt.Errorf("prepare %q: %w", s.sql, err)
		}
		*s.s = st
		b.stmts = append(b.stmts, st)
	}
	r := []struct {
		s   **sql.Stmt
		sql string
	}{
		{&b.rs.head, "SELECT " + commitCols + " FROM commits WHERE thread_id = ? AND dropped_at IS NULL ORDER BY seq DESC LIMIT 1"},
		{&b.rs.commitAt, "SELECT " + commitCols + " FROM commits WHERE thread_id = ? AND seq = ? AND dropped_at IS NULL"},
		{&b.rs.log, "SELECT " + commitCols + " FROM commits WHERE thread_id = ? AND seq < ? AND dropped_at IS NULL ORDER BY seq DESC LIMIT ?"},
		{&b.rs.pack, "SELECT pack FROM commits WHERE id = ?"},
		{&b.rs.threadExists, threadByID},
		{&b.rs.threadByName, threadByKey},
		{&b.rs.setting, "SELECT value FROM settings WHERE scope = ? AND thread = ? AND key = ?"},
	}
	for _, s := range r {
		st, err := b.r.PrepareContext(ctx, s.sql)
		if err != nil {
			return fmt.Errorf("prepare %q: %w", s.sql, err)
		}
		*s.s = st
		b.stmts = append(b.stmts, st)
	}
	return nil
}
