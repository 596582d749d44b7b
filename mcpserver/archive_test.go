package mcpserver

import (
	"context"
	"testing"
)

// TestArchivedThread: the writing tools refuse an archived thread with a
// tool error that says why and how to undo it; reads go on.
func TestArchivedThread(t *testing.T) {
	st := newStore(t)
	c, _ := newClient(t, Config{Store: st})
	c.ok("write_file", map[string]any{"path": "a.md", "content": "one\n"})
	if _, err := st.ArchiveThread(context.Background(), "default", "main"); err != nil {
		t.Fatal(err)
	}
	const msg = "thread main of scope default is archived: it can be read, not written; satchel threads unarchive main --scope default makes it writable"
	c.refused("write_file", map[string]any{"path": "b.md", "content": "x"}, msg)
	c.refused("append_file", map[string]any{"path": "a.md", "content": "x"}, msg)
	c.refused("delete_file", map[string]any{"path": "a.md"}, msg)
	if got := c.ok("read_file", map[string]any{"path": "a.md"}); got == "" {
		t.Errorf("read_file of an archived thread: %q", got)
	}
	if _, err := st.UnarchiveThread(context.Background(), "default", "main"); err != nil {
		t.Fatal(err)
	}
	c.ok("write_file", map[string]any{"path": "b.md", "content": "x"})
}
