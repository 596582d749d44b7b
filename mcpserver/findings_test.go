package mcpserver

import (
	"testing"
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
	paths := []string{"notes/plan.md", "notes/plans.md", "src/main.go"}
	for p, want := range map[string]string{
		"notes/plam.md": "notes/plan.md", "src/mian.go": "src/main.go", "a.md": "", "zzzzzzzzzzzzzzzz": "",
		"notes/plan.mdx": "notes/plan.md",
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
