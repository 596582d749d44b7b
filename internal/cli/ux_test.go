package cli

import (
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"
)

// TestJSONRefusals: with --json a refusal is one JSON object on stderr,
// with the message and the name of its kind; usage errors too.
func TestJSONRefusals(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct {
		args      []string
		exit      int
		msg, code string
	}{
		{[]string{"fs", "read", "missing.md", "--json"}, 1, "file not found: missing.md", "not_found"},
		{[]string{"--json", "fs", "read", "../x"}, 1, `invalid path "../x": contains a . or .. segment`, "invalid_path"},
		{[]string{"fs", "read", "a.md", "--end", "2", "--json"}, 1, "--end requires --start", "invalid_range"},
		{[]string{"--json", "fs", "read"}, 2, "satchel fs read: missing PATH", "usage"},
		{[]string{"--json", "fs", "read", "a.md", "--nope"}, 2, "unknown flag: --nope", "usage"},
		{[]string{"--json", "bogus"}, 2, "unknown command \"bogus\" for \"satchel\"", "usage"},
	} {
		r := h.run(tc.args...)
		if r.Code != tc.exit || r.Out != "" {
			t.Errorf("%v: exit %d, stdout %q; want exit %d, nothing on stdout", tc.args, r.Code, r.Out, tc.exit)
		}
		var got jsonError
		if err := json.Unmarshal([]byte(r.Err), &got); err != nil || strings.Count(r.Err, "\n") != 1 {
			t.Errorf("%v: stderr %q is not one line of JSON: %v", tc.args, r.Err, err)
			continue
		}
		if got.Error != tc.msg || got.Code != tc.code {
			t.Errorf("%v: %+v, want {Error: %q, Code: %q}", tc.args, got, tc.msg, tc.code)
		}
	}
	// Without --json, the message alone.
	h.refused("file not found: missing.md", "fs", "read", "missing.md")
}

// TestDiffDefaultsToHead: diff FROM compares with the head.
func TestDiffDefaultsToHead(t *testing.T) {
	h := newHarness(t)
	h.ok("fs", "write", "a.md", "one\n")
	h.ok("checkpoint", "v1")
	h.ok("fs", "write", "a.md", "two\n")
	h.ok("fs", "write", "b.md", "b\n")
	equal(t, "diff v1", h.ok("diff", "v1"), h.ok("diff", "v1", "head"))
	equal(t, "diff v1", h.ok("diff", "v1"), "changed\ta.md\nadded\tb.md\n")
}

// TestHeaderOnTerminal: log and token list print a header row on a
// terminal, and the bare rows when piped.
func TestHeaderOnTerminal(t *testing.T) {
	h := newHarness(t)
	h.ok("fs", "write", "a.md", "x")
	if r := h.run("token", "create", "--agent", "research", "--scope", "acme"); r.Code != 0 {
		t.Fatalf("token create: %+v", r)
	}
	piped := map[string]string{"log": h.ok("log"), "token list": h.ok("token", "list")}
	for _, out := range piped {
		if strings.Contains(out, "SEQ") || strings.Contains(out, "STATUS") {
			t.Errorf("a header when piped: %q", out)
		}
	}
	tty := isTerminal
	isTerminal = func(io.Writer) bool { return true }
	defer func() { isTerminal = tty }()
	for args, header := range map[string]string{
		"log":        "SEQ  TIME                  CHECKPOINTS  AGENT  SUMMARY",
		"token list": "ID ",
	} {
		out := h.ok(strings.Fields(args)...)
		first, rest, _ := strings.Cut(out, "\n")
		if !strings.HasPrefix(first, header) || strings.Count(rest, "\n") != strings.Count(piped[args], "\n") || strings.Contains(out, "\t") {
			t.Errorf("%s on a terminal:\n%s\nwant a header row %q, then the rows aligned", args, out, header)
		}
	}
	// --json is never a table.
	if out := h.ok("log", "--json"); !strings.HasPrefix(out, "[") {
		t.Errorf("log --json on a terminal: %q", out)
	}
}

