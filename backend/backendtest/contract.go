package backendtest

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/satchel-dev/satchel/backend"
)

// RunContract checks that the backends made by open keep every promise of
// the backend.Backend contract. Each check is a subtest, run in order and
// not in parallel, with a fresh backend: open must return an empty backend
// of its own (a new file, a new schema), and may register cleanups with
// t.Cleanup. RunContract closes each backend when its subtest ends; open
// must not close it.
//
// Times are checked against the backend's own clock (Now), with a slack of
// clockSlack for databases whose commit times are taken at the start of a
// transaction; the suite never sleeps.
func RunContract(t *testing.T, open func(t *testing.T) backend.Backend) {
	t.Helper()
	for _, c := range contractChecks {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // each check has a backend of its own
			b := open(t)
			t.Cleanup(func() {
				if err := b.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			c.check(t, b)
		})
	}
}

// clockSlack is how far a commit's or a thread's time may lie outside the
// interval of Now calls around the call that stored it.
const clockSlack = time.Second

type contractCheck struct {
	name  string
	check func(t *testing.T, b backend.Backend)
}

var contractChecks = []contractCheck{
	{"Now", checkNow},
	{"Keys", checkKeys},
	{"CreateThread", checkCreateThread},
	{"GitMapper", checkGitMapper},
	{"ThreadCreateFlag", checkThreadCreateFlag},
	{"ThreadsList", checkThreadsList},
	{"Scopes", checkScopes},
	{"DeleteThread", checkDeleteThread},
	{"Fork", checkFork},
	{"CheckpointCommit", checkCheckpointCommit},
	{"ThreadHeads", checkThreadHeads},
	{"HeadEmpty", checkHeadEmpty},
	{"AppendFirstAndNext", checkAppendFirstAndNext},
	{"AppendStale", checkAppendStale},
	{"AppendStaleHead", checkAppendStaleHead},
	{"AppendChained", checkAppendChained},
	{"AppendChainedQuota", checkAppendChainedQuota},
	{"AppendUnknownThread", checkAppendUnknownThread},
	{"AppendEntriesIndependent", checkAppendEntriesIndependent},
	{"AppendSameThreadTwice", checkAppendSameThreadTwice},
	{"AppendEmpty", checkAppendEmpty},
	{"RoundTrip", checkRoundTrip},
	{"BigPack", checkBigPack},
	{"CommitIDs", checkCommitIDs},
	{"CommitIDsNeverReused", checkCommitIDsNeverReused},
	{"PackMissing", checkPackMissing},
	{"Log", checkLog},
	{"CommitAt", checkCommitAt},
	{"Checkpoints", checkCheckpoints},
	{"CheckpointOrder", checkCheckpointOrder},
	{"AppendCheckpoint", checkAppendCheckpoint},
	{"Drop", checkDrop},
	{"DropCheckpoints", checkDropCheckpoints},
	{"Requires", checkRequires},
	{"GCSnapshot", checkGCSnapshot},
	{"GCSnapshotCutoff", checkGCSnapshotCutoff},
	{"DeletePacks", checkDeletePacks},
	{"RewritePack", checkRewritePack},
	{"PurgeScope", checkPurgeScope},
	{"DocsByScope", checkDocsByScope},
	{"Settings", checkSettings},
	{"SettingsList", checkSettingsList},
	{"ConcurrentOneThread", checkConcurrentOneThread},
	{"ConcurrentManyThreads", checkConcurrentManyThreads},
	{"ConcurrentGroupCommit", checkConcurrentGroupCommit},
	{"ConcurrentDropRequires", checkConcurrentDropRequires},
	{"Porter", checkPorter},
	{"ReplaceDocs", checkReplaceDocs},
	{"ReplaceDocsConcurrent", checkReplaceDocsConcurrent},
	{"ReplaceDocsMixed", checkReplaceDocsMixed},
	{"ReplaceDocsRefusedWhole", checkReplaceDocsRefusedWhole},
	{"ThreadLocker", checkThreadLocker},
	{"HeadPackReader", checkHeadPackReader},
	{"PacksReader", checkPacksReader},
}

// ---- helpers ----

func now(t *testing.T, b backend.Backend) time.Time {
	t.Helper()
	n, err := b.Now(t.Context())
	if err != nil {
		t.Fatalf("Now: %v", err)
	}
	return n
}

func newThread(t *testing.T, b backend.Backend, scope, name string) backend.Thread {
	t.Helper()
	th, err := b.CreateThread(t.Context(), scope, name)
	if err != nil {
		t.Fatalf("CreateThread(%q, %q): %v", scope, name, err)
	}
	return th
}

// nc is a new commit whose root, meta and pack are derived from its thread
// and sequence number, so that a read can tell which append stored it.
func nc(thread, seq int64) backend.NewCommit {
	return backend.NewCommit{
		Thread: thread,
		Seq:    seq,
		Root:   []byte(fmt.Sprintf("root-%d-%d", thread, seq)),
		Meta:   []byte(fmt.Sprintf(`{"thread":%d,"seq":%d}`, thread, seq)),
		Pack:   []byte(fmt.Sprintf("pack-%d-%d", thread, seq)),
	}
}

