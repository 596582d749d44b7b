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
