package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// The statements of the hot paths, prepared once per pool (database/sql
// prepares each on a connection the first time it runs there, then reuses
// it). Rarer operations run their SQL directly.

// heads reads, in an Append's transaction, the scope and the newest seq
// (dropped commits included: a dropped commit keeps its seq) of the
// threads whose ids ?1 lists as a JSON array (a thread listed twice comes
// twice; one that does not exist not at all). CROSS JOIN keeps the array
// the outer loop: a look-up by id in threads for each element.
const heads = `SELECT t.id, t.scope, (SELECT coalesce(max(seq), 0) FROM commits WHERE thread_id = t.id)
FROM json_each(?1) j CROSS JOIN threads t ON t.id = j.value`

type writeStmts struct {
	heads            *sql.Stmt
	insertCommit     *sql.Stmt
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
		{&b.ws.heads, heads},
		{&b.ws.insertCommit, "INSERT INTO commits (thread_id, seq, time, scope, root, meta, pack) VALUES (?, ?, ?, ?, ?, ?, ?)"},
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
