package luahost_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/luahost"
)

func project(t *testing.T) *satchel.Project {
	t.Helper()
	p, err := satchel.LoadProjectFS(fstest.MapFS{
		"stores/notes.json": {Data: []byte(`{"name": "notes", "deletable": true,
 "entity": {"name": "Note", "key": "{id}", "schema": {"id": {"type": "string"}, "rank": {"type": "number"}, "tags": {"type": "array", "item": {"type": "string"}}}}}`)},
		"agents/reader/agent.json": {Data: []byte(`{"name": "Reader", "stores": {"notes": "read"}}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDocs(t *testing.T) {
	for _, kind := range backends {
		t.Run(kind, func(t *testing.T) {
			st := open(t, kind)
			p := project(t)
			out, _, err := exec(t, st, `
print(docs.set("notes", {id = "a", rank = 2, tags = {"x", "y"}}))
docs.set("notes", {id = "b", rank = 1, tags = {}})
local d = docs.get("notes", "a")
print(d.id, d.rank, #d.tags, d.tags[2], docs.get("notes", "zz"))
local page, cursor = docs.query("notes", {where = "rank > 0", sort = "rank"})
print(#page, page[1].id, cursor)
print(#docs.list("notes"), docs.remove("notes", "b"), docs.remove("notes", "b"))
local ok, e = pcall(docs.set, "notes", {id = "c", rank = "high", tags = {}})
print(ok)`, luahost.Config{Project: p})
			want := "a\t1\na\t2\t2\ty\tnil\n2\tb\tnil\n2\ttrue\tfalse\nfalse\n"
			if err != nil || out != want {
				t.Fatalf("printed %q, error %v; want %q", out, err, want)
			}
			_, _, err = exec(t, st, `docs.set("notes", {id = "z", rank = 1, tags = {}})`, luahost.Config{Project: p, Agent: "reader"})
			if err == nil || !strings.HasPrefix(err.Error(), "script.lua:1: ") || !strings.Contains(err.Error(), "notes") {
				t.Errorf("a read-only agent's set: %v", err)
			}
			_, _, err = exec(t, st, `docs.get("notes", "a")`, luahost.Config{})
			if err == nil || !strings.Contains(err.Error(), "docs: this run has no collections") {
				t.Errorf("without a project: %v", err)
			}
		})
	}
}

// A script run on thread t3 that claimed key K9 for a document used to
// make another thread's set under K9 fail: its keys are its thread's.
func TestAttackDocsKeyOtherThread(t *testing.T) {
	st := open(t, "memory")
	p := project(t)
	if _, _, err := exec(t, st, `docs.set("notes", {id = "squat", rank = 1, tags = {}}, {idempotency_key = "K9"})`, luahost.Config{Project: p, Thread: "t3"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := exec(t, st, `docs.set("notes", {id = "mine", rank = 1, tags = {}}, {idempotency_key = "K9"})`, luahost.Config{Project: p, Thread: "main"}); err != nil {
		t.Fatalf("main's set under the key t3 claimed: %v", err)
	}
	_, _, err := exec(t, st, `docs.set("notes", {id = "mine", rank = 2, tags = {}}, {idempotency_key = "K9"})`, luahost.Config{Project: p, Thread: "main"})
	if err == nil || !strings.Contains(err.Error(), "idempotency key K9 was already used with different arguments") {
		t.Fatalf("main, the same key with other arguments: %v", err)
	}
}
