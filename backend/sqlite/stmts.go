package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// The statements of the hot paths, prepared once per pool (database/sql
// prepares each on a connection the first time it runs there, then reuses
// it). Rarer operations run their SQL directly.

// heads reads, in an Append's transaction, the scope and newest seq
// (dropped commits included: a dropped commit keeps its seq) of the threads
// whose ids ?1 lists as a JSON array (a thread listed twice comes twice;
// one that does not exist not at all), seq_indexed.upto, and the quota
// row of each thread's scope (NULLs without one). CROSS JOIN
// keeps the array the outer loop: a look-up by id in threads for each
// element, a seek in commit_seq, and a scan of the recent entries of
// commits_recent.
const heads = `SELECT t.id, t.scope, max(
	coalesce((SELECT max(seq) FROM commit_seq s WHERE s.thread_id = t.id), 0),
	coalesce((SELECT seq FROM commits c WHERE c.id > u.upto AND c.thread_id = t.id ORDER BY c.id DESC LIMIT 1), 0)),
	u.upto, ` + quotaCols + `
FROM json_each(?1) j CROSS JOIN threads t ON t.id = j.value CROSS JOIN seq_indexed u
LEFT JOIN scope_quotas q ON q.scope = t.scope`

// connState tells whether the heads an Append remembers are still true:
// data_version changes when another connection (another process) has
// committed, and satchel_conn, a table of the connection's own temporary
// schema, is missing when database/sql has replaced the connection.
const connState = `SELECT data_version, (SELECT count(*) FROM temp.sqlite_master WHERE name = 'satchel_conn')
FROM pragma_data_version()`

// indexCommits writes the commit_seq entries of the commits above upto
// (see migrations/0003_commit_seq.sql), then moves upto past them.
var indexCommits = []string{
	`INSERT INTO commit_seq (thread_id, seq, id)
	SELECT thread_id, seq, id FROM commits WHERE id > (SELECT upto FROM seq_indexed)`,
	`UPDATE seq_indexed SET upto = max(upto, (SELECT coalesce(max(id), 0) FROM commits))`,
}

type writeStmts struct {
	heads            *sql.Stmt
	insertCommit     *sql.Stmt
	connState        *sql.Stmt
	retained         *sql.Stmt
	checkpointExists *sql.Stmt
	insertCheckpoint *sql.Stmt
	putUsage         *sql.Stmt
}

type readStmts struct {
	head         *sql.Stmt
	commitAt     *sql.Stmt
	log          *sql.Stmt
	pack         *sql.Stmt
	packs        *sql.Stmt
	threadExists *sql.Stmt
	threadByName *sql.Stmt
	setting      *sql.Stmt
}

const (
	// commitCols are read from threadCommits: the seq from the view, so
	// that SQLite walks commit_seq in order rather than sorting a thread's
	// history (EXPLAIN QUERY PLAN: MERGE (UNION ALL), no temporary B-tree
	// on its side).
	commitCols    = "c.id, v.seq, c.time, c.root, c.meta"
	threadCommits = " FROM thread_commits v JOIN commits c ON c.id = v.id "
	// headSQL reads the thread's newest commit, the one with the highest
	// id (ids grow with seq): among the recent entries if it has any
	// (commits_recent walked back from its end), else at the end of its
	// commit_seq range; coalesce tries the second only when the first
	// finds nothing. The newest commit is never dropped.
	headSQL = `SELECT c.id, c.seq, c.time, c.root, c.meta FROM commits c WHERE c.id = coalesce(
	(SELECT id FROM commits WHERE id > (SELECT upto FROM seq_indexed) AND thread_id = ?1 ORDER BY id DESC LIMIT 1),
	(SELECT id FROM commit_seq WHERE thread_id = ?1 ORDER BY seq DESC LIMIT 1)) AND c.dropped_at IS NULL`
	retainedSQL = "SELECT 1" + threadCommits + "WHERE v.thread_id = ? AND v.seq = ? AND c.dropped_at IS NULL"
	threadByID  = "SELECT 1 FROM threads WHERE id = ?"
	threadByKey = "SELECT id, created FROM threads WHERE scope = ? AND name = ?"
)

// writeStatements lists the writer's statements with their SQL, to
// prepare on the appender's connection.
func writeStatements(ws *writeStmts) []struct {
	s   **sql.Stmt
	sql string
} {
	return []struct {
		s   **sql.Stmt
		sql string
	}{
		{&ws.heads, heads},
		{&ws.insertCommit, "INSERT INTO commits (thread_id, seq, time, scope, root, meta, pack, files, bytes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"},
		{&ws.connState, connState},
		{&ws.retained, retainedSQL},
		{&ws.checkpointExists, "SELECT 1 FROM checkpoints WHERE thread_id = ? AND name = ?"},
		{&ws.insertCheckpoint, "INSERT INTO checkpoints (thread_id, name, seq) VALUES (?, ?, ?) ON CONFLICT DO NOTHING"},
		{&ws.putUsage, putUsageSQL},
	}
}

func (b *Backend) prepare(ctx context.Context) error {
	r := []struct {
		s   **sql.Stmt
		sql string
	}{
		{&b.rs.head, headSQL},
		{&b.rs.commitAt, "SELECT " + commitCols + threadCommits + "WHERE v.thread_id = ? AND v.seq = ? AND c.dropped_at IS NULL"},
		{&b.rs.log, "SELECT " + commitCols + threadCommits + "WHERE v.thread_id = ? AND v.seq < ? AND c.dropped_at IS NULL ORDER BY v.seq DESC LIMIT ?"},
		{&b.rs.pack, "SELECT pack FROM commits WHERE id = ?"},
		{&b.rs.packs, packsSQL},
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
