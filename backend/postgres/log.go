package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"time"
	"unsafe"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/satchel-dev/satchel/backend"
)

// appendPlain is the compare-and-swap of a NewCommit without Requires or
// Checkpoint (see the package documentation). It always returns one row:
// the new commit's id and time (NULL when nothing was inserted), whether
// the thread exists, the thread's newest seq as this statement saw it,
// the scope's quota row (when it has one), and, when that head is newer
// than the entry's base (a lost race), the head's id, time, root and meta
// (backend.AppendResult.Head).
var appendPlain = `WITH t AS (
	SELECT scope FROM threads WHERE id = $1 FOR KEY SHARE
), ` + quotaCTE("(SELECT scope FROM t)", "$10::bigint", "$9::bigint", "0", "octet_length($5::bytea)") + `, top AS (
	SELECT coalesce(max(seq), 0) AS seq FROM commits WHERE thread_id = $1
), ins AS (
	INSERT INTO commits (thread_id, seq, scope, root, meta, pack, nonce, files, bytes)
	SELECT $1::bigint, $2::bigint, t.scope, $3::bytea, $4::bytea, $5::bytea, $6::bigint, $7::bigint, $8::bigint FROM t, top
	WHERE top.seq = $2::bigint - 1 AND (SELECT ok FROM fits)
		AND ($11::bigint IS NULL OR EXISTS (SELECT 1 FROM commits WHERE thread_id = $1 AND seq = $2::bigint - 1 AND nonce = $11::bigint))
	ON CONFLICT (thread_id, seq) DO NOTHING
	RETURNING id, time
), ` + quotaUpdate("(SELECT scope FROM t)", "$10::bigint", "$9::bigint", "0", "octet_length($5::bytea)") + `
SELECT ins.id, ins.time, EXISTS (SELECT 1 FROM t), (SELECT seq FROM top), true, false, ` + quotaOut + `,
	h.id, h.time, h.root, h.meta, ` + lockFree + `
FROM (SELECT 1) AS one LEFT JOIN ins ON true LEFT JOIN q ON true
LEFT JOIN commits AS h ON ins.id IS NULL AND h.thread_id = $1 AND h.seq = (SELECT seq FROM top)
	AND h.seq >= $2::bigint AND h.dropped_at IS NULL`

// appendFull adds what a fork, a restore or a checkpoint needs: the
// required commit ($6, $7), read FOR SHARE so that a concurrent Drop
// serialises with the append, and the checkpoint name ($8), inserted with
// the commit. If a concurrent SetCheckpoint takes the name between the
// check and the insert, the statement fails on purpose (a division by
// zero, SQLSTATE 22012): that aborts the whole Append, which is retried
// and then sees the name taken.
var appendFull = `WITH t AS (
	SELECT scope FROM threads WHERE id = $1 FOR KEY SHARE
), ` + quotaCTE("(SELECT scope FROM t)", "$13::bigint", "$12::bigint", "0", "octet_length($5::bytea)") + `, top AS (
	SELECT coalesce(max(seq), 0) AS seq FROM commits WHERE thread_id = $1
), req AS (
	SELECT 1 FROM commits
	WHERE $6::bigint IS NOT NULL AND thread_id = $6::bigint AND seq = $7::bigint AND dropped_at IS NULL
	FOR SHARE
), taken AS (
	SELECT 1 FROM checkpoints WHERE $8::text <> '' AND thread_id = $1 AND name = $8::text
), ins AS (
	INSERT INTO commits (thread_id, seq, scope, root, meta, pack, nonce, files, bytes)
	SELECT $1::bigint, $2::bigint, t.scope, $3::bytea, $4::bytea, $5::bytea, $9::bigint, $10::bigint, $11::bigint FROM t, top
	WHERE top.seq = $2::bigint - 1
		AND ($6::bigint IS NULL OR EXISTS (SELECT 1 FROM req))
		AND NOT EXISTS (SELECT 1 FROM taken)
		AND (SELECT ok FROM fits)
		AND ($14::bigint IS NULL OR EXISTS (SELECT 1 FROM commits WHERE thread_id = $1 AND seq = $2::bigint - 1 AND nonce = $14::bigint))
	ON CONFLICT (thread_id, seq) DO NOTHING
	RETURNING id, time
), cp AS (
	INSERT INTO checkpoints (thread_id, name, seq)
	SELECT $1::bigint, $8::text, $2::bigint FROM ins WHERE $8::text <> ''
	ON CONFLICT DO NOTHING
	RETURNING 1
), ` + quotaUpdate("(SELECT scope FROM t)", "$13::bigint", "$12::bigint", "0", "octet_length($5::bytea)") + `
SELECT ins.id, ins.time, EXISTS (SELECT 1 FROM t), (SELECT seq FROM top),
	$6::bigint IS NULL OR EXISTS (SELECT 1 FROM req), EXISTS (SELECT 1 FROM taken), ` + quotaOut + `,
	1 / CASE WHEN ins.id IS NOT NULL AND $8::text <> '' AND NOT EXISTS (SELECT 1 FROM cp) THEN 0 ELSE 1 END,
	` + lockFree + `
FROM (SELECT 1) AS one LEFT JOIN ins ON true LEFT JOIN q ON true`

