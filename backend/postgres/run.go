package postgres

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/satchel-dev/satchel/backend"
)

// A run is a commit of a batch followed by the commits chained to it, one
// after the other, all of one thread and plain (no Key, Requires or
// Checkpoint): the commits that queued behind one in flight (decision
// 0092). Sent as one statement a commit, a run of sixteen cost the server
// about 72 µs a commit; inserted by one statement, 20 (decision 0097).

// appendRun stores a run: $1 the thread, $2 the first commit's seq, $3 to
// $10 the commits' columns as arrays in their order, $11 the nonce of the
// entry the first one is chained to (NULL when it is not). Each commit is
// inserted only if all before it are: the first when the head is at
// $2 - 1, each next one if it fits the scope's quota after those before
// it (the rule of backend.Quota.Add, on running sums). A concurrent writer
// that inserted one of the seqs first would leave a gap in the run (ON
// CONFLICT skips that row only): the statement then fails on purpose (a
// division by zero, SQLSTATE 22012), which aborts the whole Append, and
// Append sends it again, when the run is refused as stale. It returns a
// row a commit, in order: whether it was inserted (its id and time),
// whether the thread exists, the head's seq as the statement saw it,
// whether the commit fit the quota after those before it, the scope's
// quota row, the head when it is newer than the run's base (first row
// only), and the lockFree column.
var appendRun = `WITH t AS (
	SELECT scope FROM threads WHERE id = $1 FOR KEY SHARE
), q AS (
	SELECT * FROM scope_quotas WHERE scope = (SELECT scope FROM t) FOR UPDATE
), top AS (
	SELECT coalesce(max(seq), 0) AS seq FROM commits WHERE thread_id = $1
), e AS (
	SELECT u.*, $2::bigint + u.k - 1 AS seq,
		sum(u.dfiles) OVER w AS cfiles, sum(u.dbytes) OVER w AS cbytes, sum(octet_length(u.pack)) OVER w AS chist
	FROM unnest($3::bytea[], $4::bytea[], $5::bytea[], $6::bigint[], $7::bigint[], $8::bigint[], $9::bigint[], $10::bigint[])
		WITH ORDINALITY AS u(root, meta, pack, nonce, files, bytes, dfiles, dbytes, k)
	WINDOW w AS (ORDER BY u.k)
), fit AS (
	SELECT e.k, NOT EXISTS (SELECT 1 FROM q WHERE ` + strings.Join([]string{
	"(e.dbytes > 0 AND q.max_bytes <> -1 AND q.bytes + e.cbytes > q.max_bytes)",
	"(e.dfiles > 0 AND q.max_files <> -1 AND q.files + e.cfiles > q.max_files)",
	"(octet_length(e.pack) > 0 AND q.max_history_bytes <> -1 AND q.history_bytes + e.chist > q.max_history_bytes)",
}, " OR ") + `) AS ok FROM e
), ok AS (
	SELECT k, bool_and(ok) OVER (ORDER BY k) AS ok FROM fit
), ins AS (
	INSERT INTO commits (thread_id, seq, scope, root, meta, pack, nonce, files, bytes)
	SELECT $1::bigint, e.seq, t.scope, e.root, e.meta, e.pack, e.nonce, e.files, e.bytes
	FROM t, top, e JOIN ok USING (k)
	WHERE top.seq = $2::bigint - 1 AND ok.ok
		AND ($11::bigint IS NULL OR EXISTS (SELECT 1 FROM commits WHERE thread_id = $1 AND seq = $2::bigint - 1 AND nonce = $11::bigint))
	ON CONFLICT (thread_id, seq) DO NOTHING
	RETURNING seq, id, time
), added AS (
	SELECT coalesce(sum(e.dbytes), 0) AS bytes, coalesce(sum(e.dfiles), 0) AS files,
		coalesce(sum(octet_length(e.pack)), 0) AS hist, count(*) AS n
	FROM e JOIN ins USING (seq)
), qu AS (
	UPDATE scope_quotas AS s SET bytes = s.bytes + added.bytes, files = s.files + added.files,
		history_bytes = s.history_bytes + added.hist
	FROM added WHERE s.scope = (SELECT scope FROM t) AND added.n > 0
)
SELECT ins.id, ins.time, EXISTS (SELECT 1 FROM t), (SELECT seq FROM top),
	` + strings.Replace(quotaOut, "(SELECT ok FROM fits)", "fit.ok", 1) + `,
	h.id, h.time, h.root, h.meta, ` + lockFree + `,
	1 / CASE WHEN (SELECT n FROM added) NOT IN (0, (SELECT count(*) FROM ok WHERE ok)) THEN 0 ELSE 1 END
FROM e JOIN fit USING (k) LEFT JOIN ins USING (seq) LEFT JOIN q ON true
LEFT JOIN commits AS h ON e.k = 1 AND ins.id IS NULL AND h.thread_id = $1 AND h.seq = (SELECT seq FROM top)
	AND h.seq >= $2::bigint AND h.dropped_at IS NULL
ORDER BY e.k`

