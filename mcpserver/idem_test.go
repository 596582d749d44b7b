package mcpserver

import (
	"context"
	"testing"

	"github.com/satchel-dev/satchel"
)

// TestIdempotencyKeyTool retries append_file with one idempotency_key:
// the text lands once, the same key with other text is refused, and the
// commit records the client's name from its initialize request, the tool
// and the key.
func TestIdempotencyKeyTool(t *testing.T) {
	st := newStore(t)
	c, _ := newClient(t, Config{Store: st})
	args := map[string]any{"path": "log.md", "content": "one\n", "idempotency_key": "k1"}
	c.ok("append_file", args)
	c.ok("append_file", args)
	c.refused("append_file", map[string]any{"path": "log.md", "content": "two\n", "idempotency_key": "k1"},
		"idempotency key k1 was already used with different arguments")
	if got := c.ok("read_file", map[string]any{"path": "log.md", "numbered": false}); got != "one\n" {
		t.Fatalf("log.md = %q after a retried append, want the text once", got)
	}
	page, err := st.Audit(context.Background(), satchel.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Entries) != 1 {
		t.Fatalf("audit: %+v, want one commit", page.Entries)
	}
	e := page.Entries[0]
	if e.Client != "test" || e.Via != "mcp:append_file" || e.IdempotencyKey != "k1" {
		t.Errorf("the commit records %+v, want client test, via mcp:append_file and key k1", e)
	}
}

// A session on thread t3 that claimed key K9 first used to make main's
// call under K9 fail: a key is claimed in the session's thread, for the
// file tools and a store's set alike.
func TestAttackIdempotencyKeyOtherThread(t *testing.T) {
	p := writeProject(t)
	st := newStore(t)
	cols := ProjectCollections(st, p)
	t3, _ := newClient(t, Config{Store: st, Collections: cols, Scope: "acme", Agent: "writer", Thread: "t3"})
	main, _ := newClient(t, Config{Store: st, Collections: cols, Scope: "acme", Agent: "writer", Thread: "main"})
	t3.ok("write_file", map[string]any{"path": "squat.md", "content": "t3", "idempotency_key": "K9"})
	main.ok("write_file", map[string]any{"path": "notes.md", "content": "main", "idempotency_key": "K9"})
	if got := main.ok("read_file", map[string]any{"path": "notes.md", "numbered": false}); got != "main" {
		t.Fatalf("main's notes.md = %q", got)
	}
	t3.ok("store__notes__set", map[string]any{"id": "squat", "text": "t3", "idempotency_key": "D9"})
	main.ok("store__notes__set", map[string]any{"id": "mine", "text": "main", "idempotency_key": "D9"})
	main.refused("store__notes__set", map[string]any{"id": "mine", "text": "other", "idempotency_key": "D9"},
		"idempotency key D9 was already used with different arguments")
}