// maxAppendAttempts bounds the retries of an Append that failed as a
// whole for a transient reason.
const maxAppendAttempts = 8

// Append stores commits, each compare-and-swapped against its thread's
// head, all in one batch: one round trip and one transaction.
//
// Each commit carries a random nonce. When the connection fails after the
// batch was sent, the transaction may or may not have committed; Append
// then sends the same batch again, which is idempotent (a commit that
// landed holds its seq, so the retry inserts nothing), and claims as its
// own every commit whose row at its seq holds its nonce. The caller learns
// the truth even when its context was cancelled in the middle: what landed
// is reported as landed, and nothing lands twice.
func (b *Backend) Append(ctx context.Context, ncs []backend.NewCommit) ([]backend.AppendResult, error) {
	res := make([]backend.AppendResult, len(ncs))
	if len(ncs) == 0 {
		return res, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("postgres: append: %w", err)
	}
	// Send the entries in thread order, keeping the order of each thread's
	// entries, so that concurrent batches take their locks in one order.
	order := make([]int, len(ncs))
	nonces := make([]int64, len(ncs))
	for i := range order {
		order[i] = i
		nonces[i] = rand.Int64()
	}
	sort.SliceStable(order, func(i, j int) bool { return ncs[order[i]].Thread < ncs[order[j]].Thread })

	var err error
	unknown := false // an earlier attempt may have committed
	for attempt := 1; attempt <= maxAppendAttempts || unknown; attempt++ {
		err = b.appendOnce(ctx, ncs, order, nonces, res)
		if err == nil && unknown {
			err = b.claimOwn(ctx, ncs, nonces, res)
		}
		if err == nil {
			break
		}
		switch {
		case outcomeUnknown(err):
			if !unknown {
				// From now on the outcome must be learned, whatever
				// the caller's context says.
				unknown = true
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), resolveTimeout)
				defer cancel()
			}
		case !retryable(err, "22012"):
			return nil, fmt.Errorf("postgres: append: %w", err)
		}
		b.retries.Add(1)
		// Deadlocks and serialization failures: back off a little, at
		// random, so that the contenders do not meet again. A lost
		// connection: keep trying, less and less often, until the server
		// answers or resolveTimeout passes.
		pause := time.Duration(rand.Int64N(int64(attempt) * int64(time.Millisecond)))
		if unknown {
			pause = min(time.Second, 10*time.Millisecond<<min(attempt, 7))
		}
		select {
		case <-ctx.Done():
			if !unknown {
				return nil, fmt.Errorf("postgres: append: %w", ctx.Err())
			}
		case <-time.After(pause):
		}
		if ctx.Err() != nil {
			break // resolveTimeout passed
		}
	}
	if err != nil {
		if unknown {
			return nil, fmt.Errorf("postgres: append: the connection failed before the commit's outcome was known, and it could not be learned: %w", err)
		}
		return nil, fmt.Errorf("postgres: append: %w", err)
	}
	if notifyCommits {
		b.changed("") // after the commit, off the writer's path (changes.go)
	}
	return res, nil
}

