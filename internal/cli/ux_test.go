package cli

import (
	"encoding/json"
	"io"
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
		"log":        "SEQ  TIME                  CHECKPOINTS  SUMMARY",
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
