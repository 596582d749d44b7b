package cli

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/satchel-dev/satchel"
)

// logLine matches one line of log: SEQ, TIME (RFC 3339, UTC), CHECKPOINTS,
// AGENT (log only: not in the lines of checkpoint, restore and fork),
// SUMMARY, tab-separated.
var logLine = regexp.MustCompile(`^(\d+)\t(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)\t([^\t]*)\t(?:([^\t]*)\t)?([^\t]*)$`)

// logFields returns the fields of log's output, with the time checked and
// left out: [[SEQ, CHECKPOINTS, SUMMARY], ...].
func logFields(t *testing.T, out string) [][]string {
	t.Helper()
	var rows [][]string
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if l == "" {
			continue
		}
		m := logLine.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("log line %q is not SEQ\\tTIME\\tCHECKPOINTS\\tSUMMARY", l)
		}
		if _, err := time.Parse(time.RFC3339, m[2]); err != nil {
			t.Errorf("log time %q: %v", m[2], err)
		}
		if m[4] != "" && m[4] != "-" {
			t.Errorf("log line %q: agent %q, want - (an operator)", l, m[4])
		}
		rows = append(rows, []string{m[1], m[3], m[5]})
	}
	return rows
}

func TestCheckpointLogDiffRestore(t *testing.T) {
	h := newHarness(t)
	equal(t, "log of a new thread", h.ok("log"), "")
	equal(t, "log of a new thread --json", h.ok("log", "--json"), "[]\n")

	h.ok("fs", "write", "a.md", "one\ntwo\nthree\n")
	equal(t, "checkpoint", logFields(t, h.ok("checkpoint", "v1")), [][]string{{"1", "v1", "write a.md"}})
	h.ok("checkpoint", "also-v1")
	h.ok("fs", "edit", "a.md", "--old", "two", "--new", "TWO")
	h.ok("fs", "write", "b.md", "b")
	h.refused("checkpoint v1 already exists in thread main", "checkpoint", "v1")
	h.refused(`invalid checkpoint name "42": must not be all digits (a number means a sequence)`, "checkpoint", "42")
	h.refused(`invalid checkpoint name "head": head already means the thread's head commit`, "checkpoint", "head")
	h.refused(`invalid checkpoint name "-2": must not be a number (a number means a sequence)`, "checkpoint", "--", "-2")

	equal(t, "log", logFields(t, h.ok("log")), [][]string{
		{"3", "", "write b.md"},
		{"2", "", "edit a.md"},
		{"1", "also-v1,v1", "write a.md"},
	})
	equal(t, "log --limit", logFields(t, h.ok("log", "--limit", "1")), [][]string{{"3", "", "write b.md"}})
	cs := decode[[]satchel.Commit](t, h.ok("log", "--json"))
	if len(cs) != 3 || cs[2].Seq != 1 || cs[2].Op != "write" || cs[2].Via != "cli:fs write" ||
		strings.Join(cs[2].Checkpoints, ",") != "also-v1,v1" || cs[0].Summary != "write b.md" {
		t.Errorf("log --json = %+v", cs)
	}
	h.refused("--limit must not be negative, was -2", "log", "--limit", "-2")

	// diff
	equal(t, "diff", h.ok("diff", "v1", "head"), "changed\ta.md\nadded\tb.md\n")
	equal(t, "diff reversed", h.ok("diff", "3", "1"), "changed\ta.md\nremoved\tb.md\n")
	equal(t, "diff same", h.ok("diff", "2", "2"), "")
	equal(t, "diff same --json", h.ok("diff", "2", "2", "--json"), "[]\n")
	equal(t, "diff --json", decode[[]satchel.Change](t, h.ok("diff", "0", "v1", "--json")),
		[]satchel.Change{{Path: "a.md", Kind: "added"}})
	ws, err := h.store.Workspace(t.Context(), "default", "main")
	if err != nil {
		t.Fatal(err)
	}
	want, err := ws.DiffFile(t.Context(), "v1", "head", "a.md")
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "diff PATH", h.ok("diff", "v1", "head", "a.md"), want)
	type fileDiff struct {
		Path string `json:"path"`
		Diff string `json:"diff"`
	}
	equal(t, "diff PATH --json", decode[fileDiff](t, h.ok("diff", "v1", "head", "a.md", "--json")), fileDiff{Path: "a.md", Diff: want})
	h.refused("checkpoint not found: nope", "diff", "nope", "head")
	h.refused(`invalid path "a/../b": contains a . or .. segment`, "diff", "1", "2", "a/../b")

	// restore: a new commit with the old tree.
	equal(t, "restore", logFields(t, h.ok("restore", "v1")), [][]string{{"4", "", "restore to 1"}})
	equal(t, "restored content", h.ok("fs", "read", "a.md"), "one\ntwo\nthree\n")
	equal(t, "restored files", h.ok("fs", "ls"), "a.md\n")
	c := decode[satchel.Commit](t, h.ok("restore", "3", "--json"))
	if c.Seq != 5 || c.Op != "restore" {
		t.Errorf("restore --json = %+v", c)
	}
	h.refused("checkpoint not found: nope", "restore", "nope")
	h.refused("commit not found: 99 is not a retained commit of thread main", "restore", "99")
}

