package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel/backend/postgres/postgrestest"
	"github.com/satchel-dev/satchel/internal/testenv"
)

// TestBackupRestore backs a SQLite database up and restores it twice: as
// a file copy to a new SQLite path, and through an export into a memory
// database; a second restore into a database that is not empty is
// refused.
func TestBackupRestore(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "live.db")
	mainOK(t, "\x00bin\xff", "--db", db, "fs", "write", "b.bin")
	mainOK(t, "", "--db", db, "checkpoint", "c1")
	mainOK(t, "", "--db", db, "fs", "write", "notes.md", "# n")
	bk := filepath.Join(dir, "backup.db")
	if out := mainOK(t, "", "--db", db, "backup", bk); out != "backed up to "+bk+" (sqlite)\n" {
		t.Errorf("backup printed %q", out)
	}
	if fi, err := os.Stat(bk); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("backup %v %v, want 0600", fi, err)
	}
	if code, _, errs := runMain(t, "", "--db", db, "backup", bk); code != 1 || !strings.Contains(errs, "exists") {
		t.Errorf("backup over a file: %d %q", code, errs)
	}

	restored := filepath.Join(dir, "restored.db")
	mainOK(t, "", "--db", restored, "restore-backup", bk)
	if got := mainOK(t, "", "--db", restored, "fs", "read", "b.bin", "--at", "c1"); got != "\x00bin\xff" {
		t.Errorf("restored b.bin: %q", got)
	}
	// Into a SQLite database that exists, through an export; not twice.
	other := filepath.Join(dir, "other.db")
	mainOK(t, "", "--db", other, "migrate") // an empty database
	out := mainOK(t, "", "--db", other, "restore-backup", bk)
	if !strings.Contains(out, "restored 1 threads, 2 commits") {
		t.Errorf("restore through an export printed %q", out)
	}
	if la, lb := mainOK(t, "", "--db", restored, "fs", "ls"), mainOK(t, "", "--db", other, "fs", "ls"); la != lb || la != "b.bin\nnotes.md\n" {
		t.Errorf("restored files %q and %q", la, lb)
	}
	if code, _, errs := runMain(t, "", "--db", other, "restore-backup", bk); code != 1 || !strings.Contains(errs, "the database is not empty") {
		t.Errorf("restore into a full database: %d %q", code, errs)
	}
}

// TestBackupPostgres: on PostgreSQL a backup is an export, which
// restore-backup loads into an empty SQLite database.
func TestBackupPostgres(t *testing.T) {
	url := testenv.PostgresURL(t)
	pg := postgrestest.Schema(t, url, postgrestest.Name("satchel_cli_backup"))
	mainOK(t, "hello", "--db", pg, "fs", "write", "a.txt")
	mainOK(t, "", "--db", pg, "checkpoint", "one")
	dir := t.TempDir()
	bk := filepath.Join(dir, "pg.satchel")
	if out := mainOK(t, "", "--db", pg, "backup", bk); out != "backed up to "+bk+" (export)\n" {
		t.Errorf("backup printed %q", out)
	}
	restored := filepath.Join(dir, "r.db")
	mainOK(t, "", "--db", restored, "restore-backup", bk)
	if got := mainOK(t, "", "--db", restored, "fs", "read", "a.txt", "--at", "one"); got != "hello" {
		t.Errorf("restored a.txt: %q", got)
	}
}
