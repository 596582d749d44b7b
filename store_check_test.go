package satchel_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/memory"
	"github.com/satchel-dev/satchel/backend/postgres/postgrestest"
	"github.com/satchel-dev/satchel/internal/sqlitetest"
	"github.com/satchel-dev/satchel/internal/testenv"
)

// A corruption of a database, the SQL that makes it, and the fault Check
// must name for it.
type corruption struct {
	name    string
	sql     string // {blob}: a literal of two bytes that are no pack; {now}: a time
	seq     int64  // the commit the fault is in (0: the thread)
	object  string // a prefix of the fault's object
	problem string // a part of the fault's problem
}

var corruptions = []corruption{
	{"missing pack", "DELETE FROM commits WHERE seq = 1", 2, "file a.md, chunk", "its pack is missing"},
	{"pack that does not decode", "UPDATE commits SET pack = {blob} WHERE seq = 2", 2, "node ", "has no header"},
	{"checkpoint of no retained commit", "UPDATE checkpoints SET seq = 99", 0, "checkpoint v1", "names commit 99, which is not retained"},
	{"head that is not the newest commit", "UPDATE commits SET dropped_at = {now} WHERE seq = 2", 0, "head", "missing, but commit 1 is retained"},
}

// seedCheck writes what the corruptions damage: a.md (commit 1, named
// v1), then b.md (commit 2, whose tree still reaches a.md's chunk in
// commit 1's pack).
func seedCheck(t *testing.T, st *satchel.Store) {
	t.Helper()
	ctx := context.Background()
	ws, err := st.Workspace(ctx, "acme", "main")
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.Write(ctx, "a.md", "alpha\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Checkpoint(ctx, "v1"); err != nil {
		t.Fatal(err)
	}
	if err := ws.Write(ctx, "b.md", "beta\n"); err != nil {
		t.Fatal(err)
	}
}

// wantFault checks that rep names the fault c describes, in acme/main.
func wantFault(t *testing.T, rep satchel.CheckReport, c corruption) {
	t.Helper()
	for _, f := range rep.Faults {
		if f.Scope == "acme" && f.Thread == "main" && f.Seq == c.seq && strings.HasPrefix(f.Object, c.object) && strings.Contains(f.Problem, c.problem) {
			return
		}
	}
	t.Errorf("%s: no fault at commit %d, object %q, problem %q; faults: %q", c.name, c.seq, c.object, c.problem, rep.Faults)
}