func TestForkAndThreads(t *testing.T) {
	h := newHarness(t)
	equal(t, "no threads", h.ok("threads"), "")
	equal(t, "no threads --json", h.ok("threads", "--json"), "[]\n")
	h.refused("thread not found: main", "fork", "exp", "--from", "main")

	h.ok("fs", "write", "a.md", "v1")
	h.ok("checkpoint", "base")
	h.ok("fs", "write", "a.md", "v2")

	equal(t, "fork", logFields(t, h.ok("fork", "exp", "--from", "main@base")), [][]string{{"1", "", "fork of main@1"}})
	equal(t, "forked content", h.ok("--thread", "exp", "fs", "read", "a.md"), "v1")
	h.ok("fork", "tip", "--from", "main")
	equal(t, "fork of the head", h.ok("--thread", "tip", "fs", "read", "a.md"), "v2")
	h.ok("fork", "tip2") // default: the head of --thread
	equal(t, "fork of --thread", h.ok("--thread", "tip2", "fs", "read", "a.md"), "v2")
	type forked struct {
		Scope  string          `json:"scope"`
		Thread string          `json:"thread"`
		From   string          `json:"from"`
		Head   *satchel.Commit `json:"head"`
	}
	f := decode[forked](t, h.ok("fork", "exp2", "--from", "exp@1", "--json"))
	if f.Scope != "default" || f.Thread != "exp2" || f.From != "exp@1" || f.Head == nil || f.Head.Seq != 1 {
		t.Errorf("fork --json = %+v", f)
	}
	h.refused("thread exp already exists", "fork", "exp", "--from", "main")
	h.refused("checkpoint not found: nope", "fork", "x", "--from", "main@nope")
	h.refused("thread not found: ghost", "fork", "x", "--from", "ghost@1")
	h.refused(`invalid thread name "a b": must be 1 to 128 letters, digits, '.', '_' or '-'`, "fork", "a b", "--from", "main")

	// Changing the fork leaves the original alone.
	h.ok("--thread", "exp", "fs", "write", "a.md", "forked")
	equal(t, "original", h.ok("fs", "read", "a.md"), "v2")

	equal(t, "threads", h.ok("threads"), "exp\nexp2\nmain\ntip\ntip2\n")
	ts := decode[[]satchel.ThreadInfo](t, h.ok("threads", "--json"))
	if len(ts) != 5 || ts[2].Name != "main" || ts[2].Head != 2 || ts[0].Head != 2 {
		t.Errorf("threads --json = %+v", ts)
	}
	h.refused("not deleted: threads rm deletes thread tip of scope default (head at commit 1), its history and checkpoints for good; give --yes", "threads", "rm", "tip")
	equal(t, "threads rm", h.ok("threads", "rm", "tip", "--yes"), "removed thread tip of scope default (head at commit 1), its history and checkpoints\n")
	equal(t, "threads rm --json", h.ok("threads", "rm", "tip2", "--json", "-y"), `{"removed":"tip2","head":1}`+"\n")
	h.refused(`thread "tip" does not exist in scope default; threads: exp, exp2, main`, "threads", "rm", "tip", "--yes")
	equal(t, "threads after rm", h.ok("threads"), "exp\nexp2\nmain\n")
	equal(t, "other scope", h.ok("--scope", "other", "threads"), "")
	h.refusedUsage(`unknown command "bogus" for "satchel threads"`+"\n\nRun 'satchel threads --help' for its commands.", "threads", "bogus")
}

