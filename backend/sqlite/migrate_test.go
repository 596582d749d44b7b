package sqlite

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/internal/sqlmigrate"
)

// TestMigrateFromVersion2 builds a database with the schema of version 2
// (the (thread_id, seq) index on commits), fills it as that version would
// have, opens it, and checks that migration 0003 kept every commit, every
// head and the AUTOINCREMENT counter: the newest commits had been
// collected, so the next id is past them, not max(id) + 1.
func TestMigrateFromVersion2(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "v2.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied INTEGER NOT NULL)`,
		ms[0].SQL, ms[1].SQL,
		`INSERT INTO schema_migrations VALUES (1, '0001_init.sql', 0), (2, '0002_docs.sql', 0)`,
		`INSERT INTO threads (id, scope, name, created) VALUES (1, 's', 'a', 0), (2, 's', 'b', 0)`,
		// a: seqs 1-3, 2 dropped; b: seqs 1-2; then a deleted thread's
		// three newest commits (ids 6-8), collected.
		`INSERT INTO commits (thread_id, seq, time, dropped_at, scope, root, meta, pack) VALUES
			(1, 1, 10, NULL, 's', x'01', x'', x'aa'),
			(2, 1, 11, NULL, 's', x'02', x'', x'bb'),
			(1, 2, 12, 99,   's', x'03', x'', x'cc'),
			(1, 3, 13, NULL, 's', x'04', x'', x'dd'),
			(2, 2, 14, NULL, 's', x'05', x'', x'ee'),
			(9, 1, 15, 99,   's', x'06', x'', x''),
			(9, 2, 16, 99,   's', x'07', x'', x''),
			(9, 3, 17, 99,   's', x'08', x'', x'')`,
		`DELETE FROM commits WHERE thread_id = 9`,
		`INSERT INTO checkpoints (thread_id, name, seq) VALUES (1, 'c', 3)`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()

	b, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if v, err := b.SchemaVersion(ctx); err != nil || v != len(ms) {
		t.Fatalf("schema version %d, %v; want %d", v, err, len(ms))
	}
	log, err := b.Log(ctx, 1, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 2 || log[0].ID != 4 || log[0].Seq != 3 || log[1].ID != 1 || log[1].Seq != 1 {
		t.Errorf("log of a: %+v, want ids 4 (seq 3) and 1 (seq 1)", log)
	}
	if h, ok, err := b.Head(ctx, 2); err != nil || !ok || h.ID != 5 || h.Seq != 2 || string(h.Root) != "\x05" {
		t.Errorf("head of b: %+v %v %v", h, ok, err)
	}
	if _, err := b.CommitAt(ctx, 1, 2); !errors.Is(err, backend.ErrNoCommit) {
		t.Errorf("dropped commit: %v, want ErrNoCommit", err)
	}
	if p, err := b.Pack(ctx, 3); err != nil || p != "\xcc" {
		t.Errorf("pack of a dropped commit: %q %v", p, err)
	}
	if seq, err := b.CheckpointSeq(ctx, 1, "c"); err != nil || seq != 3 {
		t.Errorf("checkpoint: %d %v", seq, err)
	}
	res, err := b.Append(ctx, []backend.NewCommit{
		{Thread: 1, Seq: 3, Root: []byte{9}},  // stale: a's head is 3
		{Thread: 1, Seq: 4, Root: []byte{10}}, // next
		{Thread: 2, Seq: 3, Root: []byte{11}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(res[0].Err, backend.ErrStale) {
		t.Errorf("append at a taken seq: %v, want ErrStale", res[0].Err)
	}
	if res[1].Err != nil || res[1].Commit.ID != 9 || res[2].Err != nil || res[2].Commit.ID != 10 {
		t.Errorf("appends: %+v; want ids 9 and 10 (8 was given before)", res[1:])
	}
	if c, err := b.CommitAt(ctx, 1, 4); err != nil || c.ID != 9 {
		t.Errorf("new commit: %+v %v", c, err)
	}
}

// contractProbe is a test-only migration set over the real one: an
// expand migration adds a table, the contract one drops a column of it.
func contractProbe(n int) []sqlmigrate.Migration {
	return []sqlmigrate.Migration{
		{Version: n + 1, Name: fmt.Sprintf("%04d_probe.sql", n+1), Kind: sqlmigrate.Expand, SQL: "CREATE TABLE probe (x INTEGER, y INTEGER)"},
		{Version: n + 2, Name: fmt.Sprintf("%04d_probe_drop_y.sql", n+2), Kind: sqlmigrate.Contract, SQL: "-- satchel:contract\nALTER TABLE probe DROP COLUMN y"},
	}
}

// TestContract: with the probe set, an open applies the expand migration
// and leaves the contract one; an older process (the real set) runs on
// it, read-only too; MigrateContract is refused naming it while it is
// open, succeeds once it closed, and the older program is then refused.
func TestContract(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "c.db")
	old, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	real, _ := migrations()
	extraMigrations = contractProbe
	t.Cleanup(func() { extraMigrations = nil })
	b, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if v, err := b.SchemaVersion(ctx); err != nil || v != len(real)+1 {
		t.Fatalf("schema version %d (%v), want %d: the contract migration waits", v, err, len(real)+1)
	}
	if _, err := old.CreateThread(ctx, "s", "old"); err != nil {
		t.Errorf("old process: %v", err)
	}
	extraMigrations = nil
	if ro, err := OpenReadOnly(ctx, path); err != nil {
		t.Errorf("an older program, read-only, on the expanded schema: %v", err)
	} else {
		ro.Close()
	}
	extraMigrations = contractProbe
	err = b.MigrateContract(ctx)
	var e *sqlmigrate.OlderProcessesError
	if !errors.Is(err, backend.ErrOlderProcesses) || !errors.As(err, &e) || len(e.Processes) != 1 || e.Processes[0].Schema != len(real) {
		t.Fatalf("contract while an older process is open: %v", err)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("pid %d on ", os.Getpid())) {
		t.Errorf("refusal does not name the process: %v", err)
	}
	old.Close()
	if err := b.MigrateContract(ctx); err != nil {
		t.Fatalf("contract once the older process closed: %v", err)
	}
	if v, _ := b.SchemaVersion(ctx); v != len(real)+2 {
		t.Errorf("schema version %d after the contract", v)
	}
	extraMigrations = nil
	if o, err := Open(ctx, path); !errors.Is(err, backend.ErrSchemaTooNew) {
		if o != nil {
			o.Close()
		}
		t.Errorf("the older program after the contract: %v", err)
	}
}

// TestMigrationScript: the printed schema, applied to an empty file by
// hand, is a database satchel opens as up to date; a file of version 2
// made before kinds were recorded gets the column and the rest.
func TestMigrationScript(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	all, err := SchemaScript()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "printed.db")
	if s, err := MigrationScript(ctx, p, false); err != nil || s != all {
		t.Errorf("script of a missing file is not the whole schema: %v", err)
	}
	db, err := sql.Open("sqlite", p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, all); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if s, err := MigrationScript(ctx, p, true); err != nil || s != "" {
		t.Errorf("script of the printed database: %q %v", s, err)
	}
	b, err := Open(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	b.Close()

	ms, _ := migrations()
	p = filepath.Join(dir, "v2.db")
	db, _ = sql.Open("sqlite", p)
	for _, q := range []string{
		`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied INTEGER NOT NULL)`,
		ms[0].SQL, ms[1].SQL,
		`INSERT INTO schema_migrations VALUES (1, '0001_init.sql', 0), (2, '0002_docs.sql', 0)`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	s, err := MigrationScript(ctx, p, false)
	if err != nil || !strings.Contains(s, kindSQL) || strings.Contains(s, "0001_init.sql") || !strings.Contains(s, ms[2].Name) {
		t.Fatalf("script of a version 2 file: %v\n%s", err, s)
	}
	if _, err := db.ExecContext(ctx, s); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if s, err := MigrationScript(ctx, p, false); err != nil || s != "" {
		t.Errorf("script after applying it: %q %v", s, err)
	}
}
