package cli

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

// TestCheckStorage: check --storage exits 0 on sound storage, and on a
// damaged one prints each fault and exits 1; --scope limits it.
func TestCheckStorage(t *testing.T) {
	db := filepath.Join(t.TempDir(), "c.db")
	for _, args := range [][]string{
		{"--scope", "acme", "fs", "write", "a.md", "alpha"},
		{"--scope", "acme", "checkpoint", "v1"},
		{"--scope", "acme", "fs", "write", "b.md", "beta"},
		{"--scope", "other", "fs", "write", "c.md", "gamma"},
	} {
		if r := mainRun("", append([]string{"--db", db}, args...)...); r.Code != 0 {
			t.Fatalf("%q: exit %d, %s", args, r.Code, r.Err)
		}
	}
	r := mainRun("", "--db", db, "check", "--storage")
	if r.Code != 0 || r.Out != "checked 2 threads, 3 commits, 6 objects: 0 faults\n" {
		t.Errorf("sound storage: exit %d, stdout %q, stderr %q", r.Code, r.Out, r.Err)
	}
	sdb, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	_, err = sdb.Exec("UPDATE checkpoints SET seq = 99")
	sdb.Close()
	if err != nil {
		t.Fatal(err)
	}
	r = mainRun("", "--db", db, "check", "--storage")
	want := "acme/main: checkpoint v1: names commit 99, which is not retained\nchecked 2 threads, 3 commits, 6 objects: 1 faults\n"
	if r.Code != 1 || r.Out != want || r.Err != "storage check: 1 faults\n" {
		t.Errorf("a damaged checkpoint: exit %d, stdout %q, stderr %q; want exit 1, stdout %q", r.Code, r.Out, r.Err, want)
	}
	r = mainRun("", "--db", db, "--scope", "other", "check", "--storage", "--json")
	if r.Code != 0 || !strings.Contains(r.Out, `"threads":1,"commits":1`) || !strings.Contains(r.Out, `"faults":[]`) {
		t.Errorf("--scope other: exit %d, stdout %q, stderr %q", r.Code, r.Out, r.Err)
	}
}
