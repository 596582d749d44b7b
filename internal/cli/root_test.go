package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/satchel-dev/satchel"
)

func TestUsageErrors(t *testing.T) {
	h := newHarness(t)
	// A mistyped subcommand is told where the commands are, without the
	// whole usage.
	for _, c := range [][]string{{"bogus"}, {"fs", "bogus"}, {"spill", "bogus"}} {
		path := strings.Join(append([]string{"satchel"}, c[:len(c)-1]...), " ")
		want := `unknown command "bogus" for "` + path + `"` + "\n\nRun '" + path + " --help' for its commands.\n"
		if r := h.run(c...); r.Code != 2 || r.Err != want || r.Out != "" {
			t.Errorf("%v: exit %d, stderr %q, want %q", c, r.Code, r.Err, want)
		}
	}
	h.usage("unknown flag: --bogus", "fs", "read", "a.md", "--bogus")
	h.usage("unknown flag: --bogus", "--bogus", "log")
	h.usage("satchel fs read: missing PATH", "fs", "read")
	h.usage("satchel fs read: takes 1 argument(s), got 2", "fs", "read", "a", "b")
	h.usage("satchel fs write: missing PATH", "fs", "write")
	h.usage("satchel fs write: takes at most 2 argument(s), got 3", "fs", "write", "a", "b", "c")
	h.usage("satchel fs mv: missing TO", "fs", "mv", "a")
	h.usage("satchel diff: missing FROM", "diff")
	h.usage(`invalid argument "abc" for "--start" flag: strconv.ParseInt: parsing "abc": invalid syntax`, "fs", "read", "a", "--start", "abc")
	h.usage(`invalid argument "soon" for "--max-age" flag: time: invalid duration "soon"`, "retain", "--max-age", "soon")
	h.usage(`unknown command "x" for "satchel log"`, "log", "x")
	h.usage(`required flag(s) "old" not set`, "fs", "edit", "a.md", "--new", "x")
	h.usage(`required flag(s) "older-than" not set`, "spill", "prune")
	h.usage("spill save: --owner is required with --backend fs", "spill", "save", "--name", "x")
	h.usage(`--backend must be fs or workspace, was "s3"`, "spill", "fetch", "x", "--backend", "s3")
	h.usage("--root applies only to --backend fs", "spill", "fetch", "spill/x", "--backend", "workspace", "--root", "/tmp")
	if len(h.dsns) != 0 {
		t.Errorf("usage errors opened the database: %q", h.dsns)
	}
}

func TestHelp(t *testing.T) {
	h := newHarness(t)
	for _, args := range [][]string{nil, {"--help"}, {"help"}, {"fs"}, {"fs", "--help"}, {"help", "fs", "read"}, {"spill"}} {
		r := h.run(args...)
		if r.Code != 0 || r.Err != "" || !strings.Contains(r.Out, "Usage:") {
			t.Errorf("satchel %q: %+v", args, r)
		}
	}
	out := h.ok("--help")
	for _, s := range []string{"Files:", "Versions and threads:", "Spill and untrusted text:", "  fs ", "  checkpoint ", "  untrusted ", "--db", "--scope", "--thread", "--json"} {
		if !strings.Contains(out, s) {
			t.Errorf("satchel --help lacks %q", s)
		}
	}
	if strings.Index(out, "Files:") > strings.Index(out, "Versions and threads:") {
		t.Errorf("satchel --help lists the groups out of order")
	}

	// Every command has a short and a long help with an example.
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" {
			return
		}
		if c.Short == "" || c.Long == "" || c.Example == "" {
			t.Errorf("%s: Short, Long and Example must all be set", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd(newApp(nil, nil, nil)))
}

func TestDatabaseChoice(t *testing.T) {
	h := newHarness(t)
	h.ok("fs", "ls")
	h.env["SATCHEL_DB"] = "from-env.db"
	h.ok("fs", "ls")
	h.ok("--db", "flag.db", "fs", "ls")
	h.ok("--db=memory:", "fs", "ls")
	equal(t, "databases opened", h.dsns, []string{defaultDB, "from-env.db", "flag.db", "memory:"})
	h.ok("untrusted")
	h.ok("spill", "prune", "--older-than", "1h", "--root", t.TempDir())
	equal(t, "commands without a database open none", len(h.dsns), 4)
}