// resolveTimeout bounds how long Append keeps trying to learn the outcome
// of a batch whose connection failed (a variable for tests).
var resolveTimeout = 30 * time.Second

// outcomeUnknown reports whether err leaves open whether a batch
// committed: the server did not answer with an error (which rolls the
// implicit transaction back) and pgx cannot tell that nothing was sent.
func outcomeUnknown(err error) bool {
	var pgErr *pgconn.PgError
	return !errors.As(err, &pgErr) && !pgconn.SafeToRetry(err)
}

// claimOwn turns into successes the entries of a batch sent again after a
// lost connection whose commit had landed the first time: the row at
// their seq holds their nonce.
func (b *Backend) claimOwn(ctx context.Context, ncs []backend.NewCommit, nonces []int64, res []backend.AppendResult) error {
	for i := range ncs {
		if res[i].Err == nil {
			continue
		}
		nc := &ncs[i]
		var id int64
		var at time.Time
		err := b.pool.QueryRow(ctx, "SELECT id, time FROM commits WHERE thread_id = $1 AND seq = $2 AND nonce = $3",
			nc.Thread, nc.Seq, nonces[i]).Scan(&id, &at)
		if errors.Is(err, pgx.ErrNoRows) {
			continue
		}
		if err != nil {
			return err
		}
		res[i] = backend.AppendResult{Commit: backend.Commit{
			ID: id, Thread: nc.Thread, Seq: nc.Seq,
			Root: slices.Clone(nc.Root), Meta: slices.Clone(nc.Meta), Time: at.UTC(),
		}}
	}
	return nil
}

