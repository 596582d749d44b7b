// Package sqlitetest gives a test a new SQLite database file without
// running the migrations for it: a copy of one file migrated once per
// process.
//
// Under the race detector, migrating a new file took 234 ms, copying the
// template and opening the copy 85 ms (6 Dec 2026), and the tests open
// thousands of files a run (docs/decisions/0155-pooled-test-schemas.md).
// The template is a file as Open and Close leave a new one: every
// migration applied, no process registered. Its test checks that a copy,
// once opened, is what a new file is once opened.
//
// Tests of migrations, of opening a file and of files that do not exist
// yet keep making their own.
package sqlitetest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/satchel-dev/satchel/backend/sqlite"
)

// template is the migrated file's bytes, made once per process.
var template = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "satchel-template-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "satchel.db")
	b, err := sqlite.Open(context.Background(), path)
	if err != nil {
		return nil, err
	}
	if err := b.Close(); err != nil {
		return nil, err
	}
	if _, err := os.Stat(path + "-wal"); err == nil {
		return nil, errors.New("the template's write-ahead log was left after Close")
	}
	return os.ReadFile(path)
})

// NewFile returns the path of a copy of the template, named satchel.db,
// in a directory of t's own.
func NewFile(t testing.TB) string {
	t.Helper()
	return NewFileAt(t, filepath.Join(t.TempDir(), "satchel.db"))
}

// NewFileAt writes a copy of the template at path, which must not exist
// yet, and returns path.
func NewFileAt(t testing.TB, path string) string {
	t.Helper()
	data, err := template()
	if err != nil {
		t.Fatal(err)
	}
	// O_EXCL: a copy never overwrites a database a test made.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644) // as SQLite creates a file
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}