func TestRetainAndGC(t *testing.T) {
	h := newHarness(t)
	equal(t, "no policy", h.ok("retain"), "max-age: unset\nmax-commits: unset\nmax-checkpoints: unset\n")
	equal(t, "no policy --json", h.ok("retain", "--json"), `{"policy":{}}`+"\n")
	for i := range 5 {
		h.ok("fs", "write", "a.md", strings.Repeat("x", i+1))
		if i == 0 {
			h.ok("checkpoint", "first")
		}
	}
	h.refused("maxCommits must be at least 1, was 0", "retain", "--max-commits", "0")
	h.refused("maxAge must be positive, was 0s", "retain", "--max-age", "0s")
	h.refused("maxCheckpoints must be at least 1, was -1", "retain", "--max-checkpoints", "-1")

	equal(t, "set max-commits", h.ok("retain", "--max-commits", "2"),
		"max-age: unset\nmax-commits: 2\nmax-checkpoints: unset\ndropped: 2\n")
	// Commit 1 is a checkpoint, kept while --max-checkpoints is unset.
	equal(t, "log after retain", logFields(t, h.ok("log")), [][]string{
		{"5", "", "write a.md"}, {"4", "", "write a.md"}, {"1", "first", "write a.md"},
	})
	// Only the flags given change.
	equal(t, "set max-age", h.ok("retain", "--max-age", "720h", "--json"),
		`{"policy":{"max_age":2592000000000000,"max_commits":2},"dropped":0}`+"\n")
	equal(t, "show", h.ok("retain"), "max-age: 720h0m0s\nmax-commits: 2\nmax-checkpoints: unset\n")
	equal(t, "other thread", h.ok("--thread", "other", "retain"), "max-age: unset\nmax-commits: unset\nmax-checkpoints: unset\n")

	equal(t, "gc", h.ok("gc", "--grace", "0s")[:len("dropped 0 commits, deleted ")], "dropped 0 commits, deleted ")
	st := decode[satchel.GCStats](t, h.ok("gc", "--json"))
	if st.Dropped != 0 {
		t.Errorf("gc --json = %+v", st)
	}
	h.refused("--grace must not be negative, was -1s", "gc", "--grace", "-1s")
	equal(t, "content after gc", h.ok("fs", "read", "a.md"), "xxxxx")
	equal(t, "checkpoint after gc", h.ok("fs", "read", "a.md", "--at", "first"), "x")
}

// TestUnchangedCLI: a command that changes nothing makes no commit and
// says so.
func TestUnchangedCLI(t *testing.T) {
	h := newHarness(t)
	h.ok("fs", "write", "a.md", "one\n")
	h.ok("checkpoint", "v1")
	equal(t, "write", h.ok("fs", "write", "a.md", "one\n"), "unchanged: a.md already has this content\n")
	equal(t, "write --json", h.ok("fs", "write", "a.md", "one\n", "--json"), `{"path":"a.md","size":4,"hash":"`+satchel.Hash("one\n")+`","unchanged":true}`+"\n")
	equal(t, "edit", h.ok("fs", "edit", "a.md", "--old", "one", "--new", "one"), "unchanged: the replacement leaves a.md as it was\n")
	equal(t, "restore", h.ok("restore", "v1"), "unchanged: the head (commit 1) already has the files of v1\n")
	equal(t, "log", logFields(t, h.ok("log")), [][]string{{"1", "v1", "write a.md"}})
}

// TestGCSaysWhatTheGraceKept: right after retain, gc's grace keeps the
// packs of the commits it dropped, and gc says how many and how to reclaim
// them now; --grace 0s does.
func TestGCSaysWhatTheGraceKept(t *testing.T) {
	h := newHarness(t)
	for i := range 4 {
		h.ok("fs", "write", "a.md", strings.Repeat("x", i+1))
	}
	h.ok("retain", "--max-commits", "1")
	equal(t, "gc within the grace", h.ok("gc"),
		"dropped 0 commits, deleted 0 packs, rewrote 0 packs; 3 packs dropped less than 1m ago were kept; --grace 0s reclaims them now\n")
	equal(t, "gc --grace 0s", h.ok("gc", "--grace", "0s"), "dropped 0 commits, deleted 3 packs, rewrote 0 packs\n")
	equal(t, "gc after", h.ok("gc", "--json"), `{"dropped":0,"packs_deleted":0,"packs_rewritten":0,"packs_kept":0}`+"\n")
	equal(t, "durations", []string{shortDuration(time.Minute), shortDuration(90 * time.Second), shortDuration(2 * time.Hour)}, []string{"1m", "1m30s", "2h"})
}