func (b *Backend) appendOnce(ctx context.Context, ncs []backend.NewCommit, order []int, nonces []int64, res []backend.AppendResult) error {
	batch := &pgx.Batch{}
	for p := 0; p < len(order); p++ {
		if run := runAt(ncs, order, p); len(run) > 1 {
			queueRun(batch, ncs, run, nonces)
			p += len(run) - 1
			continue
		}
		i := order[p]
		nc := &ncs[i]
		// A chained entry names the entry before it by its nonce: its
		// statement runs after that one's, in the same transaction.
		var parent *int64
		if nc.Chained {
			if !chainable(ncs, i) {
				continue
			}
			parent = &nonces[i-1]
		}
		if k := nc.Key; k != nil {
			var rt, rs *int64
			if r := nc.Requires; r != nil {
				rt, rs = &r.Thread, &r.Seq
			}
			batch.Queue(appendKeyed, nc.Thread, nc.Seq, bytea(nc.Root), bytea(nc.Meta), bytea(nc.Pack), rt, rs, nc.Checkpoint, nonces[i],
				k.Scope, k.Key, bytea(k.Hash), bytea(k.Result), micros(k.TTL), b.nowArg(),
				nc.Files, nc.Bytes, nc.DeltaFiles, nc.DeltaBytes, parent, k.Thread)
			continue
		}
		if nc.Requires == nil && nc.Checkpoint == "" {
			batch.Queue(appendPlain, nc.Thread, nc.Seq, bytea(nc.Root), bytea(nc.Meta), bytea(nc.Pack), nonces[i],
				nc.Files, nc.Bytes, nc.DeltaFiles, nc.DeltaBytes, parent)
			continue
		}
		var rt, rs *int64
		if r := nc.Requires; r != nil {
			rt, rs = &r.Thread, &r.Seq
		}
		batch.Queue(appendFull, nc.Thread, nc.Seq, bytea(nc.Root), bytea(nc.Meta), bytea(nc.Pack), rt, rs, nc.Checkpoint, nonces[i],
			nc.Files, nc.Bytes, nc.DeltaFiles, nc.DeltaBytes, parent)
	}
	br := b.pool.SendBatch(ctx, batch)
	for p := 0; p < len(order); p++ {
		if run := runAt(ncs, order, p); len(run) > 1 {
			if err := scanRun(br, ncs, run, res); err != nil {
				br.Close()
				return err
			}
			p += len(run) - 1
			continue
		}
		i := order[p]
		nc := &ncs[i]
		if nc.Chained && !chainable(ncs, i) {
			res[i] = backend.AppendResult{Err: backend.ErrStale}
			continue
		}
		var (
			id              *int64
			at              *time.Time
			exists          bool
			top             int64
			retained, taken bool
			guard           *int64
			q               quotaRow
			used            bool
			free            bool
		)
		var (
			hid        *int64
			hat        *time.Time
			hroot, hmt []byte
		)
		dest := append([]any{&id, &at, &exists, &top, &retained, &taken}, q.dest()...)
		if nc.Requires != nil || nc.Checkpoint != "" || nc.Key != nil {
			dest = append(dest, &guard)
		} else {
			dest = append(dest, &hid, &hat, &hroot, &hmt)
		}
		if nc.Key != nil {
			dest = append(dest, &used)
		}
		dest = append(dest, &free)
		if err := br.QueryRow().Scan(dest...); err != nil {
			br.Close()
			return err
		}
		r := backend.AppendResult{Contended: !free}
		switch {
		case id != nil:
			r.Commit = backend.Commit{
				ID:     *id,
				Thread: nc.Thread,
				Seq:    nc.Seq,
				Root:   slices.Clone(nc.Root),
				Meta:   slices.Clone(nc.Meta),
				Time:   at.UTC(),
			}
		case !exists:
			r.Err = backend.ErrNoThread
		case top != nc.Seq-1:
			r.Err = backend.ErrStale
			if hid != nil {
				r.Head = backend.Commit{ID: *hid, Thread: nc.Thread, Seq: top, Root: hroot, Meta: hmt, Time: hat.UTC()}
			}
		case !retained:
			r.Err = backend.ErrNotRetained
		case taken:
			r.Err = backend.ErrCheckpointExists
		case used:
			r.Err = backend.ErrKeyUsed
		case !q.fits:
			r.Err = q.refusal(backend.Usage{Files: nc.DeltaFiles, Bytes: nc.DeltaBytes, HistoryBytes: int64(len(nc.Pack))})
		default:
			// The head was right, but a concurrent writer inserted the same
			// seq first (ON CONFLICT DO NOTHING).
			r.Err = backend.ErrStale
		}
		res[i] = r
	}
	// Close waits for the end of the implicit transaction: the results are
	// returned only once the commit is durable.
	return br.Close()
}

// chainable reports whether entry i, marked Chained, follows an entry of
// its thread at Seq-1 (whose outcome its statement then checks).
func chainable(ncs []backend.NewCommit, i int) bool {
	return i > 0 && ncs[i-1].Thread == ncs[i].Thread && ncs[i-1].Seq == ncs[i].Seq-1
}

