package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/satchel-dev/satchel/backend"
)

// TestRunLosesWhole races a run of chained commits with a writer that
// takes its first seq in a transaction still open when the run's
// statement starts: the run's insert of that seq waits, then skips it
// when the writer commits (ON CONFLICT DO NOTHING), while the next seqs
// are free. The run must not store those on the other writer's commit:
// every entry is refused as stale, and the thread holds the writer's
// commit alone.
func TestRunLosesWhole(t *testing.T) {
	b := openTest(t)
	ctx := t.Context()
	th, err := b.CreateThread(ctx, "race", "main")
	if err != nil {
		t.Fatal(err)
	}
	if res, err := b.Append(ctx, []backend.NewCommit{packNC(th.ID, 1, smallPack)}); err != nil || res[0].Err != nil {
		t.Fatal(err, res)
	}
	commit := openRival(t, b, `INSERT INTO commits (thread_id, seq, scope, root, meta, pack, nonce, files, bytes)
		VALUES ($1, 2, 'race', 'r', 'm', 'p', 7, 0, 0)`, th.ID)

	run := make([]backend.NewCommit, 3)
	for i := range run {
		run[i] = packNC(th.ID, int64(2+i), smallPack)
		run[i].Chained = i > 0
	}
	type outcome struct {
		res []backend.AppendResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := b.Append(ctx, run)
		done <- outcome{res, err}
	}()
	// The run's statement waits for the open transaction's row.
	awaitArraysWaiting(t, b, "the run")
	commit()
	o := <-done
	if o.err != nil {
		t.Fatal(o.err)
	}
	for i, r := range o.res {
		if !errors.Is(r.Err, backend.ErrStale) {
			t.Errorf("entry %d (seq %d): %v, want ErrStale", i, run[i].Seq, r.Err)
		}
	}
	head, _, err := b.Head(ctx, th.ID)
	if err != nil {
		t.Fatal(err)
	}
	if head.Seq != 2 || string(head.Root) != "r" {
		t.Fatalf("head seq %d root %q, want the other writer's commit at seq 2", head.Seq, head.Root)
	}
}

// openRival runs sql in a transaction of another session, left open: the
// test's statement then races a writer that has not committed yet. The
// returned func commits it.
func openRival(t *testing.T, b *Backend, sql string, args ...any) (commit func()) {
	t.Helper()
	ctx := t.Context()
	other, err := pgx.ConnectConfig(ctx, b.pool.Config().ConnConfig.Copy())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close(context.Background()) })
	tx, err := other.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, sql, args...); err != nil {
		t.Fatal(err)
	}
	return func() {
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// awaitArraysWaiting waits until a statement that unnests arrays (a run of
// commits, a batch of new documents) waits for a lock: the rival's.
func awaitArraysWaiting(t *testing.T, b *Backend, what string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; {
		var waiting bool
		if err := b.pool.QueryRow(t.Context(), `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%unnest%')`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never waited for the other writer", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
