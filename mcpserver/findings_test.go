package mcpserver

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel"
)

// TestEmptyResultsSaySo: grep, glob and diff with nothing to show say so
// instead of returning blank text.
func TestEmptyResultsSaySo(t *testing.T) {
	c, _ := newClient(t, Config{})
	c.ok("write_file", map[string]any{"path": "a.md", "content": "one\n"})
	c.ok("checkpoint", map[string]any{"name": "v1"})
	c.is("grep", map[string]any{"pattern": "nothere"}, "no matches for nothere")
	c.is("glob", map[string]any{"pattern": "**/*.go"}, "no files match **/*.go")
	c.is("diff", map[string]any{"from": "v1"}, "no changes between v1 and head")
	c.is("diff", map[string]any{"from": "v1", "to": "1", "path": "a.md"}, "no changes between v1 and 1 in a.md")
	// Something to show is shown as before.
	c.is("grep", map[string]any{"pattern": "one"}, "a.md:1:one")
}

// TestMessagesNameArguments: read_file's refusals name its arguments, and
// a missing file suggests the nearest path, keeping the refusal's kind.
func TestMessagesNameArguments(t *testing.T) {
	c, _ := newClient(t, Config{})
	c.ok("write_file", map[string]any{"path": "notes/plan.md", "content": "a\nb\nc\n"})
	c.refused("read_file", map[string]any{"path": "notes/plan.md", "start_line": 3, "end_line": 2}, "end_line must not be before start_line")
	c.refused("read_file", map[string]any{"path": "notes/plan.md", "start_line": 0}, "start_line must be at least 1")
	c.refused("read_file", map[string]any{"path": "notes/plan.md", "end_line": 2}, "end_line requires start_line")
	c.refused("read_file", map[string]any{"path": "notes/plam.md"}, "file not found: notes/plam.md (did you mean notes/plan.md?)")
	c.refused("stat_file", map[string]any{"path": "Notes/plan.md"}, "file not found: Notes/plan.md (did you mean notes/plan.md?)")
	c.refused("read_file", map[string]any{"path": "elsewhere.txt"}, "file not found: elsewhere.txt")
}

func TestNearest(t *testing.T) {
	paths := []string{"notes/plan.md", "notes/plans.md", "src/main.go", "a.md", "notes/a.md"}
	for p, want := range map[string]string{
		"notes/plam.md": "notes/plan.md", "src/mian.go": "src/main.go", "q.txt": "", "zzzzzzzzzzzzzzzz": "",
		"notes/plan.mdx": "notes/plan.md", "b.md": "", "notes/b.md": "",
	} {
		if got := nearest(p, paths); got != want {
			t.Errorf("nearest(%q) = %q, want %q", p, got, want)
		}
	}
}

func FuzzNearest(f *testing.F) {
	f.Add("notes/plam.md", "notes/plan.md")
	f.Add("", "x")
	f.Fuzz(func(t *testing.T, a, b string) {
		d := distance(a, b, 1<<30)
		if d != distance(b, a, 1<<30) || d > max(len(a), len(b)) || (d == 0) != (a == b) {
			t.Errorf("distance(%q, %q) = %d", a, b, d)
		}
	})
}