// bytea makes nil bytes an empty bytea: the columns are NOT NULL, and pgx
// sends a nil slice as NULL.
func bytea(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

const commitCols = "id, seq, time, root, meta"

func scanCommit(row pgx.Row, thread int64) (backend.Commit, error) {
	c := backend.Commit{Thread: thread}
	err := row.Scan(&c.ID, &c.Seq, &c.Time, &c.Root, &c.Meta)
	c.Time = c.Time.UTC()
	return c, err
}

// headSQL reads the head and whether the thread exists, in one round trip:
// one row always, the commit's columns NULL when the thread has none. The
// newest commit is never dropped (but a deleted thread's are), so the head
// is the row with the highest seq. It is found through max(seq), which the
// planner always answers from the end of the (thread_id, seq) index;
// ORDER BY seq DESC LIMIT 1 may be planned as a scan and sort of the whole
// thread while the table's statistics are young.
const headSQL = `SELECT EXISTS (SELECT 1 FROM threads WHERE id = $1), c.id, c.seq, c.time, c.root, c.meta
FROM (SELECT 1) AS one LEFT JOIN commits AS c
	ON c.thread_id = $1 AND c.seq = (SELECT max(seq) FROM commits WHERE thread_id = $1) AND c.dropped_at IS NULL`

// commitAtSQL is headSQL for one seq.
const commitAtSQL = `SELECT EXISTS (SELECT 1 FROM threads WHERE id = $1), c.id, c.seq, c.time, c.root, c.meta
FROM (SELECT 1) AS one LEFT JOIN LATERAL (
	SELECT ` + commitCols + ` FROM commits WHERE thread_id = $1 AND seq = $2 AND dropped_at IS NULL
) AS c ON true`

// checkpointSQL is commitAtSQL for the commit a checkpoint names.
const checkpointSQL = `SELECT EXISTS (SELECT 1 FROM threads WHERE id = $1), c.* FROM (SELECT 1) AS one LEFT JOIN (
	SELECT ` + commitCols + ` FROM commits
	WHERE thread_id = $1 AND dropped_at IS NULL
		AND seq = (SELECT seq FROM checkpoints WHERE thread_id = $1 AND name = $2)
) AS c ON true`

// CheckpointCommit implements backend.CheckpointResolver.
func (b *Backend) CheckpointCommit(ctx context.Context, thread int64, name string) (backend.Commit, error) {
	c, found, exists, err := b.oneCommit(ctx, thread, checkpointSQL, thread, name)
	switch {
	case err != nil:
		return backend.Commit{}, fmt.Errorf("postgres: checkpoint: %w", err)
	case !exists:
		return backend.Commit{}, backend.ErrNoThread
	case !found:
		return backend.Commit{}, backend.ErrNoCheckpoint
	}
	return c, nil
}

// oneCommit runs headSQL or commitAtSQL.
func (b *Backend) oneCommit(ctx context.Context, thread int64, q string, args ...any) (c backend.Commit, found, exists bool, err error) {
	var (
		id, seq    *int64
		at         *time.Time
		root, meta []byte
	)
	if err := b.pool.QueryRow(ctx, q, args...).Scan(&exists, &id, &seq, &at, &root, &meta); err != nil {
		return c, false, false, err
	}
	if id == nil {
		return c, false, exists, nil
	}
	return backend.Commit{ID: *id, Thread: thread, Seq: *seq, Root: root, Meta: meta, Time: at.UTC()}, true, exists, nil
}

// Head returns the newest commit of a thread.
func (b *Backend) Head(ctx context.Context, thread int64) (backend.Commit, bool, error) {
	c, found, exists, err := b.oneCommit(ctx, thread, headSQL, thread)
	switch {
	case err != nil:
		return backend.Commit{}, false, fmt.Errorf("postgres: head: %w", err)
	case !exists:
		return backend.Commit{}, false, backend.ErrNoThread
	}
	return c, found, nil
}

// headPackReadSQL is headSQL with the head's pack unless the head is commit
// $2 or its pack is empty (octet_length does not decompress a stored
// pack).
const headPackReadSQL = `SELECT EXISTS (SELECT 1 FROM threads WHERE id = $1), c.id, c.seq, c.time, c.root, c.meta,
	CASE WHEN c.id <> $2 AND octet_length(c.pack) > 0 THEN c.pack END
FROM (SELECT 1) AS one LEFT JOIN commits AS c
	ON c.thread_id = $1 AND c.seq = (SELECT max(seq) FROM commits WHERE thread_id = $1) AND c.dropped_at IS NULL`

var _ backend.HeadPackReader = (*Backend)(nil)

// HeadPack implements backend.HeadPackReader in one statement.
func (b *Backend) HeadPack(ctx context.Context, thread, known int64) (backend.Commit, bool, string, error) {
	var (
		exists     bool
		id, seq    *int64
		at         *time.Time
		root, meta []byte
		pack       []byte
	)
	err := b.pool.QueryRow(ctx, headPackReadSQL, thread, known).Scan(&exists, &id, &seq, &at, &root, &meta, &pack)
	switch {
	case err != nil:
		return backend.Commit{}, false, "", fmt.Errorf("postgres: head: %w", err)
	case !exists:
		return backend.Commit{}, false, "", backend.ErrNoThread
	case id == nil:
		return backend.Commit{}, false, "", nil
	}
	// pack was allocated for this scan and is referenced nowhere else.
	return backend.Commit{ID: *id, Thread: thread, Seq: *seq, Root: root, Meta: meta, Time: at.UTC()}, true,
		unsafe.String(unsafe.SliceData(pack), len(pack)), nil
}

// CommitAt returns a retained commit by sequence number.
func (b *Backend) CommitAt(ctx context.Context, thread, seq int64) (backend.Commit, error) {
	c, found, exists, err := b.oneCommit(ctx, thread, commitAtSQL, thread, seq)
	switch {
	case err != nil:
		return backend.Commit{}, fmt.Errorf("postgres: commit: %w", err)
	case !exists:
		return backend.Commit{}, backend.ErrNoThread
	case !found:
		return backend.Commit{}, backend.ErrNoCommit
	}
	return c, nil
}

// threadExists tells, after a read found nothing, whether the thread
// exists.
func (b *Backend) threadExists(ctx context.Context, thread int64) (bool, error) {
	var ok bool
	err := b.pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM threads WHERE id = $1)", thread).Scan(&ok)
	return ok, err
}

