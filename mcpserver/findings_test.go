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
