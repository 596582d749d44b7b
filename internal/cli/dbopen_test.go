package cli

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/testenv"
)

// TestDatabaseOpening: reads refuse a database that does not exist, writes
// create it and say so once, and a --db that cannot be a database is
// refused in the user's words.
func TestDatabaseOpening(t *testing.T) {
	dir := t.TempDir()
	typo := filepath.Join(dir, "tpyo.db")
	for _, args := range [][]string{{"fs", "ls"}, {"fs", "read", "a.md"}, {"log"}, {"threads"}, {"diff", "0", "head"}} {
		r := mainRun("", append([]string{"--db", typo}, args...)...)
		if want := "no database at " + typo + "; satchel init creates one\n"; r.Code != 1 || r.Err != want {
			t.Errorf("%q on a missing database: exit %d, stderr %q, want %q", args, r.Code, r.Err, want)
		}
	}
	if _, err := os.Stat(typo); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a read created %s", typo)
	}

	db := filepath.Join(dir, "new.db")
	r := mainRun("one\n", "--db", db, "fs", "write", "a.md")
	if r.Code != 0 || r.Err != "created database "+db+"\n" {
		t.Errorf("first write: exit %d, stderr %q", r.Code, r.Err)
	}
	r = mainRun("two\n", "--db", db, "fs", "write", "b.md")
	if r.Code != 0 || r.Err != "" {
		t.Errorf("second write: exit %d, stderr %q", r.Code, r.Err)
	}
	if r := mainRun("", "--db", db, "fs", "ls"); r.Code != 0 || r.Out != "a.md\nb.md\n" {
		t.Errorf("ls: %+v", r)
	}

	for dsn, want := range map[string]string{
		"mysql://x":                       `cannot open "mysql://x": satchel has no mysql backend (a database is a SQLite file path, memory: or a postgres:// URL)`,
		dir:                               dir + " is a directory, not a database file",
		filepath.Join(dir, "no/x.db"):     "cannot create the database " + filepath.Join(dir, "no/x.db") + ": directory " + filepath.Join(dir, "no") + " does not exist",
		"file:" + filepath.Join(dir, "x"): "no database at " + filepath.Join(dir, "x") + "; satchel init creates one",
	} {
		args := []string{"--db", dsn, "fs", "write", "a.md", "x"}
		if dsn == "file:"+filepath.Join(dir, "x") {
			args = []string{"--db", dsn, "fs", "read", "a.md"}
		}
		if r := mainRun("", args...); r.Code != 1 || r.Err != want+"\n" {
			t.Errorf("--db %s: exit %d, stderr %q, want %q", dsn, r.Code, r.Err, want)
		}
	}
}

// TestReadOnlyDatabase: on a read-only mount every read command is served
// and nothing is left beside the file; a write says the database is
// read-only.
func TestReadOnlyDatabase(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", dir).CombinedOutput(); err != nil {
		testenv.Skip(t, "cannot mount a tmpfs (needs root): %v %s", err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
	db := filepath.Join(dir, "ro.db")
	for _, args := range [][]string{{"fs", "write", "a.md", "one\n"}, {"checkpoint", "v1"}, {"fs", "write", "a.md", "two\n"}} {
		if r := mainRun("", append([]string{"--db", db}, args...)...); r.Code != 0 {
			t.Fatalf("%q: %+v", args, r)
		}
	}
	if out, err := exec.Command("mount", "-o", "remount,ro", dir).CombinedOutput(); err != nil {
		t.Fatalf("remount ro: %v %s", err, out)
	}
	for _, c := range []struct {
		args []string
		out  string
	}{
		{[]string{"fs", "read", "a.md"}, "two\n"},
		{[]string{"fs", "read", "a.md", "--at", "v1"}, "one\n"},
		{[]string{"fs", "ls"}, "a.md\n"},
		{[]string{"fs", "glob", "*.md"}, "a.md\n"},
		{[]string{"fs", "grep", "two"}, "a.md:1:two\n"},
		{[]string{"fs", "exists", "a.md"}, "true\n"},
		{[]string{"threads"}, "main\n"},
		{[]string{"diff", "v1", "2"}, "changed\ta.md\n"},
	} {
		r := mainRun("", append([]string{"--db", db}, c.args...)...)
		if r.Code != 0 || r.Out != c.out || r.Err != "" {
			t.Errorf("%q on a read-only mount: %+v, want %q", c.args, r, c.out)
		}
	}
	if r := mainRun("", "--db", db, "log"); r.Code != 0 || r.Err != "" {
		t.Errorf("log: %+v", r)
	}
	want := "the database " + db + " is read-only: it can be read, not written\n"
	for _, args := range [][]string{{"fs", "write", "b.md", "x"}, {"checkpoint", "v2"}, {"restore", "v1"}} {
		if r := mainRun("", append([]string{"--db", db}, args...)...); r.Code != 1 || r.Err != want {
			t.Errorf("%q: exit %d, stderr %q, want %q", args, r.Code, r.Err, want)
		}
	}
	for _, s := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(db + s); err == nil {
			t.Errorf("%s left beside the database", s)
		}
	}
}

// TestProjectNamesItsDatabase: init DIR writes DIR/satchel.json naming the
// database it made, and a command given --dir DIR uses it.
func TestProjectNamesItsDatabase(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "proj")
	if r := mainRun("", "init", dir); r.Code != 0 {
		t.Fatalf("init: %+v", r)
	}
	b, err := os.ReadFile(filepath.Join(dir, ProjectFileName))
	if err != nil || string(b) != "{\n  \"db\": \"satchel.db\"\n}\n" {
		t.Fatalf("project file: %q, %v", b, err)
	}
	in, err := os.Open(filepath.Join("testdata", "requests.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var out, errb bytes.Buffer
	if code := Main([]string{"serve", "--dir", dir}, in, &out, &errb); code != 0 {
		t.Fatalf("serve --dir: exit %d, %s", code, errb.String())
	}
	st, err := satchel.Open(context.Background(), filepath.Join(dir, "satchel.db"), satchel.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ws, _ := st.Workspace(context.Background(), "default", "main")
	if got, err := ws.Read(context.Background(), "a.md"); err != nil || got != "piped\n" {
		t.Errorf("the project's database has a.md = %q, %v", got, err)
	}
	if _, err := os.Stat("satchel.db"); err == nil {
		t.Errorf("serve --dir made ./satchel.db")
	}
}