// Log lists retained commits newest first.
func (b *Backend) Log(ctx context.Context, thread, before int64, limit int) ([]backend.Commit, error) {
	if before <= 0 {
		before = math.MaxInt64
	}
	var lim *int64
	if limit > 0 {
		l := int64(limit)
		lim = &l
	}
	rows, _ := b.pool.Query(ctx, "SELECT "+commitCols+` FROM commits
		WHERE thread_id = $1 AND seq < $2 AND dropped_at IS NULL ORDER BY seq DESC LIMIT $3`, thread, before, lim)
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (backend.Commit, error) { return scanCommit(row, thread) })
	if err != nil {
		return nil, fmt.Errorf("postgres: log: %w", err)
	}
	if len(out) == 0 {
		ok, err := b.threadExists(ctx, thread)
		if err != nil {
			return nil, fmt.Errorf("postgres: log: %w", err)
		}
		if !ok {
			return nil, backend.ErrNoThread
		}
	}
	return out, nil
}

// Pack returns the pack stored with a commit, retained or dropped, until
// garbage collection deletes it.
func (b *Backend) Pack(ctx context.Context, id int64) (string, error) {
	var p []byte
	err := b.pool.QueryRow(ctx, "SELECT pack FROM commits WHERE id = $1", id).Scan(&p)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", backend.ErrNoPack
	}
	if err != nil {
		return "", fmt.Errorf("postgres: pack: %w", err)
	}
	// p was allocated for this scan and is referenced nowhere else.
	return unsafe.String(unsafe.SliceData(p), len(p)), nil
}