// TestReadInsideALongLine: a line longer than max_chars is read on with
// start_char, and each notice points forward.
func TestReadInsideALongLine(t *testing.T) {
	c, _ := newClient(t, Config{})
	line := strings.Repeat("abcdefghij", 25) // 250 characters
	c.ok("write_file", map[string]any{"path": "one.json", "content": line + "\nend\n"})
	var got strings.Builder
	args := map[string]any{"path": "one.json", "numbered": false, "max_chars": 100}
	for i := 0; ; i++ {
		if i > 10 {
			t.Fatalf("no end after %d reads: %q", i, got.String())
		}
		ts := texts(t, c.call("read_file", args))
		got.WriteString(ts[0])
		if len(ts) == 1 {
			break
		}
		m := regexp.MustCompile(`Continue with start_line=(\d+)(?:, start_char=(\d+))?\]`).FindStringSubmatch(ts[1])
		if m == nil {
			t.Fatalf("notice %q", ts[1])
		}
		next := map[string]any{"path": "one.json", "numbered": false, "max_chars": 100, "start_line": atoi(m[1])}
		if m[2] != "" {
			next["start_char"] = atoi(m[2])
		}
		if fmt.Sprint(next) == fmt.Sprint(args) {
			t.Fatalf("the notice points back where the read started: %q", ts[1])
		}
		args = next
		if m[2] == "" && !strings.HasSuffix(got.String(), "\n") {
			got.WriteString("\n") // the next line starts afresh
		}
	}
	if got.String() != line+"\nend" {
		t.Errorf("reassembled %q", got.String())
	}
	// Numbered, the number is not counted in start_char.
	r := texts(t, c.call("read_file", map[string]any{"path": "one.json", "start_line": 1, "start_char": 245}))
	if r[0] != "1| fghij\n2| end" {
		t.Errorf("numbered with start_char: %q", r)
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func TestJSONLines(t *testing.T) {
	for in, want := range map[string]string{
		`{"documents":[{"a":[1,2]},{"b":"x,]y"}],"next_cursor":"c"}`: "{\n\"documents\":[\n{\"a\":[1,2]},\n{\"b\":\"x,]y\"}\n],\n\"next_cursor\":\"c\"\n}",
		`[{"a":1},{"b":[2,3]}]`: "[\n{\"a\":1},\n{\"b\":[2,3]}\n]",
		`"x"`:                   `"x"`,
		`{"a":"\"{"}`:           "{\n\"a\":\"\\\"{\"\n}",
		`{"a":`:                 `{"a":`,
	} {
		if got := jsonLines(in); got != want {
			t.Errorf("jsonLines(%s) = %q, want %q", in, got, want)
		}
	}
}

func FuzzJSONLines(f *testing.F) {
	f.Add(`{"documents":[{"a":[1,2]},{"b":"x,]y"}],"next_cursor":"c"}`)
	f.Add(`[1,[2,{"x":"\\"}]]`)
	f.Fuzz(func(t *testing.T, s string) {
		out := jsonLines(s)
		if strings.ReplaceAll(out, "\n", "") != strings.ReplaceAll(s, "\n", "") {
			t.Errorf("jsonLines(%q) = %q: more than newlines changed", s, out)
		}
		if json.Valid([]byte(s)) != json.Valid([]byte(out)) {
			t.Errorf("jsonLines(%q) = %q changes validity", s, out)
		}
	})
}

// TestSpilledQueryReadsBack: a spilled collection result is saved one
// document a line, and its notice names the first line the preview did
// not show whole.
func TestSpilledQueryReadsBack(t *testing.T) {
	p := writeProject(t)
	st := newStore(t)
	w, _ := newClient(t, Config{Store: st, Collections: ProjectCollections(st, p), Scope: "acme", Agent: "writer", MaxInlineBytes: 2000})
	for i := range 60 {
		w.ok("store__notes__set", map[string]any{"id": fmt.Sprintf("n%02d", i), "text": strings.Repeat("word ", 20)})
	}
	r := w.call("store__notes__list", map[string]any{"limit": 100})
	ts := texts(t, r)
	if len(ts) < 2 {
		t.Fatalf("not spilled: %q", ts)
	}
	m := regexp.MustCompile(`path "(spill/[^"]+)", start_line (\d+)(?:, start_char (\d+))?, end_line (\d+)`).FindStringSubmatch(ts[1])
	if m == nil {
		t.Fatalf("notice %q", ts[1])
	}
	shown := strings.Count(ts[0], "\n") + 1
	if atoi(m[2]) != shown {
		t.Errorf("notice starts at line %s, the preview showed lines 1 to %d whole or in part", m[2], shown)
	}
	all := w.ok("read_file", map[string]any{"path": m[1], "numbered": false, "max_chars": 100000})
	if n := strings.Count(all, "\n"); n < 60 {
		t.Errorf("the spill has %d lines, want a document a line:\n%s", n, all[:300])
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(all), &v); err != nil || len(v["documents"].([]any)) != 60 {
		t.Errorf("the spill is not the result: %v", err)
	}
}

// TestSpillSaysHowLongItStays: the notice says a thread keeps its newest
// 64 spills, and a reclaimed spill's read says it was reclaimed.
func TestSpillSaysHowLongItStays(t *testing.T) {
	c, _ := newClient(t, Config{MaxInlineBytes: 600})
	c.ok("write_file", map[string]any{"path": "a.md", "content": strings.Repeat("a line of text\n", 200)})
	first := ""
	for i := range satchel.KeepSpills + 1 {
		ts := texts(t, c.call("grep", map[string]any{"pattern": "line"}))
		if len(ts) < 2 || !strings.Contains(ts[1], "It stays while among this thread's newest 64 spills.") {
			t.Fatalf("notice %q", ts)
		}
		if i == 0 {
			first = regexp.MustCompile(`stored at: (spill/\S+)\.`).FindStringSubmatch(ts[1])[1]
		}
	}
	c.refused("read_file", map[string]any{"path": first}, first+" was reclaimed (each thread keeps its newest 64 spills)")
	c.refused("read_file", map[string]any{"path": "spill/nope.txt"}, "file not found: spill/nope.txt")
}