func TestMainMemory(t *testing.T) {
	// Main opens --db itself: memory: is a fresh store per run.
	r := mainRun("hello", "--db", "memory:", "fs", "write", "a.md")
	equal(t, "write", r, result{})
	r = mainRun("", "--db", "memory:", "fs", "read", "a.md")
	equal(t, "read in a new memory store", r, result{Code: 1, Err: "file not found: a.md\n"})
	r = mainRun("", "--db", "memory:", "fs", "exists", "a.md")
	equal(t, "exists", r, result{Out: "false\n"})
	r = mainRun("", "--db", "", "fs", "ls")
	equal(t, "no database", r, result{Code: 1, Err: "no database: give a path, memory: or a postgres:// URL\n"})

	t.Setenv("SATCHEL_DB", "memory:")
	r = mainRun("x", "fs", "write", "a.md")
	equal(t, "SATCHEL_DB=memory:", r, result{})
}

// sqliteDB returns the path of a new SQLite database in a temporary
// directory, or skips the test when the SQLite backend is not linked.
func sqliteDB(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "satchel.db")
	s, err := satchel.Open(context.Background(), path)
	if err != nil {
		t.Fatalf("satchel.Open(%q): %v", path, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestMainSQLite(t *testing.T) {
	db := sqliteDB(t)
	run := func(stdin string, args ...string) result {
		return mainRun(stdin, append([]string{"--db", db}, args...)...)
	}
	ok := func(stdin string, args ...string) string {
		t.Helper()
		r := run(stdin, args...)
		if r.Code != 0 || r.Err != "" {
			t.Fatalf("satchel %q: %+v", args, r)
		}
		return r.Out
	}
	ok("one\ntwo\n", "fs", "write", "notes/a.md")
	equal(t, "read in a later run", ok("", "fs", "read", "notes/a.md"), "one\ntwo\n")
	ok("", "checkpoint", "v1")
	ok("", "fs", "append", "notes/a.md", "three\n")
	equal(t, "diff", ok("", "diff", "v1", "head"), "changed\tnotes/a.md\n")
	equal(t, "history", len(logFields(t, ok("", "log"))), 2)
	ok("", "fork", "exp", "--from", "main@v1")
	equal(t, "fork", ok("", "--thread", "exp", "fs", "read", "notes/a.md"), "one\ntwo\n")
	equal(t, "refusal", run("", "fs", "read", "nope"), result{Code: 1, Err: "file not found: nope\n"})

	// SATCHEL_DB names the same database; --db wins over it.
	t.Setenv("SATCHEL_DB", db)
	equal(t, "SATCHEL_DB", mainRun("", "fs", "ls"), result{Out: "notes/a.md\n"})
	equal(t, "--db over SATCHEL_DB", mainRun("", "--db", "memory:", "fs", "ls"), result{})
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		err  error
		name string
		code int
	}{
		{nil, "", 0},
		{runError{&satchel.Error{Kind: satchel.ErrNotFound, Msg: "file not found: x"}}, "not_found", 1},
		{runError{fmt.Errorf("wrapped: %w", &satchel.Error{Kind: satchel.ErrConflict})}, "conflict", 1},
		{runError{errors.Join(&satchel.Error{Kind: satchel.ErrInvalidPath}, &satchel.Error{Kind: satchel.ErrInvalidPath})}, "invalid_path", 1},
		{runError{os.ErrPermission}, "error", 1},
		{runError{context.Canceled}, "canceled", 130},
		{runError{usagef("bad")}, "usage", 2},
		{errors.New(`unknown command "x" for "satchel"`), "usage", 2},
	} {
		name, code := classify(tc.err)
		if name != tc.name || code != tc.code {
			t.Errorf("classify(%v) = %q, %d; want %q, %d", tc.err, name, code, tc.name, tc.code)
		}
	}
	// Every kind satchel documents is in the table.
	for _, kind := range []error{satchel.ErrInvalidPath, satchel.ErrInvalidPattern, satchel.ErrInvalidRange,
		satchel.ErrInvalidArgument, satchel.ErrNotFound, satchel.ErrExists, satchel.ErrIsDirectory,
		satchel.ErrNotText, satchel.ErrAnchorNotFound, satchel.ErrAmbiguousAnchor, satchel.ErrLimitExceeded,
		satchel.ErrWriteRace, satchel.ErrConflict, satchel.ErrReadOnly, satchel.ErrAccessDenied, satchel.ErrValidation, satchel.ErrArchived} {
		if name, _ := classify(runError{kind}); name == "error" || name == "usage" {
			t.Errorf("kind %v is missing from errorKinds", kind)
		}
	}
}