// Packs reads many packs in one query (backend.PacksReader). The packs
// are taken in the order of their IDs while their running total stays
// within maxBytes (the first is taken whatever its size); the query sends
// the IDs of the others without their packs, which are not read from
// TOAST (octet_length of a bytea does not read its value).
func (b *Backend) Packs(ctx context.Context, ids []int64, maxBytes int64) (map[int64]string, []int64, error) {
	if len(ids) == 0 {
		return map[int64]string{}, nil, nil
	}
	rows, err := b.pool.Query(ctx, `SELECT id, taken, CASE WHEN taken THEN pack END FROM (
		SELECT id, pack, sum(octet_length(pack)) OVER w <= $2 OR row_number() OVER w = 1 AS taken
		FROM commits WHERE id = ANY($1) WINDOW w AS (ORDER BY id)
	) s`, ids, maxBytes)
	if err != nil {
		return nil, nil, fmt.Errorf("postgres: packs: %w", err)
	}
	packs := make(map[int64]string, len(ids))
	var rest []int64
	var id int64
	var taken bool
	var p []byte
	_, err = pgx.ForEachRow(rows, []any{&id, &taken, &p}, func() error {
		if !taken {
			rest = append(rest, id)
			return nil
		}
		// p is allocated for each row's scan and referenced nowhere else.
		packs[id] = unsafe.String(unsafe.SliceData(p), len(p))
		p = nil
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("postgres: packs: %w", err)
	}
	return packs, rest, nil
}

// SetCheckpoint names a retained commit. The commit is read FOR SHARE, so
// a concurrent Drop of it happens entirely before (ErrNoCommit) or after
// (and deletes the checkpoint).
func (b *Backend) SetCheckpoint(ctx context.Context, thread int64, name string, seq int64) error {
	var exists, retained, inserted bool
	err := b.pool.QueryRow(ctx, `WITH t AS (
		SELECT 1 FROM threads WHERE id = $1 FOR KEY SHARE
	), c AS (
		SELECT 1 FROM commits WHERE thread_id = $1 AND seq = $3 AND dropped_at IS NULL FOR SHARE
	), ins AS (
		INSERT INTO checkpoints (thread_id, name, seq) SELECT $1, $2, $3 FROM t, c
		ON CONFLICT DO NOTHING RETURNING 1
	)
	SELECT EXISTS (SELECT 1 FROM t), EXISTS (SELECT 1 FROM c), EXISTS (SELECT 1 FROM ins)`,
		thread, name, seq).Scan(&exists, &retained, &inserted)
	switch {
	case err != nil:
		return fmt.Errorf("postgres: set checkpoint: %w", err)
	case !exists:
		return backend.ErrNoThread
	case !retained:
		return backend.ErrNoCommit
	case !inserted:
		return backend.ErrCheckpointExists
	}
	return nil
}

// Checkpoints lists a thread's checkpoints, newest commit first, then by
// name.
func (b *Backend) Checkpoints(ctx context.Context, thread int64) ([]backend.Checkpoint, error) {
	rows, _ := b.pool.Query(ctx, "SELECT name, seq FROM checkpoints WHERE thread_id = $1 ORDER BY seq DESC, name", thread)
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (backend.Checkpoint, error) {
		var c backend.Checkpoint
		err := row.Scan(&c.Name, &c.Seq)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: checkpoints: %w", err)
	}
	if len(out) == 0 {
		ok, err := b.threadExists(ctx, thread)
		if err != nil {
			return nil, fmt.Errorf("postgres: checkpoints: %w", err)
		}
		if !ok {
			return nil, backend.ErrNoThread
		}
	}
	return out, nil
}

// CheckpointSeq resolves a checkpoint name.
func (b *Backend) CheckpointSeq(ctx context.Context, thread int64, name string) (int64, error) {
	var seq int64
	err := b.pool.QueryRow(ctx, "SELECT seq FROM checkpoints WHERE thread_id = $1 AND name = $2", thread, name).Scan(&seq)
	if err == nil {
		return seq, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("postgres: checkpoint: %w", err)
	}
	ok, err := b.threadExists(ctx, thread)
	if err != nil {
		return 0, fmt.Errorf("postgres: checkpoint: %w", err)
	}
	if !ok {
		return 0, backend.ErrNoThread
	}
	return 0, backend.ErrNoCheckpoint
}

// AppendConcurrency implements backend.ConcurrentAppender: half the pool's
// connections, at least two, may each carry a batch of commits, leaving
// the other half to the reads (heads, packs) that the mutations waiting
// for those batches make (docs/decisions/0064-concurrent-appends.md).
func (b *Backend) AppendConcurrency() int {
	return max(2, int(b.pool.Config().MaxConns)/2)
}

// Remote implements backend.Remote: every call is a round trip to the
// server, which a chained commit saves.
func (*Backend) Remote() {}
