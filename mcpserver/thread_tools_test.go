package mcpserver

import (
	"regexp"
	"testing"
)

func TestForkAndListThreads(t *testing.T) {
	st := newStore(t)
	acme, _ := newClient(t, Config{Store: st, Scope: "acme"})
	other, _ := newClient(t, Config{Store: st, Scope: "other", Thread: "secret-plans"})
	other.ok("write_file", map[string]any{"path": "x.md", "content": "theirs\n"})

	// Before the first write the session's thread does not exist yet.
	acme.is("list_threads", nil, "main\t0\t-\t(current)")

	acme.ok("write_file", map[string]any{"path": "plan.md", "content": "one\n"})
	acme.ok("checkpoint", map[string]any{"name": "v1"})
	acme.ok("write_file", map[string]any{"path": "plan.md", "content": "two\n"})

	r := acme.is("fork", map[string]any{"name": "try-b", "from": "v1"}, "forked thread try-b from main at v1 (commit 1)")
	if m := structured(t, r); m["thread"] != "try-b" || m["source"] != "main" || m["seq"] != float64(1) {
		t.Errorf("fork structured = %v", m)
	}
	acme.is("fork", map[string]any{"name": "keep"}, "forked thread keep from main at head (commit 2)")
	acme.refused("fork", map[string]any{"name": "try-b"}, "thread try-b already exists")
	acme.refused("fork", map[string]any{"name": "123"}, `invalid thread name "123": must not be all digits (a number means a sequence)`)
	acme.refused("fork", map[string]any{"name": "123", "from": "nope"}, `invalid thread name "123": must not be all digits (a number means a sequence)`)
	acme.refused("fork", map[string]any{"name": "x", "from": "nope"}, `checkpoint not found: nope`)

	// Only the caller's scope is listed.
	text := acme.ok("list_threads", nil)
	if !regexp.MustCompile(`^keep\t1\t\S+Z\nmain\t2\t\S+Z\t\(current\)\ntry-b\t1\t\S+Z$`).MatchString(text) {
		t.Errorf("list_threads = %q", text)
	}
	if m := structured(t, acme.call("list_threads", nil)); len(m["threads"].([]any)) != 3 || m["current"] != "main" {
		t.Errorf("list_threads structured = %v", m)
	}
	if got := other.ok("list_threads", nil); regexp.MustCompile(`main|try-b|keep`).MatchString(got) {
		t.Errorf("scope other sees acme's threads: %q", got)
	}

	// The fork holds the files as they were, and is independent.
	b, _ := newClient(t, Config{Store: st, Scope: "acme", Thread: "try-b"})
	b.is("read_file", map[string]any{"path": "plan.md", "numbered": false}, "one\n")
	b.ok("write_file", map[string]any{"path": "plan.md", "content": "b\n"})
	acme.is("read_file", map[string]any{"path": "plan.md", "numbered": false}, "two\n")
}

func TestMerge(t *testing.T) {
	st := newStore(t)
	acme, _ := newClient(t, Config{Store: st, Scope: "acme"})
	acme.ok("write_file", map[string]any{"path": "plan.md", "content": "a\nb\nc\n"})
	acme.ok("fork", map[string]any{"name": "try-b"})
	b, _ := newClient(t, Config{Store: st, Scope: "acme", Thread: "try-b"})
	b.ok("read_file", map[string]any{"path": "plan.md"})
	b.ok("write_file", map[string]any{"path": "plan.md", "content": "a\nB\nc\n"})

	acme.is("merge", map[string]any{"from": "try-b", "dry_run": true}, "merge of try-b@2 into main would change 1 path, without conflicts")
	r := acme.is("merge", map[string]any{"from": "try-b"}, "merged try-b@2 into main: commit 2, 1 path changed")
	if m := structured(t, r); m["into"] != "main" || m["commit"].(map[string]any)["summary"] != "merged try-b@2" {
		t.Errorf("merge structured = %v", m)
	}
	acme.is("read_file", map[string]any{"path": "plan.md", "numbered": false}, "a\nB\nc\n")
	acme.is("merge", map[string]any{"from": "try-b"}, "unchanged: main already has every change of try-b@2")

	acme.ok("write_file", map[string]any{"path": "plan.md", "content": "a\nmain\nc\n"})
	b.ok("write_file", map[string]any{"path": "plan.md", "content": "a\ntheirs\nc\n"})
	acme.refused("merge", map[string]any{"from": "try-b"}, "merge of try-b into main refused: 1 conflict: plan.md line 2 (both changed)")
	acme.refused("merge", map[string]any{"from": "try-b", "conflicts": "maybe"}, `conflicts must be "refuse" or "markers", was "maybe"`)
	acme.is("merge", map[string]any{"from": "try-b", "conflicts": "markers"}, "merged try-b@3 into main: commit 4, 1 path changed, 1 conflict marked: plan.md line 2 (both changed)")
	acme.is("read_file", map[string]any{"path": "plan.md", "numbered": false}, "a\n<<<<<<< main\nmain\n=======\ntheirs\n>>>>>>> try-b\nc\n")
	// Into another thread than the session's.
	acme.is("merge", map[string]any{"from": "main", "into": "try-b"}, "merged main@4 into try-b: commit 4, 1 path changed")
	b.is("read_file", map[string]any{"path": "plan.md", "numbered": false}, "a\n<<<<<<< main\nmain\n=======\ntheirs\n>>>>>>> try-b\nc\n")
}
