package satchel_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/satchel-dev/satchel"
)

// TestOpenRefusals: a database that cannot be what the user meant is
// refused in the user's words, and nothing is created.
func TestOpenRefusals(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for dsn, want := range map[string]string{
		"mysql://x":        `cannot open "mysql://x": satchel has no mysql backend (a database is a SQLite file path, memory: or a postgres:// URL)`,
		"redis://h:6379/0": `cannot open "redis://h:6379/0": satchel has no redis backend (a database is a SQLite file path, memory: or a postgres:// URL)`,
		dir:                dir + " is a directory, not a database file",
		dir + "/nope/x.db": "cannot create the database " + dir + "/nope/x.db: directory " + dir + "/nope does not exist",
	} {
		_, err := satchel.Open(ctx, dsn)
		if err == nil || err.Error() != want {
			t.Errorf("Open(%q) = %v, want %q", dsn, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "nope")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a refused open created something: %v", err)
	}
	if _, err := os.Stat("mysql:"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open(mysql://x) created a file")
	}
}

// TestOpenReadOnlyStore: ReadOnly opens an existing file without writing
// and refuses writes with ErrReadOnly; a missing file is not created.
func TestOpenReadOnlyStore(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ro.db")
	if _, err := satchel.Open(ctx, path, satchel.ReadOnly()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
	st, err := satchel.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	ws, _ := st.Workspace(ctx, "s", "main")
	if err := ws.Write(ctx, "a.md", "one\n"); err != nil {
		t.Fatal(err)
	}
	st.Close()
	ro, err := satchel.Open(ctx, path, satchel.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	ws, _ = ro.Workspace(ctx, "s", "main")
	if got, err := ws.Read(ctx, "a.md"); err != nil || got != "one\n" {
		t.Errorf("read: %q, %v", got, err)
	}
	if err := ws.Write(ctx, "b.md", "x"); !errors.Is(err, satchel.ErrReadOnly) {
		t.Errorf("a write: %v", err)
	}
}