// complete runs the shell completion of args (the last one being
// completed) and returns the candidates.
func complete(h *harness, args ...string) []string {
	h.t.Helper()
	r := h.run(append([]string{"__complete", "--db", "memory:"}, args...)...)
	if r.Code != 0 {
		h.t.Fatalf("__complete %v: exit %d, %s", args, r.Code, r.Err)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSuffix(r.Out, "\n"), "\n") {
		if !strings.HasPrefix(l, ":") {
			out = append(out, l)
		}
	}
	return out
}

func TestCompletion(t *testing.T) {
	h := newHarness(t)
	if out := h.ok("--help"); !strings.Contains(out, "  completion ") {
		t.Errorf("help does not list completion:\n%s", out)
	}
	h.ok("fs", "write", "notes/plan.md", "x")
	h.ok("fs", "write", "notes/deep/a.md", "x")
	h.ok("fs", "write", "readme.md", "x")
	h.ok("checkpoint", "before-edit")
	h.ok("fs", "write", "readme.md", "y")
	h.ok("checkpoint", "after-edit")
	h.ok("fork", "side-quest")

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"fs", "read", ""}, "notes/ readme.md"},
		{[]string{"fs", "read", "notes/"}, "notes/deep/ notes/plan.md"},
		{[]string{"fs", "read", "notes/p"}, "notes/plan.md"},
		{[]string{"fs", "ls", ""}, "notes/"},
		{[]string{"fs", "mv", "readme.md", "no"}, "notes/"},
		{[]string{"diff", ""}, "head after-edit before-edit"},
		{[]string{"diff", "before-edit", "h"}, "head"},
		{[]string{"diff", "before-edit", "head", "r"}, "readme.md"},
		{[]string{"restore", "be"}, "before-edit"},
		{[]string{"fs", "read", "readme.md", "--at", "af"}, "after-edit"},
		{[]string{"--thread", "s"}, "side-quest"},
		{[]string{"threads", "rm", ""}, "main side-quest"},
		{[]string{"fork", "x", "--from", "m"}, "main"},
	} {
		if got := strings.Join(complete(h, tc.args...), " "); got != tc.want {
			t.Errorf("complete %q = %q, want %q", tc.args, got, tc.want)
		}
	}

	// Completing never creates a database.
	missing := filepath.Join(t.TempDir(), "none.db")
	before := len(h.dsns)
	if r := h.run("__complete", "--db", missing, "fs", "read", ""); r.Code != 0 || strings.Contains(r.Out, "notes/") {
		t.Errorf("completion on a missing database: %+v", r)
	}
	if len(h.dsns) != before {
		t.Errorf("completion opened the missing database %s", missing)
	}
}

func TestSuggestions(t *testing.T) {
	h := newHarness(t)
	r := h.run("fs", "raed", "a.md")
	if r.Code != 2 || r.Err != "unknown command \"raed\" for \"satchel fs\"\n\nDid you mean this?\n\tread\n\nRun 'satchel fs --help' for its commands.\n" {
		t.Errorf("fs raed: exit %d, %q", r.Code, r.Err)
	}
	if r := h.run("lgo"); r.Code != 2 || !strings.Contains(r.Err, "Did you mean this?\n") || !strings.Contains(r.Err, "\tlog\n") {
		t.Errorf("lgo: exit %d, %q", r.Code, r.Err)
	}
}

// TestEmptyResultsOnTerminal: grep, glob and diff with nothing to show say
// so on a terminal, and print nothing into a pipe.
func TestEmptyResultsOnTerminal(t *testing.T) {
	h := newHarness(t)
	h.ok("fs", "write", "a.md", "one\n")
	h.ok("checkpoint", "v1")
	cases := map[string][]string{
		"no matches for nothere\n":         {"fs", "grep", "nothere"},
		"no files match *.go\n":            {"fs", "glob", "*.go"},
		"no changes between v1 and head\n": {"diff", "v1"},
	}
	for _, args := range cases {
		equal(t, strings.Join(args, " ")+" piped", h.ok(args...), "")
	}
	tty := isTerminal
	isTerminal = func(io.Writer) bool { return true }
	defer func() { isTerminal = tty }()
	for want, args := range cases {
		equal(t, strings.Join(args, " "), h.ok(args...), want)
	}
}
