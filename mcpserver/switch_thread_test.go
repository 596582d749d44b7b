package mcpserver

import (
	"strings"
	"testing"

	"github.com/satchel-dev/satchel"
)

// TestThreadsFromOneSession: a session forks, switches, works on the fork,
// reads and compares the threads by name, and switches back.
func TestThreadsFromOneSession(t *testing.T) {
	st := newStore(t)
	c, _ := newClient(t, Config{Store: st, Scope: "acme"})
	c.ok("write_file", map[string]any{"path": "a.md", "content": "main\n"})
	c.ok("fork", map[string]any{"name": "try-b"})
	c.is("switch_thread", map[string]any{"thread": "try-b"}, "switched to thread try-b (head: commit 1); was main")
	c.ok("read_file", map[string]any{"path": "a.md"})
	c.ok("write_file", map[string]any{"path": "a.md", "content": "b\n"})
	c.is("read_file", map[string]any{"path": "a.md", "numbered": false}, "b\n")
	c.is("read_file", map[string]any{"path": "a.md", "numbered": false, "at": "main"}, "main\n")
	c.is("read_file", map[string]any{"path": "a.md", "numbered": false, "at": "try-b@1"}, "main\n")
	c.is("read_file", map[string]any{"path": "a.md", "numbered": false, "at": "main@1"}, "main\n")
	c.is("glob", map[string]any{"pattern": "*", "at": "main@1"}, "a.md")
	c.is("grep", map[string]any{"pattern": "main", "at": "main"}, "a.md:1:main")
	c.is("diff", map[string]any{"from": "main", "to": "try-b"}, "changed\ta.md")
	c.is("switch_thread", map[string]any{"thread": "try-b"}, "already on thread try-b")
	c.is("switch_thread", map[string]any{"thread": "main"}, "switched to thread main (head: commit 1); was try-b")
	c.is("read_file", map[string]any{"path": "a.md", "numbered": false}, "main\n")
	c.is("diff", map[string]any{"from": "head", "to": "try-b", "path": "a.md"}, "--- a/a.md\n+++ b/a.md\n@@ -1 +1 @@\n-main\n+b\n")
	// main's a.md was read before the switch: the ledger kept it.
	c.ok("edit_file", map[string]any{"path": "a.md", "old_text": "main", "new_text": "main2"})
	c.refused("switch_thread", map[string]any{"thread": "nope"}, "thread not found: nope")
	c.refused("read_file", map[string]any{"path": "a.md", "at": "nope@1"}, "thread not found: nope")
	c.ok("restore", map[string]any{"to": "try-b"})
	c.is("read_file", map[string]any{"path": "a.md", "numbered": false}, "b\n")
}

// TestThreadBoundToken: a token bound to a thread cannot switch, fork, or
// name another thread, and lists only its own.
func TestThreadBoundToken(t *testing.T) {
	f := newHTTP(t, Config{})
	free, _ := token(t, f.st, satchel.TokenSpec{Agent: "writer", Scope: "acme"})
	bound, _ := token(t, f.st, satchel.TokenSpec{Agent: "writer", Scope: "acme", Thread: "experiment"})
	m := mustDial(t, f.url, free, "")
	m.ok("write_file", map[string]any{"path": "a.md", "content": "main\n"})
	m.ok("fork", map[string]any{"name": "experiment"})
	m.ok("fork", map[string]any{"name": "other"})

	b := mustDial(t, f.url, bound, "")
	const only = "this token can use thread experiment only"
	b.refused("switch_thread", map[string]any{"thread": "main"}, only)
	b.refused("fork", map[string]any{"name": "mine"}, only)
	b.refused("read_file", map[string]any{"path": "a.md", "at": "main@1"}, only)
	b.refused("diff", map[string]any{"from": "other", "to": "head"}, only)
	b.refused("restore", map[string]any{"to": "main"}, only)
	text := b.ok("list_threads", nil)
	if want := "experiment\t1\t"; len(text) < len(want) || text[:len(want)] != want || strings.Contains(text, "main") || strings.Contains(text, "other") {
		t.Errorf("list_threads of a bound token: %q", text)
	}
	b.is("read_file", map[string]any{"path": "a.md", "numbered": false, "at": "experiment@1"}, "main\n")
	b.is("switch_thread", map[string]any{"thread": "experiment"}, "already on thread experiment")
	// The free token may switch; after a switch its header thread still works.
	m.is("switch_thread", map[string]any{"thread": "other"}, "switched to thread other (head: commit 1); was main")
	m.is("glob", map[string]any{"pattern": "*"}, "a.md")
}
