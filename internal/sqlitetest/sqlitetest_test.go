package sqlitetest_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel/backend/sqlite"
	"github.com/satchel-dev/satchel/internal/sqlitetest"
)

// TestTemplateIsFresh: a copy of the template, opened, is what a new file
// is once opened: the same pages, free pages, settings, definitions,
// migrations, rows and AUTOINCREMENT counters, and the same size on disk.
func TestTemplateIsFresh(t *testing.T) {
	fresh := filepath.Join(t.TempDir(), "satchel.db")
	copied := sqlitetest.NewFile(t)
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
