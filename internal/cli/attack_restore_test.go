package cli

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/satchel-dev/satchel/backend/sqlite" // the "sqlite" driver
)

// corruptTable overwrites the header of the root page of table in the
// SQLite file at path, as a bad disk would.
func corruptTable(t *testing.T, path, table string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	var root, pageSize int64
	if err := db.QueryRow("SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = ?", table).Scan(&root); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow("PRAGMA page_size").Scan(&pageSize); err != nil {
		t.Fatal(err)
	}
	db.Close()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte(strings.Repeat("\xee", 64)), (root-1)*pageSize); err != nil {
		t.Fatal(err)
	}
}

// restoreRefused checks that restoring bk into a new SQLite path and into
// an empty database is refused with want, and leaves nothing.
func restoreRefused(t *testing.T, bk, want string) {
	t.Helper()
	dir := t.TempDir()
	target := filepath.Join(dir, "restored.db")
	code, out, errs := runMain(t, "", "--db", target, "restore-backup", bk)
	if code != 1 || !strings.Contains(errs, "restore refused: "+bk+": "+want) {
		t.Errorf("restore-backup to a new file: exit %d, out %q, err %q; want %q", code, out, errs, want)
	}
	if _, err := os.Stat(target); err == nil {
		t.Errorf("a refused restore left %s", target)
	}
	empty := filepath.Join(dir, "empty.db")
	mainOK(t, "", "--db", empty, "migrate")
	code, out, errs = runMain(t, "", "--db", empty, "restore-backup", bk)
	if code != 1 || !strings.Contains(errs, "restore refused: "+bk+": "+want) {
		t.Errorf("restore-backup into an empty database: exit %d, out %q, err %q; want %q", code, out, errs, want)
	}
}

// A corrupted satchel database used to be "restored": its integrity
// check is run first, and the restore refused naming its first problem.
func TestAttackRestoreBackupCorrupt(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "live.db")
	for i := range 20 {
		mainOK(t, strings.Repeat("x", 3000), "--db", db, "fs", "write", "f"+strings.Repeat("a", i)+".txt")
	}
	bk := filepath.Join(dir, "backup.db")
	mainOK(t, "", "--db", db, "backup", bk)
	corruptTable(t, bk, "commits")
	restoreRefused(t, bk, "integrity check failed: ")
}

// An unrelated SQLite file used to be "restored" (and given satchel's
// tables): its schema must be satchel's.
func TestAttackRestoreBackupUnrelated(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "other.db")
	db, err := sql.Open("sqlite", other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE people (name TEXT); INSERT INTO people VALUES ('ann')"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	restoreRefused(t, other, "not a satchel database: it has no schema_migrations table")
	// A file whose schema_migrations is another program's.
	db, _ = sql.Open("sqlite", other)
	if _, err := db.Exec("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied INTEGER NOT NULL); INSERT INTO schema_migrations VALUES (1, '0001_people.sql', 0)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	restoreRefused(t, other, "not this satchel's schema: the database's migration 1 is 0001_people.sql")
}

// A sound backup is restored and its storage checked.
func TestRestoreBackupChecksStorage(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "live.db")
	mainOK(t, "x", "--db", db, "fs", "write", "a.txt")
	bk := filepath.Join(dir, "backup.db")
	mainOK(t, "", "--db", db, "backup", bk)
	out := mainOK(t, "", "--db", filepath.Join(dir, "r.db"), "restore-backup", bk)
	if !strings.Contains(out, "check --storage: 1 threads, 1 commits, ") || !strings.HasSuffix(out, ": 0 faults\n") {
		t.Errorf("restore printed %q", out)
	}
	empty := filepath.Join(dir, "empty.db")
	mainOK(t, "", "--db", empty, "migrate")
	out = mainOK(t, "", "--db", empty, "restore-backup", bk, "--json")
	if !strings.Contains(out, `"check":{"threads":1,"commits":1,`) {
		t.Errorf("restore --json printed %q", out)
	}
}