func check(t *testing.T, st *satchel.Store) satchel.CheckReport {
	t.Helper()
	rep, err := st.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestCheckSQLite(t *testing.T) {
	ctx := context.Background()
	for _, c := range append([]corruption{{name: "none"}}, corruptions...) {
		t.Run(c.name, func(t *testing.T) {
			path := sqlitetest.NewFileAt(t, filepath.Join(t.TempDir(), "check.db"))
			st, err := satchel.Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			seedCheck(t, st)
			if rep := check(t, st); len(rep.Faults) != 0 || rep.Commits != 2 || rep.Threads != 1 {
				t.Fatalf("before the corruption: %+v", rep)
			}
			st.Close()
			if c.sql == "" {
				return
			}
			db, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec(strings.NewReplacer("{blob}", "X'0102'", "{now}", "1").Replace(c.sql)); err != nil {
				t.Fatal(err)
			}
			db.Close()
			st, err = satchel.Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			wantFault(t, check(t, st), c)
		})
	}
}

func TestCheckPostgres(t *testing.T) {
	url := testenv.PostgresURL(t)
	ctx := context.Background()
	for _, c := range append([]corruption{{name: "none"}}, corruptions...) {
		t.Run(c.name, func(t *testing.T) {
			schema := postgrestest.Name("satchel_check")
			b, u := postgrestest.OpenAt(t, url, schema)
			st := satchel.New(b)
			seedCheck(t, st)
			if rep := check(t, st); len(rep.Faults) != 0 || rep.Commits != 2 {
				t.Fatalf("before the corruption: %+v", rep)
			}
			st.Close()
			if c.sql == "" {
				return
			}
			conn, err := pgx.Connect(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			_, err = conn.Exec(ctx, "SET search_path TO "+pgx.Identifier{schema}.Sanitize())
			if err == nil {
				_, err = conn.Exec(ctx, strings.NewReplacer("{blob}", `'\x0102'::bytea`, "{now}", "now()").Replace(c.sql))
			}
			conn.Close(ctx)
			if err != nil {
				t.Fatal(err)
			}
			st, err = satchel.Open(ctx, u)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			wantFault(t, check(t, st), c)
		})
	}
}

// skewed is a backend whose collector's view of the retained commits
// differs from its logs: one commit more (drop < 0) or one fewer.
type skewed struct {
	backend.Backend
	drop bool
}

func (b skewed) GCSnapshot(ctx context.Context, scope string, cutoff time.Time) (backend.GCSnapshot, error) {
	gs, err := b.Backend.GCSnapshot(ctx, scope, cutoff)
	if err != nil || len(gs.Retained) == 0 {
		return gs, err
	}
	if b.drop {
		gs.Retained = gs.Retained[1:]
	} else {
		extra := gs.Retained[0]
		extra.ID, extra.Seq = 1000, 7
		gs.Retained = append(gs.Retained, extra)
	}
	return gs, nil
}

// TestCheckCollectorView: a retained commit that no log reaches, and a
// logged commit the collector would not keep, are faults.
func TestCheckCollectorView(t *testing.T) {
	for _, c := range []struct {
		drop    bool
		seq     int64
		problem string
	}{
		{false, 7, "is retained, but no thread's log reaches it"},
		{true, 1, "is in the log, but a collection would not keep what it reaches"},
	} {
		st := satchel.New(skewed{Backend: memory.New(), drop: c.drop})
		seedCheck(t, st)
		wantFault(t, check(t, st), corruption{name: c.problem, seq: c.seq, object: "commit ", problem: c.problem})
		st.Close()
	}
}

// TestCheckSoundAfterEveryKindOfChange: appends, edits, moves, deletes,
// large files cut in many chunks, checkpoints, forks, restores and a
// collection leave storage the check finds sound, on memory and SQLite.
func TestCheckSoundAfterEveryKindOfChange(t *testing.T) {
	ctx := context.Background()
	for _, dsn := range []string{"memory:", filepath.Join(t.TempDir(), "sound.db")} {
		st, err := satchel.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		ws, _ := st.Workspace(ctx, "acme", "main")
		big := strings.Repeat("0123456789 the quick brown fox\n", 20000) // ~600 KiB: a chunk list
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		for i := range 60 {
			must(ws.Write(ctx, fmt.Sprintf("d%d/f%03d.md", i%6, i), strings.Repeat("line é \"q\"\n", i)))
		}
		must(ws.Write(ctx, "big.txt", big))
		must(ws.Append(ctx, "big.txt", "one more\n"))
		_, err = ws.StrReplace(ctx, "big.txt", "one more", "one more, edited", false)
		must(err)
		must(ws.Append(ctx, "d0/f000.md", "no newline"))
		must(ws.Move(ctx, "d1/f001.md", "moved/f001.md"))
		must(ws.Delete(ctx, "d2/f002.md"))
		_, err = ws.Checkpoint(ctx, "v1")
		must(err)
		_, err = ws.Fork(ctx, "v1", "fork")
		must(err)
		must(ws.Write(ctx, "after.md", "after\n"))
		_, err = ws.Restore(ctx, "v1")
		must(err)
		rep := check(t, st)
		if len(rep.Faults) != 0 || rep.Threads != 2 || rep.Commits != 69 {
			t.Errorf("%s: %+v", dsn, rep)
		}
		st.Close()
	}
}

// racing is a backend on which a writer commits between the check's read
// of the logs and its read of what a collection keeps.
type racing struct {
	backend.Backend
	write func()
}

func (b racing) GCSnapshot(ctx context.Context, scope string, cutoff time.Time) (backend.GCSnapshot, error) {
	b.write()
	return b.Backend.GCSnapshot(ctx, scope, cutoff)
}

// TestCheckWhileWriting: a commit that lands during a check is no fault.
func TestCheckWhileWriting(t *testing.T) {
	ctx := context.Background()
	mb := memory.New()
	writer := satchel.New(mb)
	defer writer.Close()
	seedCheck(t, writer)
	ws, err := writer.Workspace(ctx, "acme", "main")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	st := satchel.New(racing{Backend: mb, write: func() {
		n++
		if err := ws.Write(ctx, fmt.Sprintf("during-%d.md", n), "written during the check\n"); err != nil {
			t.Error(err)
		}
	}})
	rep := check(t, st)
	if n == 0 || len(rep.Faults) != 0 {
		t.Fatalf("%d writes during the check; faults %v", n, rep.Faults)
	}
}
