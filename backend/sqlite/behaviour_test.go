package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/backendtest"
	"github.com/satchel-dev/satchel/backend/sqlite"
	"github.com/satchel-dev/satchel/satcheltest"
)

func open(t *testing.T) *sqlite.Backend {
	b, err := sqlite.Open(context.Background(), newFile(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// template is a database file as Open and Close leave a new one: every
// migration applied, no process registered. Each suite's test starts
// from a copy of it instead of migrating a file of its own: under the
// race detector migrating took 234 ms a file, copying and opening 85 ms
// (6 Dec 2026), for up to a thousand files a run
// (docs/decisions/0155-pooled-test-schemas.md). TestTemplateIsFresh
// checks that a copy opens as a new file does.
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

// newFile returns the path of a copy of the template in t's directory.
func newFile(t *testing.T) string {
	t.Helper()
	data, err := template()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "satchel.db")
	if err := os.WriteFile(path, data, 0o644); err != nil { // as SQLite creates a file
		t.Fatal(err)
	}
	return path
}

// TestConformance runs the whole suite on SQLite, and again with each of
// its optional capabilities hidden.
func TestConformance(t *testing.T) {
	satcheltest.Run(t, func(t *testing.T) backend.Backend { return open(t) })
}

// TestIndexEvery runs the contract and the behaviours with commit_seq
// written every commit and every second commit: the default (256) leaves
// most of a test's commits in the recent half of thread_commits.
func TestIndexEvery(t *testing.T) {
	for _, k := range []int64{1, 2} {
		open := func(t *testing.T) backend.Backend {
			b, err := sqlite.OpenIndexEvery(context.Background(), newFile(t), k)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { b.Close() })
			return b
		}
		t.Run("k="+strconv.FormatInt(k, 10), func(t *testing.T) {
			backendtest.RunContract(t, open)
			satcheltest.RunBehaviour(t, open)
		})
	}
}

// TestQuotaRaceTwoConnections races writers of two Backends on one file
// (two write connections, as two processes have) to a scope's quotas.
func TestQuotaRaceTwoConnections(t *testing.T) {
	path := filepath.Join(t.TempDir(), "satchel.db")
	var bs [2]*sqlite.Backend
	for i := range bs {
		b, err := sqlite.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		bs[i] = b
	}
	satcheltest.RunQuotaRace(t, bs[0], bs[1])
}

// TestTemplateIsFresh: a copy of the template, opened, is what a new file
// is once opened: the same pages, free pages, settings, definitions,
// migrations, rows and AUTOINCREMENT counters, and the same size on disk.
func TestTemplateIsFresh(t *testing.T) {
	fresh := filepath.Join(t.TempDir(), "satchel.db")
	copied := newFile(t)
	var got [2]string
	for i, path := range []string{fresh, copied} {
		b, err := sqlite.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		size, err := b.DiskSize(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		got[i] = fmt.Sprintf("size %d\n%s", size, describeFile(t, path))
		b.Close()
	}
	if got[0] != got[1] {
		t.Errorf("a new file:\n%s\na copy of the template:\n%s", got[0], got[1])
	}
	if !strings.Contains(got[0], "processes 1") {
		t.Errorf("the description misses the open process's row:\n%s", got[0])
	}
}

// describeFile describes what a file holds, but for the times of its
// rows.
func describeFile(t *testing.T, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var b strings.Builder
	for _, q := range []string{
		"PRAGMA page_count", "PRAGMA freelist_count", "PRAGMA page_size", "PRAGMA auto_vacuum",
		"PRAGMA journal_mode", "PRAGMA user_version", "PRAGMA application_id", "PRAGMA schema_version",
		"SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name",
		"SELECT version, name FROM schema_migrations ORDER BY version",
		"SELECT name, seq FROM sqlite_sequence ORDER BY name",
	} {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintln(&b, append([]any{q}, vals...)...)
		}
		rows.Close()
	}
	rows, err := db.Query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		rows.Scan(&n)
		tables = append(tables, n)
	}
	rows.Close()
	for _, n := range tables {
		var c int
		if err := db.QueryRow(`SELECT count(*) FROM "` + n + `"`).Scan(&c); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintln(&b, n, c)
	}
	return b.String()
}
