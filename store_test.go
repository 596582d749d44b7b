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

// TestReadOnlyCollections: documents are read from a database opened for
// reading only, and a set is refused as read-only.
func TestReadOnlyCollections(t *testing.T) {
	ctx := context.Background()
	p, err := satchel.LoadProjectFS(fuzzProject)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "docs.db")
	st, err := satchel.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.Collection(ctx, p, "s1", "s")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Set(ctx, map[string]any{"id": "k", "at": "2026-01-02T03:04:05+02:00"}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	ro, err := satchel.Open(ctx, path, satchel.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	c, err = ro.Collection(ctx, p, "s1", "s")
	if err != nil {
		t.Fatal(err)
	}
	d, err := c.Get(ctx, "k", true)
	if err != nil || string(d.JSON) != `{"at":"2026-01-02T01:04:05Z","id":"k"}` {
		t.Errorf("get: %s, %v", d.JSON, err)
	}
	if pg, err := c.Query(ctx, satchel.QueryRequest{Where: "at > '2026-01-01T00:00:00Z'"}); err != nil || len(pg.Documents) != 1 {
		t.Errorf("query: %+v, %v", pg, err)
	}
	if _, _, err := c.Set(ctx, map[string]any{"id": "k2"}); !errors.Is(err, satchel.ErrReadOnly) {
		t.Errorf("a set: %v", err)
	}
}
