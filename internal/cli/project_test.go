package cli

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/satchel-dev/satchel"
)

func TestProjectDB(t *testing.T) {
	dir := t.TempDir()
	if _, found, err := ProjectDB(dir); found || err != nil {
		t.Fatalf("no project file: found %v, err %v", found, err)
	}
	for _, tc := range []struct{ content, want string }{
		{`{"db": "satchel.db"}`, filepath.Join(dir, "satchel.db")},
		{`{"db": "data/x.db"}`, filepath.Join(dir, "data", "x.db")},
		{`{"db": "file:x.db"}`, "file:" + filepath.Join(dir, "x.db")},
		{`{"db": "/var/lib/satchel.db"}`, "/var/lib/satchel.db"},
		{`{"db": "memory:"}`, "memory:"},
		{`{"db": "postgres://u@h/db"}`, "postgres://u@h/db"},
	} {
		if err := os.WriteFile(filepath.Join(dir, ProjectFileName), []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		got, found, err := ProjectDB(dir)
		if err != nil || !found || got != tc.want {
			t.Errorf("%s: ProjectDB = %q, %v, %v; want %q", tc.content, got, found, err, tc.want)
		}
	}
	for _, bad := range []string{`{"database": "x.db"}`, `{"db": ""}`, `[]`, `{"db": "a"} {}`, `not json`} {
		if err := os.WriteFile(filepath.Join(dir, ProjectFileName), []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, err := ProjectDB(dir)
		if !errors.Is(err, satchel.ErrInvalidArgument) {
			t.Errorf("%s: ProjectDB error %v, want a refusal", bad, err)
		}
	}
}

func TestProjectDBEntry(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ db, want string }{
		{filepath.Join(dir, "satchel.db"), "satchel.db"},
		{filepath.Join(dir, "data", "x.db"), "data/x.db"},
		{"/elsewhere/x.db", "/elsewhere/x.db"},
		{"memory:", "memory:"},
		{"postgres://u@h/db", "postgres://u@h/db"},
	} {
		if got := projectDBEntry(dir, tc.db); got != tc.want {
			t.Errorf("projectDBEntry(%q) = %q, want %q", tc.db, got, tc.want)
		}
		// What init writes, ProjectDB reads back as the same database.
		if got := resolveDB(dir, projectDBEntry(dir, tc.db)); got != tc.db {
			t.Errorf("round trip of %q gave %q", tc.db, got)
		}
	}
}

func FuzzParseProjectFile(f *testing.F) {
	for _, s := range []string{`{"db": "satchel.db"}`, `{"db": ""}`, `{}`, `{"x": 1}`, `null`, `{"db": "a"}{}`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		pf, err := parseProjectFile(b)
		if err == nil && pf.DB == "" {
			t.Errorf("%q: accepted with no db", b)
		}
	})
}

// TestProjectFoundFromASubdirectory: a command run in a subdirectory of
// a project uses the database its satchel.json names (relative to the
// directory of satchel.json), as git finds .git, and makes no stray
// ./satchel.db.
func TestProjectFoundFromASubdirectory(t *testing.T) {
	t.Setenv("SATCHEL_DB", "")
	proj := filepath.Join(t.TempDir(), "proj")
	if r := mainRun("", "init", proj); r.Code != 0 {
		t.Fatalf("init: %+v", r)
	}
	sub := filepath.Join(proj, "notes", "deep")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(sub)
	if r := mainRun("", "fs", "write", "from-sub.md", "x"); r.Code != 0 || r.Err != "" {
		t.Fatalf("fs write in a subdirectory: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(sub, "satchel.db")); err == nil {
		t.Errorf("a subdirectory of the project got its own satchel.db")
	}
	if r := mainRun("", "--db", filepath.Join(proj, "satchel.db"), "fs", "read", "from-sub.md"); r.Code != 0 || r.Out != "x" && r.Out != "x\n" {
		t.Errorf("the project's database: %+v", r)
	}
	if got, found, err := FindProjectDB(sub); err != nil || !found || got != filepath.Join(proj, "satchel.db") {
		t.Errorf("FindProjectDB = %q, %v, %v", got, found, err)
	}
}