// tryAppend appends one commit; a failure of the whole call is fatal, the
// entry's own error is returned.
func tryAppend(t *testing.T, b backend.Backend, c backend.NewCommit) (backend.Commit, error) {
	t.Helper()
	res, err := b.Append(t.Context(), []backend.NewCommit{c})
	if err != nil {
		t.Fatalf("Append(thread %d, seq %d): whole call failed: %v", c.Thread, c.Seq, err)
	}
	if len(res) != 1 {
		t.Fatalf("Append of 1 entry returned %d results", len(res))
	}
	return res[0].Commit, res[0].Err
}

func mustAppend(t *testing.T, b backend.Backend, c backend.NewCommit) backend.Commit {
	t.Helper()
	got, err := tryAppend(t, b, c)
	if err != nil {
		t.Fatalf("Append(thread %d, seq %d): %v", c.Thread, c.Seq, err)
	}
	return got
}

// commits appends commits 1..n to a thread that must be empty.
func commits(t *testing.T, b backend.Backend, thread int64, n int) []backend.Commit {
	t.Helper()
	out := make([]backend.Commit, n)
	for i := range n {
		out[i] = mustAppend(t, b, nc(thread, int64(i+1)))
	}
	return out
}

func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s: error %v, want %v", what, err, want)
	}
}

func sameCommit(t *testing.T, what string, got, want backend.Commit) {
	t.Helper()
	if got.ID != want.ID || got.Thread != want.Thread || got.Seq != want.Seq ||
		!bytes.Equal(got.Root, want.Root) || !bytes.Equal(got.Meta, want.Meta) ||
		!got.Time.Equal(want.Time) {
		t.Errorf("%s: got %s, want %s", what, fmtCommit(got), fmtCommit(want))
	}
}

func fmtCommit(c backend.Commit) string {
	return fmt.Sprintf("{ID:%d Thread:%d Seq:%d Root:%q Meta:%q Time:%s}",
		c.ID, c.Thread, c.Seq, c.Root, c.Meta, c.Time.Format(time.RFC3339Nano))
}

func within(t *testing.T, what string, got, lo, hi time.Time) {
	t.Helper()
	if got.IsZero() {
		t.Errorf("%s: zero time", what)
		return
	}
	if got.Before(lo.Add(-clockSlack)) || got.After(hi.Add(clockSlack)) {
		t.Errorf("%s: time %s outside [%s, %s] (backend clock, slack %s)", what,
			got.Format(time.RFC3339Nano), lo.Format(time.RFC3339Nano), hi.Format(time.RFC3339Nano), clockSlack)
	}
}

func head(t *testing.T, b backend.Backend, thread int64) (backend.Commit, bool) {
	t.Helper()
	c, ok, err := b.Head(t.Context(), thread)
	if err != nil {
		t.Fatalf("Head(%d): %v", thread, err)
	}
	return c, ok
}

func headSeq(t *testing.T, b backend.Backend, thread int64) int64 {
	t.Helper()
	c, ok := head(t, b, thread)
	if !ok {
		return 0
	}
	return c.Seq
}

func logSeqs(t *testing.T, b backend.Backend, thread, before int64, limit int) []int64 {
	t.Helper()
	l, err := b.Log(t.Context(), thread, before, limit)
	if err != nil {
		t.Fatalf("Log(%d, %d, %d): %v", thread, before, limit, err)
	}
	seqs := make([]int64, 0, len(l))
	for _, c := range l {
		seqs = append(seqs, c.Seq)
	}
	return seqs
}

func pack(t *testing.T, b backend.Backend, id int64) string {
	t.Helper()
	p, err := b.Pack(t.Context(), id)
	if err != nil {
		t.Fatalf("Pack(%d): %v", id, err)
	}
	return p
}

func checkpoints(t *testing.T, b backend.Backend, thread int64) []backend.Checkpoint {
	t.Helper()
	cps, err := b.Checkpoints(t.Context(), thread)
	if err != nil {
		t.Fatalf("Checkpoints(%d): %v", thread, err)
	}
	return cps
}

func drop(t *testing.T, b backend.Backend, thread int64, seqs ...int64) {
	t.Helper()
	if err := b.Drop(t.Context(), thread, seqs); err != nil {
		t.Fatalf("Drop(%d, %v): %v", thread, seqs, err)
	}
}

func threadNames(ts []backend.Thread) []string {
	names := make([]string, len(ts))
	for i, th := range ts {
		names[i] = th.Name
	}
	return names
}

// sameRetained checks that a GCSnapshot's Retained lists exactly the given
// commits, in any order, each with its ID, Thread, Seq and Root.
func sameRetained(t *testing.T, what string, got []backend.Commit, want ...backend.Commit) {
	t.Helper()
	key := func(c backend.Commit) string {
		return fmt.Sprintf("{ID:%d Thread:%d Seq:%d Root:%q}", c.ID, c.Thread, c.Seq, c.Root)
	}
	g := make([]string, len(got))
	for i, c := range got {
		g[i] = key(c)
	}
	w := make([]string, len(want))
	for i, c := range want {
		w[i] = key(c)
	}
	sort.Strings(g)
	sort.Strings(w)
	if !slices.Equal(g, w) {
		t.Errorf("%s: Retained = %v, want %v", what, g, w)
	}
}

// ---- threads ----

func checkNow(t *testing.T, b backend.Backend) {
	n1 := now(t, b)
	n2 := now(t, b)
	if n1.IsZero() || n2.IsZero() {
		t.Fatalf("Now returned a zero time")
	}
	if n2.Before(n1.Add(-clockSlack)) {
		t.Errorf("Now went back from %s to %s", n1, n2)
	}
}
