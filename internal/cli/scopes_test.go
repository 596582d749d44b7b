package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestScopesAndPurge(t *testing.T) {
	h := newHarness(t)
	equal(t, "scopes of an empty database", h.ok("scopes", "--json"), "[]\n")
	h.ok("fs", "write", "a.md", "12345")
	h.ok("fs", "write", "b.md", "678", "--scope", "acme")
	h.ok("fs", "write", "c.md", "9", "--scope", "acme", "--thread", "t2")
	if r := h.run("token", "create", "--agent", "bot", "--scope", "acme"); r.Code != 0 {
		t.Fatalf("token create: %+v", r)
	}

	var l []map[string]any
	if err := json.Unmarshal([]byte(h.ok("scopes", "--json")), &l); err != nil {
		t.Fatal(err)
	}
	if len(l) != 2 || l[0]["scope"] != "acme" || l[0]["threads"] != 2.0 || l[0]["files"] != 2.0 ||
		l[0]["documents"] != 0.0 || l[0]["last_activity"] == nil || l[1]["scope"] != "default" {
		t.Errorf("scopes --json = %v", l)
	}
	plain := h.ok("scopes")
	if !strings.HasPrefix(plain, "acme\t2\t0\t2\t") || !strings.Contains(plain, "\ndefault\t1\t0\t1\t") {
		t.Errorf("scopes = %q", plain)
	}

	h.refused("not purged: scope purge deletes scope acme: 2 threads with their history (2 files, 20 bytes at their heads), 0 documents, its settings and access tokens for good; give --yes",
		"scope", "purge", "acme")
	equal(t, "still there", h.ok("fs", "read", "b.md", "--scope", "acme"), "678")
	equal(t, "purge", h.ok("scope", "purge", "acme", "--yes"),
		"purged scope acme: 2 threads, 2 commits, 2 files, 0 documents, 1 tokens, 20 bytes\n")
	h.refused("no scope acme; the scopes are: default", "scope", "purge", "acme", "--yes")
	if r := h.run("scope", "purge", "nosuch", "--yes"); r.Code != 1 {
		t.Errorf("purge of an unknown scope: %+v", r)
	}
	if out := h.ok("scopes"); strings.Contains(out, "acme") {
		t.Errorf("scopes after purge = %q", out)
	}
	equal(t, "tokens after purge", h.ok("token", "list", "--json"), "[]\n")
	h.refused(`invalid scope "bad scope": must be 1 to 128 letters, digits, '.', '_', '-', '@' or ':'`, "scope", "purge", "bad scope", "--yes")
}

func TestThreadsArchive(t *testing.T) {
	h := newHarness(t)
	h.ok("fs", "write", "a.md", "one")
	equal(t, "archive", h.ok("threads", "archive", "main"), "thread main of scope default is archived (head at commit 2)\n")
	equal(t, "archive again", h.ok("threads", "archive", "main", "--json"), `{"thread":"main","archived":true,"changed":false,"head":2}`+"\n")
	equal(t, "listing", h.ok("threads"), "main (archived)\n")
	if out := h.ok("threads", "--json"); !strings.Contains(out, `"archived":true`) {
		t.Errorf("threads --json = %s", out)
	}
	msg := "thread main of scope default is archived: it can be read, not written; satchel threads unarchive main --scope default makes it writable"
	h.refused(msg, "fs", "write", "b.md", "x")
	h.refused(msg, "checkpoint", "cp")
	equal(t, "read", h.ok("fs", "read", "a.md"), "one")
	equal(t, "unarchive", h.ok("threads", "unarchive", "main"), "thread main of scope default is writable (head at commit 3)\n")
	h.ok("fs", "write", "b.md", "x")
	equal(t, "listing", h.ok("threads"), "main\n")
	h.refused(`thread "nope" does not exist in scope default; threads: main`, "threads", "archive", "nope")
}

func TestRetainDefaultAndGCScope(t *testing.T) {
	h := newHarness(t)
	h.ok("fs", "write", "a.md", "1", "--scope", "acme")
	equal(t, "default unset", h.ok("retain", "--default", "--scope", "acme"), "max-age: unset\nmax-commits: unset\nmax-checkpoints: unset\n")
	equal(t, "set default", h.ok("retain", "--default", "--scope", "acme", "--max-commits", "2", "--json"),
		`{"policy":{"max_commits":2},"default":true}`+"\n")
	equal(t, "more rules", h.ok("retain", "--default", "--scope", "acme", "--max-checkpoints", "3"),
		"max-age: unset\nmax-commits: 2\nmax-checkpoints: 3\n")
	equal(t, "the existing thread keeps none", h.ok("retain", "--scope", "acme"), "max-age: unset\nmax-commits: unset\nmax-checkpoints: unset\n")
	h.refused("--default sets the policy of scope acme, not of a thread: leave out --thread t", "retain", "--default", "--scope", "acme", "--thread", "t")
	h.refused("--clear removes the scope's default policy: give --default with it", "retain", "--clear")
	equal(t, "clear", h.ok("retain", "--default", "--scope", "acme", "--clear"), "max-age: unset\nmax-commits: unset\nmax-checkpoints: unset\n")

	for i := range 3 {
		h.ok("fs", "write", "a.md", strings.Repeat("x", i+2), "--scope", "acme")
		h.ok("fs", "write", "a.md", strings.Repeat("y", i+2))
	}
	h.ok("retain", "--max-commits", "1", "--scope", "acme")
	h.ok("retain", "--max-commits", "1")
	// The policies were applied when set; new commits make more to drop.
	h.ok("fs", "write", "a.md", "z", "--scope", "acme")
	h.ok("fs", "write", "a.md", "z")
	// Only acme's commit is dropped; then --all drops default's.
	equal(t, "gc --scope", h.ok("gc", "--scope", "acme", "--grace", "0s", "--json"), `{"dropped":1,"packs_deleted":4,"packs_rewritten":0,"packs_kept":0}`+"\n")
	equal(t, "gc --all", h.ok("gc", "--all", "--grace", "0s", "--json"), `{"dropped":1,"packs_deleted":3,"packs_rewritten":0,"packs_kept":0}`+"\n")
	h.refused("--all collects every scope and --scope acme only one: give one of them", "gc", "--all", "--scope", "acme")
}