// runsOff sends every commit of a run as a statement of its own (for the
// benchmark that compares both).
var runsOff = false

// plainEntry reports whether nc can go in a run: it carries no Key,
// Requires or Checkpoint.
func plainEntry(nc *backend.NewCommit) bool {
	return nc.Key == nil && nc.Requires == nil && nc.Checkpoint == ""
}

// runAt returns the run that starts at position p of order: the entries
// of ncs chained one to the next from order[p] on, all plain. A run of
// one is sent as a plain entry.
func runAt(ncs []backend.NewCommit, order []int, p int) []int {
	first := order[p]
	if runsOff || !plainEntry(&ncs[first]) || ncs[first].Chained && !chainable(ncs, first) {
		return order[p : p+1]
	}
	n := 1
	for p+n < len(order) {
		i := order[p+n]
		if i != order[p+n-1]+1 || !ncs[i].Chained || !chainable(ncs, i) || !plainEntry(&ncs[i]) {
			break
		}
		n++
	}
	return order[p : p+n]
}

// queueRun queues appendRun for the entries run of ncs.
func queueRun(batch *pgx.Batch, ncs []backend.NewCommit, run []int, nonces []int64) {
	n := len(run)
	roots, metas, packs := make([][]byte, n), make([][]byte, n), make([][]byte, n)
	ids, files, bytes, dfiles, dbytes := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	for k, i := range run {
		nc := &ncs[i]
		roots[k], metas[k], packs[k] = bytea(nc.Root), bytea(nc.Meta), bytea(nc.Pack)
		ids[k], files[k], bytes[k], dfiles[k], dbytes[k] = nonces[i], nc.Files, nc.Bytes, nc.DeltaFiles, nc.DeltaBytes
	}
	first := &ncs[run[0]]
	var parent *int64
	if first.Chained {
		parent = &nonces[run[0]-1]
	}
	batch.Queue(appendRun, first.Thread, first.Seq, roots, metas, packs, ids, files, bytes, dfiles, dbytes, parent)
}

// scanRun reads appendRun's rows into res, one a commit of run.
func scanRun(br pgx.BatchResults, ncs []backend.NewCommit, run []int, res []backend.AppendResult) error {
	rows, err := br.Query()
	if err != nil {
		return err
	}
	defer rows.Close()
	// used is what the commits before the one scanned add to the quota's
	// counters: a refusal is reported against the usage it met.
	var used backend.Usage
	refused := false
	k := 0
	for rows.Next() {
		if k == len(run) {
			return fmt.Errorf("appendRun returned more than %d rows", len(run))
		}
		var (
			id         *int64
			at         *time.Time
			exists     bool
			top        int64
			q          quotaRow
			hid        *int64
			hat        *time.Time
			hroot, hmt []byte
			free       bool
			guard      *int64
		)
		dest := append([]any{&id, &at, &exists, &top}, q.dest()...)
		dest = append(dest, &hid, &hat, &hroot, &hmt, &free, &guard)
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		nc := &ncs[run[k]]
		d := backend.Usage{Files: nc.DeltaFiles, Bytes: nc.DeltaBytes, HistoryBytes: int64(len(nc.Pack))}
		r := backend.AppendResult{Contended: !free}
		switch {
		case id != nil:
			r.Commit = backend.Commit{
				ID: *id, Thread: nc.Thread, Seq: nc.Seq,
				Root: slices.Clone(nc.Root), Meta: slices.Clone(nc.Meta), Time: at.UTC(),
			}
		case !exists:
			r.Err = backend.ErrNoThread
		case k == 0 && top != nc.Seq-1:
			r.Err = backend.ErrStale
			if hid != nil {
				r.Head = backend.Commit{ID: *hid, Thread: nc.Thread, Seq: top, Root: hroot, Meta: hmt, Time: hat.UTC()}
			}
		case !q.fits && !refused && (k == 0 || res[run[k-1]].Err == nil):
			refused = true
			q.fits = false
			for i, u := range used.Fields() {
				if q.v[5+i] != nil {
					*q.v[5+i] += *u
				}
			}
			r.Err = q.refusal(d)
		default:
			// The commit before it was not stored, or a concurrent
			// writer took its seq.
			r.Err = backend.ErrStale
		}
		if r.Err == nil {
			used.Bytes += d.Bytes
			used.Files += d.Files
			used.HistoryBytes += d.HistoryBytes
		}
		res[run[k]] = r
		k++
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if k != len(run) {
		return fmt.Errorf("appendRun returned %d rows for %d commits", k, len(run))
	}
	return nil
}
