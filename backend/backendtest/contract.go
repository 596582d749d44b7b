package backendtest

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
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

func checkCreateThread(t *testing.T, b backend.Backend) {
	ctx := t.Context()
	before := now(t, b)
	a := newThread(t, b, "s", "main")
	after := now(t, b)
	if a.ID <= 0 || a.Scope != "s" || a.Name != "main" {
		t.Errorf("CreateThread returned %+v", a)
	}
	within(t, "thread Created", a.Created, before, after)

	_, err := b.CreateThread(ctx, "s", "main")
	wantErr(t, "CreateThread of a taken name", err, backend.ErrThreadExists)

	other := newThread(t, b, "s", "other")
	sameName := newThread(t, b, "s2", "main")
	if other.ID == a.ID || sameName.ID == a.ID || other.ID == sameName.ID {
		t.Errorf("thread IDs not distinct: %d, %d, %d", a.ID, other.ID, sameName.ID)
	}

	got, err := b.Thread(ctx, "s", "main", false)
	if err != nil {
		t.Fatalf("Thread: %v", err)
	}
	if got.ID != a.ID || got.Scope != a.Scope || got.Name != a.Name || !got.Created.Equal(a.Created) {
		t.Errorf("Thread returned %+v, CreateThread %+v", got, a)
	}
	// A name is any string: the backend stores it byte for byte.
	odd := "név/with spaces\x01and\u00e9"
	th := newThread(t, b, "scope with ' quote", odd)
	got, err = b.Thread(ctx, "scope with ' quote", odd, false)
	if err != nil || got.ID != th.ID || got.Name != odd {
		t.Errorf("Thread(odd name) = %+v, %v; want ID %d", got, err, th.ID)
	}
}

func checkThreadCreateFlag(t *testing.T, b backend.Backend) {
	ctx := t.Context()
	_, err := b.Thread(ctx, "s", "missing", false)
	wantErr(t, "Thread of a missing thread without create", err, backend.ErrNoThread)

	created, err := b.Thread(ctx, "s", "new", true)
	if err != nil {
		t.Fatalf("Thread(create): %v", err)
	}
	if created.ID <= 0 || created.Name != "new" || created.Scope != "s" || created.Created.IsZero() {
		t.Errorf("Thread(create) returned %+v", created)
	}
	again, err := b.Thread(ctx, "s", "new", true)
	if err != nil {
		t.Fatalf("Thread(create) of an existing thread: %v", err)
	}
	if again.ID != created.ID {
		t.Errorf("Thread(create) twice gave IDs %d and %d", created.ID, again.ID)
	}
	if _, ok := head(t, b, created.ID); ok {
		t.Errorf("a thread made by Thread(create) is not empty")
	}
	_, err = b.CreateThread(ctx, "s", "new")
	wantErr(t, "CreateThread after Thread(create)", err, backend.ErrThreadExists)

	// Many callers creating one thread at once all get the same one.
	const n = 8
	ids := make([]int64, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			th, err := b.Thread(ctx, "s", "raced", true)
			ids[i], errs[i] = th.ID, err
		})
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("concurrent Thread(create): %v", errs[i])
		}
		if ids[i] != ids[0] {
			t.Fatalf("concurrent Thread(create) gave different IDs: %v", ids)
		}
	}
}

func checkThreadsList(t *testing.T, b backend.Backend) {
	ctx := t.Context()
	l, err := b.Threads(ctx, "s")
	if err != nil {
		t.Fatalf("Threads of an empty scope: %v", err)
	}
	if len(l) != 0 {
		t.Errorf("Threads of an empty scope: %v", threadNames(l))
	}
	// Sorted by name in byte order, whatever the database's locale.
	names := []string{"b", "a", "B", "a.b", "a-b", "\u00e9", "Z", "a_b", "aa", "_"}
	byID := map[string]int64{}
	for _, n := range names {
		byID[n] = newThread(t, b, "s", n).ID
	}
	newThread(t, b, "other", "c")
	newThread(t, b, "s-other", "d")
	l, err = b.Threads(ctx, "s")
	if err != nil {
		t.Fatalf("Threads: %v", err)
	}
	want := slices.Clone(names)
	slices.Sort(want)
	if got := threadNames(l); !slices.Equal(got, want) {
		t.Errorf("Threads = %q, want %q (byte order)", got, want)
	}
	for _, th := range l {
		if th.Scope != "s" || th.ID != byID[th.Name] || th.Created.IsZero() {
			t.Errorf("Threads listed %+v", th)
		}
	}
}

func checkScopes(t *testing.T, b backend.Backend) {
	ctx := t.Context()
	got, err := b.Scopes(ctx)
	if err != nil {
		t.Fatalf("Scopes: %v", err)
	}
	if len(got) != 0 {
		t.Errorf("Scopes of an empty backend = %q", got)
	}
	for _, s := range []string{"b", "a", "B", "a", "\u00e9"} {
		if _, err := b.Thread(ctx, s, "main", true); err != nil {
			t.Fatal(err)
		}
	}
	newThread(t, b, "a", "second")
	got, err = b.Scopes(ctx)
	if err != nil {
		t.Fatalf("Scopes: %v", err)
	}
	if want := []string{"B", "a", "b", "\u00e9"}; !slices.Equal(got, want) {
		t.Errorf("Scopes = %q, want %q", got, want)
	}
	// A scope whose last thread is deleted is no longer listed.
	th, err := b.Thread(ctx, "B", "main", false)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.DeleteThread(ctx, th.ID); err != nil {
		t.Fatal(err)
	}
	got, err = b.Scopes(ctx)
	if err != nil {
		t.Fatalf("Scopes: %v", err)
	}
	if want := []string{"a", "b", "\u00e9"}; !slices.Equal(got, want) {
		t.Errorf("Scopes after deleting B's only thread = %q, want %q", got, want)
	}
}

func checkDeleteThread(t *testing.T, b backend.Backend) {
	ctx := t.Context()
	th := newThread(t, b, "s", "doomed")
	keep := newThread(t, b, "s", "kept")
	cs := commits(t, b, th.ID, 3)
	kc := commits(t, b, keep.ID, 1)
	if err := b.SetCheckpoint(ctx, th.ID, "cp", 2); err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct{ thread, key string }{{"doomed", "k"}, {"kept", "k"}, {"", "k"}} {
		if err := b.PutSetting(ctx, "s", s.thread, s.key, []byte("v-"+s.thread)); err != nil {
			t.Fatal(err)
		}
	}

	if err := b.DeleteThread(ctx, th.ID); err != nil {
		t.Fatalf("DeleteThread: %v", err)
	}
	wantErr(t, "DeleteThread twice", b.DeleteThread(ctx, th.ID), backend.ErrNoThread)
	wantErr(t, "DeleteThread of an unknown id", b.DeleteThread(ctx, 1<<40), backend.ErrNoThread)

	_, err := b.Thread(ctx, "s", "doomed", false)
	wantErr(t, "Thread after DeleteThread", err, backend.ErrNoThread)
	_, _, err = b.Head(ctx, th.ID)
	wantErr(t, "Head of a deleted thread", err, backend.ErrNoThread)
	_, err = b.Log(ctx, th.ID, 0, 0)
	wantErr(t, "Log of a deleted thread", err, backend.ErrNoThread)
	_, err = b.CommitAt(ctx, th.ID, 1)
	wantErr(t, "CommitAt of a deleted thread", err, backend.ErrNoThread)
	_, err = b.Checkpoints(ctx, th.ID)
	wantErr(t, "Checkpoints of a deleted thread", err, backend.ErrNoThread)
	_, err = tryAppend(t, b, nc(th.ID, 4))
	wantErr(t, "Append to a deleted thread", err, backend.ErrNoThread)
	if l, _ := b.Threads(ctx, "s"); !slices.Equal(threadNames(l), []string{"kept"}) {
		t.Errorf("Threads after DeleteThread = %q", threadNames(l))
	}

	// Its packs stay (forks may share them) until collected: they are dropped.
	for _, c := range cs {
		if got := pack(t, b, c.ID); got != string(nc(th.ID, c.Seq).Pack) {
			t.Errorf("pack of a deleted thread's commit = %q", got)
		}
	}
	snap, err := b.GCSnapshot(ctx, "s", now(t, b).Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	want := []int64{cs[0].ID, cs[1].ID, cs[2].ID}
	if !slices.Equal(sortedIDs(snap.Dropped), want) {
		t.Errorf("GCSnapshot.Dropped after DeleteThread = %v, want %v", snap.Dropped, want)
	}
	sameRetained(t, "GCSnapshot after DeleteThread", snap.Retained, kc[0])

	// Its settings went with it; the scope's and other threads' did not.
	if _, ok, _ := b.Setting(ctx, "s", "doomed", "k"); ok {
		t.Errorf("a deleted thread's setting survived")
	}
	for _, name := range []string{"kept", ""} {
		if v, ok, err := b.Setting(ctx, "s", name, "k"); err != nil || !ok || string(v) != "v-"+name {
			t.Errorf("Setting(s, %q, k) after deleting another thread = %q, %v, %v", name, v, ok, err)
		}
	}

	// The name is free again, for a new, empty thread with a new id.
	again := newThread(t, b, "s", "doomed")
	if again.ID == th.ID {
		t.Errorf("a re-created thread reused ID %d", th.ID)
	}
	if _, ok := head(t, b, again.ID); ok {
		t.Errorf("a re-created thread is not empty")
	}
	if cps := checkpoints(t, b, again.ID); len(cps) != 0 {
		t.Errorf("a re-created thread has checkpoints %v", cps)
	}
	if _, err := b.CheckpointSeq(ctx, again.ID, "cp"); !errors.Is(err, backend.ErrNoCheckpoint) {
		t.Errorf("CheckpointSeq in a re-created thread: %v, want ErrNoCheckpoint", err)
	}
	mustAppend(t, b, nc(again.ID, 1))
}

func sortedIDs(ids []int64) []int64 {
	s := slices.Clone(ids)
	slices.Sort(s)
	return s
}

// ---- appends ----

func checkHeadEmpty(t *testing.T, b backend.Backend) {
	th := newThread(t, b, "s", "main")
	c, ok, err := b.Head(t.Context(), th.ID)
	if err != nil || ok {
		t.Errorf("Head of an empty thread = %+v, %v, %v; want ok false", c, ok, err)
	}
	_, _, err = b.Head(t.Context(), th.ID+1000)
	wantErr(t, "Head of an unknown thread", err, backend.ErrNoThread)
	l, err := b.Log(t.Context(), th.ID, 0, 0)
	if err != nil || len(l) != 0 {
		t.Errorf("Log of an empty thread = %v, %v", l, err)
	}
}

func checkAppendFirstAndNext(t *testing.T, b backend.Backend) {
	th := newThread(t, b, "s", "main")
	before := now(t, b)
	c1 := mustAppend(t, b, nc(th.ID, 1))
	after := now(t, b)
	want := nc(th.ID, 1)
	if c1.ID <= 0 || c1.Thread != th.ID || c1.Seq != 1 || !bytes.Equal(c1.Root, want.Root) || !bytes.Equal(c1.Meta, want.Meta) {
		t.Errorf("Append returned %s", fmtCommit(c1))
	}
	within(t, "commit Time", c1.Time, before, after)
	h, ok := head(t, b, th.ID)
	if !ok {
		t.Fatalf("Head after an append: none")
	}
	sameCommit(t, "Head after the first append", h, c1)

	c2 := mustAppend(t, b, nc(th.ID, 2))
	h, _ = head(t, b, th.ID)
	sameCommit(t, "Head after the second append", h, c2)
	if c2.ID <= c1.ID {
		t.Errorf("commit IDs did not grow: %d then %d", c1.ID, c2.ID)
	}
	if c2.Time.Before(c1.Time.Add(-clockSlack)) {
		t.Errorf("commit times went back: %s then %s", c1.Time, c2.Time)
	}
}

func checkAppendStale(t *testing.T, b backend.Backend) {
	th := newThread(t, b, "s", "main")
	for _, seq := range []int64{0, -1, 2} {
		_, err := tryAppend(t, b, nc(th.ID, seq))
		wantErr(t, fmt.Sprintf("Append seq %d to an empty thread", seq), err, backend.ErrStale)
	}
	commits(t, b, th.ID, 3)
	for _, seq := range []int64{1, 2, 3, 5, 100, 0} {
		_, err := tryAppend(t, b, nc(th.ID, seq))
		wantErr(t, fmt.Sprintf("Append seq %d at head 3", seq), err, backend.ErrStale)
	}
	if got := logSeqs(t, b, th.ID, 0, 0); !slices.Equal(got, []int64{3, 2, 1}) {
		t.Errorf("stale appends changed the log: %v", got)
	}
	h, _ := head(t, b, th.ID)
	if !bytes.Equal(h.Root, nc(th.ID, 3).Root) {
		t.Errorf("a stale append overwrote the head: %s", fmtCommit(h))
	}
	mustAppend(t, b, nc(th.ID, 4))
}

// checkAppendStaleHead: a stale entry's Head, when the backend fills it,
// is the thread's newest commit as Head returns it, and never a head as
// old as the entry's base (which would send the engine round again).
func checkAppendStaleHead(t *testing.T, b backend.Backend) {
	th := newThread(t, b, "s", "main")
	commits(t, b, th.ID, 3)
	want, _ := head(t, b, th.ID)
	for _, seq := range []int64{1, 2, 3, 5} {
		res, err := b.Append(t.Context(), []backend.NewCommit{nc(th.ID, seq)})
		if err != nil {
			t.Fatalf("Append seq %d: %v", seq, err)
		}
		wantErr(t, fmt.Sprintf("Append seq %d at head 3", seq), res[0].Err, backend.ErrStale)
		hd := res[0].Head
		if hd.Seq == 0 {
			continue
		}
		if seq > 3 {
			t.Errorf("Append seq %d at head 3: Head %s, older than the entry's base", seq, fmtCommit(hd))
			continue
		}
		sameCommit(t, fmt.Sprintf("Head of a stale append at seq %d", seq), hd, want)
	}
}

// checkAppendChained: an entry marked Chained is stored only right after
// the entry before it in the call, of its thread at Seq-1, when that one
// is stored; never on another writer's commit.
func checkAppendChained(t *testing.T, b backend.Backend) {
	ctx := t.Context()
	th := newThread(t, b, "s", "main")
	other := newThread(t, b, "s", "other")
	commits(t, b, th.ID, 1)
	chained := func(seq int64) backend.NewCommit {
		c := nc(th.ID, seq)
		c.Chained = true
		return c
	}
	appendAll := func(what string, ncs ...backend.NewCommit) []backend.AppendResult {
		t.Helper()
		res, err := b.Append(ctx, ncs)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return res
	}

	// A chain of three after a plain entry: all stored, in order.
	res := appendAll("a chain", nc(th.ID, 2), chained(3), chained(4))
	for i, r := range res {
		if r.Err != nil {
			t.Fatalf("a chain: entry %d: %v", i, r.Err)
		}
		if i > 0 && r.Commit.ID <= res[i-1].Commit.ID {
			t.Errorf("a chain: entry %d has ID %d, not above the one before (%d)", i, r.Commit.ID, res[i-1].Commit.ID)
		}
	}
	if got := logSeqs(t, b, th.ID, 0, 0); !slices.Equal(got, []int64{4, 3, 2, 1}) {
		t.Errorf("log after a chain: %v, want [4 3 2 1]", got)
	}

	// Another writer took seq 5: the entry at 5 is stale, and the one
	// chained to it must not land on the other writer's commit.
	foreign := mustAppend(t, b, nc(th.ID, 5))
	res = appendAll("a chain after a lost race", nc(th.ID, 5), chained(6))
	wantErr(t, "the entry that lost the race", res[0].Err, backend.ErrStale)
	wantErr(t, "the entry chained to it", res[1].Err, backend.ErrStale)
	if h, _ := head(t, b, th.ID); h.ID != foreign.ID {
		t.Errorf("head after a refused chain: %s, want the other writer's %s", fmtCommit(h), fmtCommit(foreign))
	}

	// Chained entries that follow nothing they can build on.
	res = appendAll("chained first", chained(6))
	wantErr(t, "a chained entry first in its call", res[0].Err, backend.ErrStale)
	res = appendAll("chained after another thread", nc(other.ID, 1), chained(6))
	if res[0].Err != nil {
		t.Errorf("the other thread's entry: %v", res[0].Err)
	}
	wantErr(t, "a chained entry after another thread's", res[1].Err, backend.ErrStale)
	res = appendAll("chained over a gap", nc(th.ID, 6), chained(8))
	if res[0].Err != nil {
		t.Errorf("the entry at 6: %v", res[0].Err)
	}
	wantErr(t, "a chained entry two seqs past the one before it", res[1].Err, backend.ErrStale)
	if got := headSeq(t, b, th.ID); got != 6 {
		t.Errorf("head seq %d after the refused chains, want 6", got)
	}
}

func checkAppendUnknownThread(t *testing.T, b backend.Backend) {
	th := newThread(t, b, "s", "main")
	_, err := tryAppend(t, b, nc(th.ID+1000, 1))
	wantErr(t, "Append to an unknown thread", err, backend.ErrNoThread)
}

func checkAppendEntriesIndependent(t *testing.T, b backend.Backend) {
	ctx := t.Context()
	a := newThread(t, b, "s", "a")
	bb := newThread(t, b, "s", "b")
	c := newThread(t, b, "other", "c")
	d := newThread(t, b, "s", "d")
	commits(t, b, a.ID, 1)
	commits(t, b, bb.ID, 4)
	if err := b.SetCheckpoint(ctx, d.ID, "x", 0); !errors.Is(err, backend.ErrNoCommit) {
		t.Errorf("SetCheckpoint on an empty thread: %v, want ErrNoCommit", err)
	}
	commits(t, b, d.ID, 1)
	if err := b.SetCheckpoint(ctx, d.ID, "taken", 1); err != nil {
		t.Fatal(err)
	}
	dup := nc(d.ID, 2)
	dup.Checkpoint = "taken"
	gone := nc(bb.ID, 5)
	gone.Requires = &backend.CommitID{Thread: a.ID, Seq: 99}

	entries := []backend.NewCommit{
		nc(a.ID, 2),  // ok
		nc(bb.ID, 3), // stale
		nc(c.ID, 1),  // ok, another scope
		nc(1<<40, 1), // no thread
		dup,          // checkpoint taken
		gone,         // requires a commit that does not exist
		nc(bb.ID, 5), // ok: the failed entries before it changed nothing
		nc(a.ID, 2),  // stale now: the first entry took seq 2
		nc(d.ID, 2),  // ok: the failed checkpoint entry did not store seq 2
	}
	res, err := b.Append(ctx, entries)
	if err != nil {
		t.Fatalf("Append: %v", err)
	}
	if len(res) != len(entries) {
		t.Fatalf("Append of %d entries returned %d results", len(entries), len(res))
	}
	wantErrs := []error{nil, backend.ErrStale, nil, backend.ErrNoThread, backend.ErrCheckpointExists,
		backend.ErrNotRetained, nil, backend.ErrStale, nil}
	for i, want := range wantErrs {
		if want == nil {
			if res[i].Err != nil {
				t.Errorf("entry %d (thread %d seq %d): %v, want success", i, entries[i].Thread, entries[i].Seq, res[i].Err)
				continue
			}
			e := entries[i]
			if got := res[i].Commit; got.Thread != e.Thread || got.Seq != e.Seq || !bytes.Equal(got.Root, e.Root) || got.ID <= 0 {
				t.Errorf("entry %d: commit %s", i, fmtCommit(got))
			}
			continue
		}
		wantErr(t, fmt.Sprintf("entry %d (thread %d seq %d)", i, entries[i].Thread, entries[i].Seq), res[i].Err, want)
	}
	for _, w := range []struct {
		thread int64
		head   int64
	}{{a.ID, 2}, {bb.ID, 5}, {c.ID, 1}, {d.ID, 2}} {
		if got := headSeq(t, b, w.thread); got != w.head {
			t.Errorf("head of thread %d = %d, want %d", w.thread, got, w.head)
		}
	}
	if seq, err := b.CheckpointSeq(ctx, d.ID, "taken"); err != nil || seq != 1 {
		t.Errorf("a failed entry moved checkpoint taken: %d, %v", seq, err)
	}
	// The successful entries are each readable with their pack.
	for i, r := range res {
		if r.Err == nil {
			if got := pack(t, b, r.Commit.ID); got != string(entries[i].Pack) {
				t.Errorf("entry %d: pack %q", i, got)
			}
		}
	}
}

func checkAppendSameThreadTwice(t *testing.T, b backend.Backend) {
	th := newThread(t, b, "s", "main")
	res, err := b.Append(t.Context(), []backend.NewCommit{nc(th.ID, 1), nc(th.ID, 2), nc(th.ID, 4), nc(th.ID, 3)})
	if err != nil {
		t.Fatal(err)
	}
	wantErrs := []error{nil, nil, backend.ErrStale, nil}
	for i, want := range wantErrs {
		if !errors.Is(res[i].Err, want) || (want == nil && res[i].Err != nil) {
			t.Errorf("entry %d: error %v, want %v", i, res[i].Err, want)
		}
	}
	if got := logSeqs(t, b, th.ID, 0, 0); !slices.Equal(got, []int64{3, 2, 1}) {
		t.Errorf("log = %v, want [3 2 1]", got)
	}
	if res[1].Commit.ID <= res[0].Commit.ID || res[3].Commit.ID <= res[1].Commit.ID {
		t.Errorf("IDs in one append did not grow in entry order: %d %d %d", res[0].Commit.ID, res[1].Commit.ID, res[3].Commit.ID)
	}
}

func checkAppendEmpty(t *testing.T, b backend.Backend) {
	res, err := b.Append(t.Context(), nil)
	if err != nil || len(res) != 0 {
		t.Errorf("Append(nil) = %v, %v", res, err)
	}
}

func checkRoundTrip(t *testing.T, b backend.Backend) {
	th := newThread(t, b, "s", "main")
	binary := make([]byte, 256)
	for i := range binary {
		binary[i] = byte(i)
	}
	cases := []struct {
		name             string
		root, meta, pack []byte
	}{
		{"binary", binary, []byte(`{"a":"\u0000é"}`), append([]byte{0, 0xff, 0xfe, '\'', '"', '\\'}, binary...)},
		{"empty pack", []byte("r"), []byte("{}"), []byte{}},
		{"nil pack", []byte("r2"), []byte("{}"), nil},
		{"empty root and meta", []byte{}, []byte{}, []byte("p")},
		{"nil root and meta", nil, nil, []byte("p2")},
		{"invalid utf-8", []byte{0xc3, 0x28}, []byte{0xa0, 0xa1}, []byte{0xe2, 0x28, 0xa1, 0x00}},
	}
	for i, c := range cases {
		seq := int64(i + 1)
		got := mustAppend(t, b, backend.NewCommit{Thread: th.ID, Seq: seq, Root: c.root, Meta: c.meta, Pack: c.pack})
		if !bytes.Equal(got.Root, c.root) || !bytes.Equal(got.Meta, c.meta) {
			t.Errorf("%s: Append returned root %q meta %q", c.name, got.Root, got.Meta)
		}
		at, err := b.CommitAt(t.Context(), th.ID, seq)
		if err != nil {
			t.Fatalf("%s: CommitAt: %v", c.name, err)
		}
		sameCommit(t, c.name+": CommitAt", at, got)
		if p := pack(t, b, got.ID); p != string(c.pack) {
			t.Errorf("%s: pack = %q, want %q", c.name, p, c.pack)
		}
	}
}

func checkBigPack(t *testing.T, b backend.Backend) {
	th := newThread(t, b, "s", "main")
	big := make([]byte, 4<<20)
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < len(big); i += 8 {
		v := r.Uint64()
		for j := 0; j < 8; j++ {
			big[i+j] = byte(v >> (8 * j))
		}
	}
	c := mustAppend(t, b, backend.NewCommit{Thread: th.ID, Seq: 1, Root: []byte("r"), Meta: []byte("{}"), Pack: big})
	if p := pack(t, b, c.ID); p != string(big) {
		t.Errorf("a 4 MiB pack came back different (%d bytes)", len(p))
	}
}

func checkCommitIDs(t *testing.T, b backend.Backend) {
	x := newThread(t, b, "s", "x")
	y := newThread(t, b, "s2", "y")
	var last int64
	seen := map[int64]bool{}
	for i := range 10 {
		for _, th := range []int64{x.ID, y.ID} {
			c := mustAppend(t, b, nc(th, int64(i+1)))
			if c.ID <= last {
				t.Errorf("commit ID %d after %d: IDs must grow", c.ID, last)
			}
			if seen[c.ID] {
				t.Errorf("commit ID %d given twice", c.ID)
			}
			seen[c.ID] = true
			last = c.ID
		}
	}
}

func checkCommitIDsNeverReused(t *testing.T, b backend.Backend) {
	ctx := t.Context()
	th := newThread(t, b, "s", "gone")
	cs := commits(t, b, th.ID, 3)
	maxID := cs[2].ID
	// Deleting the thread drops all its commits, including the newest ID of
	// the whole store; deleting their packs must not free that ID.
	if err := b.DeleteThread(ctx, th.ID); err != nil {
		t.Fatal(err)
	}
	ids := []int64{cs[0].ID, cs[1].ID, cs[2].ID}
	if err := b.DeletePacks(ctx, ids); err != nil {
		t.Fatalf("DeletePacks: %v", err)
	}
	for _, id := range ids {
		_, err := b.Pack(ctx, id)
		wantErr(t, "Pack after DeletePacks", err, backend.ErrNoPack)
	}
	other := newThread(t, b, "s", "other")
	c := mustAppend(t, b, nc(other.ID, 1))
	if c.ID <= maxID {
		t.Errorf("commit ID %d after deleting packs up to %d: IDs must never be reused", c.ID, maxID)
	}
	again := newThread(t, b, "s", "gone")
	c2 := mustAppend(t, b, nc(again.ID, 1))
	if c2.ID <= c.ID {
		t.Errorf("commit ID %d after %d", c2.ID, c.ID)
	}
	if pack(t, b, c2.ID) != string(nc(again.ID, 1).Pack) {
		t.Errorf("new commit's pack is wrong")
	}
}

func checkPackMissing(t *testing.T, b backend.Backend) {
	_, err := b.Pack(t.Context(), 1<<40)
	wantErr(t, "Pack of an unknown id", err, backend.ErrNoPack)
}

// ---- reads of the log ----

func checkLog(t *testing.T, b backend.Backend) {
	ctx := t.Context()
	th := newThread(t, b, "s", "main")
	other := newThread(t, b, "s", "other")
	cs := commits(t, b, th.ID, 6)
	commits(t, b, other.ID, 2)
	cases := []struct {
		before int64
		limit  int
		want   []int64
	}{
		{0, 0, []int64{6, 5, 4, 3, 2, 1}},
		{-1, -1, []int64{6, 5, 4, 3, 2, 1}},
		{0, 2, []int64{6, 5}},
		{5, 0, []int64{4, 3, 2, 1}},
		{5, 2, []int64{4, 3}},
		{7, 0, []int64{6, 5, 4, 3, 2, 1}},
		{100, 1, []int64{6}},
		{2, 10, []int64{1}},
		{1, 0, []int64{}},
	}
	for _, c := range cases {
		if got := logSeqs(t, b, th.ID, c.before, c.limit); !slices.Equal(got, c.want) {
			t.Errorf("Log(before %d, limit %d) = %v, want %v", c.before, c.limit, got, c.want)
		}
	}
	l, err := b.Log(ctx, th.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range l {
		sameCommit(t, fmt.Sprintf("Log entry %d", i), c, cs[len(cs)-1-i])
	}
	drop(t, b, th.ID, 2, 4, 5)
	for _, c := range []struct {
		before int64
		limit  int
		want   []int64
	}{
		{0, 0, []int64{6, 3, 1}},
		{0, 2, []int64{6, 3}},
		{5, 1, []int64{3}},
		{3, 0, []int64{1}},
	} {
		if got := logSeqs(t, b, th.ID, c.before, c.limit); !slices.Equal(got, c.want) {
			t.Errorf("after dropping 2, 4, 5: Log(before %d, limit %d) = %v, want %v", c.before, c.limit, got, c.want)
		}
	}
	_, err = b.Log(ctx, 1<<40, 0, 0)
	wantErr(t, "Log of an unknown thread", err, backend.ErrNoThread)
}

func checkCommitAt(t *testing.T, b backend.Backend) {
	ctx := t.Context()
	th := newThread(t, b, "s", "main")
	cs := commits(t, b, th.ID, 3)
	for _, c := range cs {
		got, err := b.CommitAt(ctx, th.ID, c.Seq)
		if err != nil {
			t.Fatalf("CommitAt(%d): %v", c.Seq, err)
		}
		sameCommit(t, fmt.Sprintf("CommitAt(%d)", c.Seq), got, c)
	}
	for _, seq := range []int64{0, 4, -1} {
		_, err := b.CommitAt(ctx, th.ID, seq)
		wantErr(t, fmt.Sprintf("CommitAt(%d)", seq), err, backend.ErrNoCommit)
	}
	drop(t, b, th.ID, 2)
	_, err := b.CommitAt(ctx, th.ID, 2)
	wantErr(t, "CommitAt of a dropped commit", err, backend.ErrNoCommit)
	_, err = b.CommitAt(ctx, 1<<40, 1)
	wantErr(t, "CommitAt in an unknown thread", err, backend.ErrNoThread)
}

// ---- checkpoints ----

func checkCheckpoints(t *testing.T, b backend.Backend) {
	ctx := t.Context()
	th := newThread(t, b, "s", "main")
	other := newThread(t, b, "s", "other")
	if cps := checkpoints(t, b, th.ID); len(cps) != 0 {
		t.Errorf("Checkpoints of a new thread = %v", cps)
	}
	commits(t, b, th.ID, 3)
	commits(t, b, other.ID, 1)
	if err := b.SetCheckpoint(ctx, th.ID, "v1", 2); err != nil {
		t.Fatalf("SetCheckpoint: %v", err)
	}
	wantErr(t, "SetCheckpoint of a taken name", b.SetCheckpoint(ctx, th.ID, "v1", 3), backend.ErrCheckpointExists)
	wantErr(t, "SetCheckpoint of a taken name on the same commit", b.SetCheckpoint(ctx, th.ID, "v1", 2), backend.ErrCheckpointExists)
	if err := b.SetCheckpoint(ctx, other.ID, "v1", 1); err != nil {
		t.Errorf("the same checkpoint name in another thread: %v", err)
	}
	wantErr(t, "SetCheckpoint on a missing commit", b.SetCheckpoint(ctx, th.ID, "v9", 9), backend.ErrNoCommit)
	wantErr(t, "SetCheckpoint in an unknown thread", b.SetCheckpoint(ctx, 1<<40, "v", 1), backend.ErrNoThread)

	seq, err := b.CheckpointSeq(ctx, th.ID, "v1")
	if err != nil || seq != 2 {
		t.Errorf("CheckpointSeq(v1) = %d, %v; want 2", seq, err)
	}
	_, err = b.CheckpointSeq(ctx, th.ID, "nope")
	wantErr(t, "CheckpointSeq of an unknown name", err, backend.ErrNoCheckpoint)
	_, err = b.CheckpointSeq(ctx, 1<<40, "v1")
	wantErr(t, "CheckpointSeq in an unknown thread", err, backend.ErrNoThread)
	_, err = b.Checkpoints(ctx, 1<<40)
	wantErr(t, "Checkpoints of an unknown thread", err, backend.ErrNoThread)

	// A checkpoint on a dropped commit is refused.
	drop(t, b, th.ID, 1)
	wantErr(t, "SetCheckpoint on a dropped commit", b.SetCheckpoint(ctx, th.ID, "old", 1), backend.ErrNoCommit)
	// Names are compared byte for byte.
	if err := b.SetCheckpoint(ctx, th.ID, "V1", 3); err != nil {
		t.Errorf("checkpoint V1 beside v1: %v", err)
	}
}

func checkCheckpointOrder(t *testing.T, b backend.Backend) {
	ctx := t.Context()
	th := newThread(t, b, "s", "main")
	commits(t, b, th.ID, 5)
	set := []struct {
		name string
		seq  int64
	}{{"b", 2}, {"z", 1}, {"a", 2}, {"m", 5}, {"B", 2}, {"c", 3}}
	for _, s := range set {
		if err := b.SetCheckpoint(ctx, th.ID, s.name, s.seq); err != nil {
			t.Fatal(err)
		}
	}
	want := []backend.Checkpoint{{Name: "m", Seq: 5}, {Name: "c", Seq: 3}, {Name: "B", Seq: 2}, {Name: "a", Seq: 2}, {Name: "b", Seq: 2}, {Name: "z", Seq: 1}}
	if got := checkpoints(t, b, th.ID); !slices.Equal(got, want) {
		t.Errorf("Checkpoints = %v, want %v (newest commit first, then name in byte order)", got, want)
	}
}

func checkAppendCheckpoint(t *testing.T, b backend.Backend) {
	ctx := t.Context()
	th := newThread(t, b, "s", "main")
	c := nc(th.ID, 1)
	c.Checkpoint = "first"
	got := mustAppend(t, b, c)
	if seq, err := b.CheckpointSeq(ctx, th.ID, "first"); err != nil || seq != got.Seq {
		t.Errorf("CheckpointSeq(first) = %d, %v; want %d", seq, err, got.Seq)
	}
	c = nc(th.ID, 2)
	c.Checkpoint = "first"
	_, err := tryAppend(t, b, c)
	wantErr(t, "Append with a taken checkpoint name", err, backend.ErrCheckpointExists)
	if h := headSeq(t, b, th.ID); h != 1 {
		t.Errorf("an append refused for its checkpoint was stored: head %d", h)
	}
	// A stale entry does not take its checkpoint name.
	c = nc(th.ID, 5)
	c.Checkpoint = "second"
	_, err = tryAppend(t, b, c)
	wantErr(t, "stale Append with a checkpoint", err, backend.ErrStale)
	if _, err := b.CheckpointSeq(ctx, th.ID, "second"); !errors.Is(err, backend.ErrNoCheckpoint) {
		t.Errorf("a stale append set its checkpoint: %v", err)
	}
	c = nc(th.ID, 2)
	c.Checkpoint = "second"
	mustAppend(t, b, c)
	if got := checkpoints(t, b, th.ID); !slices.Equal(got, []backend.Checkpoint{{Name: "second", Seq: 2}, {Name: "first", Seq: 1}}) {
		t.Errorf("Checkpoints = %v", got)
	}
}

// ---- retention ----

func checkDrop(t *testing.T, b backend.Backend) {
	ctx := t.Context()
	th := newThread(t, b, "s", "main")
	cs := commits(t, b, th.ID, 5)
	drop(t, b, th.ID, 2, 4, 4, 99, -1)
	if got := logSeqs(t, b, th.ID, 0, 0); !slices.Equal(got, []int64{5, 3, 1}) {
		t.Errorf("Log after dropping 2 and 4 = %v", got)
	}
	// Dropped packs stay readable until collected.
	if got := pack(t, b, cs[1].ID); got != string(nc(th.ID, 2).Pack) {
		t.Errorf("pack of a dropped commit = %q", got)
	}
	// Dropping again, or nothing, is harmless.
	drop(t, b, th.ID, 2)
	drop(t, b, th.ID)
	// A dropped commit keeps its sequence number: the next append is head+1.
	_, err := tryAppend(t, b, nc(th.ID, 2))
	wantErr(t, "Append of a dropped commit's seq", err, backend.ErrStale)
	mustAppend(t, b, nc(th.ID, 6))
	wantErr(t, "Drop in an unknown thread", b.Drop(ctx, 1<<40, []int64{1}), backend.ErrNoThread)
	empty := newThread(t, b, "s", "empty")
	drop(t, b, empty.ID, 1)
}

func checkDropCheckpoints(t *testing.T, b backend.Backend) {
	ctx := t.Context()
	th := newThread(t, b, "s", "main")
	commits(t, b, th.ID, 4)
	for _, s := range []struct {
		name string
		seq  int64
	}{{"one", 1}, {"two", 2}, {"two-again", 2}, {"four", 4}} {
		if err := b.SetCheckpoint(ctx, th.ID, s.name, s.seq); err != nil {
			t.Fatal(err)
		}
	}
	drop(t, b, th.ID, 2) // never the head: the caller keeps it
	if got := checkpoints(t, b, th.ID); !slices.Equal(got, []backend.Checkpoint{{Name: "four", Seq: 4}, {Name: "one", Seq: 1}}) {
		t.Errorf("Checkpoints after dropping 2 = %v", got)
	}
	_, err := b.CheckpointSeq(ctx, th.ID, "two")
	wantErr(t, "CheckpointSeq of a dropped commit's checkpoint", err, backend.ErrNoCheckpoint)
	// The name is free again.
	if err := b.SetCheckpoint(ctx, th.ID, "two", 3); err != nil {
		t.Errorf("SetCheckpoint reusing a dropped checkpoint's name: %v", err)
	}
}

func checkRequires(t *testing.T, b backend.Backend) {
	ctx := t.Context()
	src := newThread(t, b, "s", "src")
	commits(t, b, src.ID, 3)

	fork := newThread(t, b, "s", "fork")
	c := nc(fork.ID, 1)
	c.Requires = &backend.CommitID{Thread: src.ID, Seq: 2}
	mustAppend(t, b, c)

	// Restore: a thread requiring one of its own commits.
	c = nc(src.ID, 4)
	c.Requires = &backend.CommitID{Thread: src.ID, Seq: 1}
	mustAppend(t, b, c)

	drop(t, b, src.ID, 2)
	fork2 := newThread(t, b, "s", "fork2")
	c = nc(fork2.ID, 1)
	c.Requires = &backend.CommitID{Thread: src.ID, Seq: 2}
	_, err := tryAppend(t, b, c)
	wantErr(t, "Append requiring a dropped commit", err, backend.ErrNotRetained)
	if _, ok := head(t, b, fork2.ID); ok {
		t.Errorf("an append refused with ErrNotRetained was stored")
	}
	for _, r := range []backend.CommitID{{Thread: src.ID, Seq: 9}, {Thread: 1 << 40, Seq: 1}} {
		c.Requires = &r
		_, err := tryAppend(t, b, c)
		wantErr(t, fmt.Sprintf("Append requiring %+v", r), err, backend.ErrNotRetained)
	}
	// Stale wins over not retained: the head check comes first.
	c = nc(fork.ID, 5)
	c.Requires = &backend.CommitID{Thread: src.ID, Seq: 2}
	_, err = tryAppend(t, b, c)
	wantErr(t, "stale Append requiring a dropped commit", err, backend.ErrStale)
	// A deleted thread's commits are not retained.
	if err := b.DeleteThread(ctx, fork.ID); err != nil {
		t.Fatal(err)
	}
	c = nc(fork2.ID, 1)
	c.Requires = &backend.CommitID{Thread: fork.ID, Seq: 1}
	_, err = tryAppend(t, b, c)
	wantErr(t, "Append requiring a deleted thread's commit", err, backend.ErrNotRetained)
}

// ---- garbage collection ----

func checkGCSnapshot(t *testing.T, b backend.Backend) {
	ctx := t.Context()
	x := newThread(t, b, "s", "x")
	y := newThread(t, b, "s", "y")
	z := newThread(t, b, "other", "z")
	xs := commits(t, b, x.ID, 4)
	ys := commits(t, b, y.ID, 2)
	zs := commits(t, b, z.ID, 2)
	drop(t, b, x.ID, 1, 3)
	drop(t, b, z.ID, 1)
	snap, err := b.GCSnapshot(ctx, "s", now(t, b).Add(time.Hour))
	if err != nil {
		t.Fatalf("GCSnapshot: %v", err)
	}
	sameRetained(t, "GCSnapshot", snap.Retained, xs[1], xs[3], ys[0], ys[1])
	if got, want := sortedIDs(snap.Dropped), []int64{xs[0].ID, xs[2].ID}; !slices.Equal(got, want) {
		t.Errorf("GCSnapshot.Dropped = %v, want %v", got, want)
	}
	snap, err = b.GCSnapshot(ctx, "other", now(t, b).Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	sameRetained(t, "GCSnapshot(other)", snap.Retained, zs[1])
	if !slices.Equal(snap.Dropped, []int64{zs[0].ID}) {
		t.Errorf("GCSnapshot(other).Dropped = %v, want [%d]", snap.Dropped, zs[0].ID)
	}
	snap, err = b.GCSnapshot(ctx, "nobody", now(t, b).Add(time.Hour))
	if err != nil || len(snap.Retained) != 0 || len(snap.Dropped) != 0 {
		t.Errorf("GCSnapshot of an empty scope = %+v, %v", snap, err)
	}
	// Commits with equal roots are each listed.
	w := newThread(t, b, "same", "w")
	var ws []backend.Commit
	for i := range 3 {
		ws = append(ws, mustAppend(t, b, backend.NewCommit{Thread: w.ID, Seq: int64(i + 1), Root: []byte("shared"), Meta: []byte("{}")}))
	}
	snap, err = b.GCSnapshot(ctx, "same", now(t, b))
	if err != nil {
		t.Fatal(err)
	}
	sameRetained(t, "GCSnapshot of commits sharing a root", snap.Retained, ws...)
}

func checkGCSnapshotCutoff(t *testing.T, b backend.Backend) {
	ctx := t.Context()
	th := newThread(t, b, "s", "main")
	cs := commits(t, b, th.ID, 4)
	beforeFirst := now(t, b)
	drop(t, b, th.ID, 1)
	afterFirst := now(t, b)
	drop(t, b, th.ID, 2)
	afterSecond := now(t, b)

	snap, err := b.GCSnapshot(ctx, "s", beforeFirst)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Dropped) != 0 {
		t.Errorf("GCSnapshot with a cutoff before any drop: Dropped = %v", snap.Dropped)
	}
	sameRetained(t, "GCSnapshot", snap.Retained, cs[2], cs[3])
	// Only the packs dropped strictly before the cutoff are listed. Clocks
	// may tick coarsely, so the cutoffs are pushed one tick past the drop.
	snap, err = b.GCSnapshot(ctx, "s", afterSecond.Add(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if got := sortedIDs(snap.Dropped); !slices.Equal(got, []int64{cs[0].ID, cs[1].ID}) {
		t.Errorf("GCSnapshot after both drops: Dropped = %v, want [%d %d]", got, cs[0].ID, cs[1].ID)
	}
	snap, err = b.GCSnapshot(ctx, "s", afterFirst)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range snap.Dropped {
		if id != cs[0].ID {
			t.Errorf("GCSnapshot with a cutoff before the second drop lists pack %d", id)
		}
	}
	for _, id := range snap.Dropped {
		if id == cs[2].ID || id == cs[3].ID {
			t.Errorf("GCSnapshot lists retained pack %d as dropped", id)
		}
	}
}

func checkDeletePacks(t *testing.T, b backend.Backend) {
	ctx := t.Context()
	th := newThread(t, b, "s", "main")
	cs := commits(t, b, th.ID, 4)
	drop(t, b, th.ID, 1, 2)
	// Retained packs (3, 4) and unknown ids are left alone, silently.
	if err := b.DeletePacks(ctx, []int64{cs[0].ID, cs[2].ID, cs[3].ID, 1 << 40}); err != nil {
		t.Fatalf("DeletePacks: %v", err)
	}
	_, err := b.Pack(ctx, cs[0].ID)
	wantErr(t, "Pack of a deleted dropped pack", err, backend.ErrNoPack)
	for _, c := range cs[1:] {
		if got := pack(t, b, c.ID); got != string(nc(th.ID, c.Seq).Pack) {
			t.Errorf("pack %d = %q after DeletePacks of others", c.ID, got)
		}
	}
	if err := b.DeletePacks(ctx, nil); err != nil {
		t.Errorf("DeletePacks(nil): %v", err)
	}
	if got := logSeqs(t, b, th.ID, 0, 0); !slices.Equal(got, []int64{4, 3}) {
		t.Errorf("Log after DeletePacks = %v", got)
	}
	snap, err := b.GCSnapshot(ctx, "s", now(t, b).Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(snap.Dropped, []int64{cs[1].ID}) {
		t.Errorf("GCSnapshot.Dropped after DeletePacks = %v, want [%d]", snap.Dropped, cs[1].ID)
	}
	if err := b.DeletePacks(ctx, []int64{cs[0].ID, cs[1].ID}); err != nil {
		t.Errorf("DeletePacks of an already deleted pack: %v", err)
	}
	mustAppend(t, b, nc(th.ID, 5))
}

func checkRewritePack(t *testing.T, b backend.Backend) {
	ctx := t.Context()
	th := newThread(t, b, "s", "main")
	cs := commits(t, b, th.ID, 3)
	drop(t, b, th.ID, 1)
	if err := b.RewritePack(ctx, cs[0].ID, []byte("blanked")); err != nil {
		t.Fatalf("RewritePack: %v", err)
	}
	if got := pack(t, b, cs[0].ID); got != "blanked" {
		t.Errorf("rewritten pack = %q", got)
	}
	if err := b.RewritePack(ctx, cs[0].ID, nil); err != nil {
		t.Fatalf("RewritePack to empty: %v", err)
	}
	if got := pack(t, b, cs[0].ID); got != "" {
		t.Errorf("pack rewritten to empty = %q", got)
	}
	// A retained pack is left alone, silently.
	if err := b.RewritePack(ctx, cs[1].ID, []byte("nope")); err != nil {
		t.Errorf("RewritePack of a retained pack: %v", err)
	}
	if got := pack(t, b, cs[1].ID); got != string(nc(th.ID, 2).Pack) {
		t.Errorf("RewritePack changed a retained pack: %q", got)
	}
	if err := b.RewritePack(ctx, 1<<40, []byte("x")); err != nil {
		t.Errorf("RewritePack of an unknown pack: %v", err)
	}
	if _, err := b.Pack(ctx, 1<<40); !errors.Is(err, backend.ErrNoPack) {
		t.Errorf("RewritePack created pack 1<<40: %v", err)
	}
	h, _ := head(t, b, th.ID)
	if h.Seq != 3 {
		t.Errorf("RewritePack moved the head to %d", h.Seq)
	}
}

func checkPurgeScope(t *testing.T, b backend.Backend) {
	ctx := t.Context()
	a1 := newThread(t, b, "a", "one")
	a2 := newThread(t, b, "a", "two")
	keep := newThread(t, b, "b", "one")
	prefix := newThread(t, b, "a2", "one")
	as := append(commits(t, b, a1.ID, 3), commits(t, b, a2.ID, 1)...)
	ks := commits(t, b, keep.ID, 2)
	commits(t, b, prefix.ID, 1)
	drop(t, b, a1.ID, 1)
	if err := b.SetCheckpoint(ctx, a1.ID, "cp", 2); err != nil {
		t.Fatal(err)
	}
	if err := b.SetCheckpoint(ctx, keep.ID, "cp", 2); err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct{ scope, thread string }{{"a", ""}, {"a", "one"}, {"b", ""}, {"b", "one"}, {"a2", ""}} {
		if err := b.PutSetting(ctx, s.scope, s.thread, "k", []byte(s.scope+"/"+s.thread)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.PurgeScope(ctx, "a"); err != nil {
		t.Fatalf("PurgeScope: %v", err)
	}
	if l, err := b.Threads(ctx, "a"); err != nil || len(l) != 0 {
		t.Errorf("Threads of a purged scope = %v, %v", threadNames(l), err)
	}
	if s, _ := b.Scopes(ctx); !slices.Equal(s, []string{"a2", "b"}) {
		t.Errorf("Scopes after purging a = %q", s)
	}
	for _, c := range as {
		_, err := b.Pack(ctx, c.ID)
		wantErr(t, "Pack of a purged scope", err, backend.ErrNoPack)
	}
	_, _, err := b.Head(ctx, a1.ID)
	wantErr(t, "Head of a purged thread", err, backend.ErrNoThread)
	for _, s := range []struct{ scope, thread string }{{"a", ""}, {"a", "one"}} {
		if _, ok, _ := b.Setting(ctx, s.scope, s.thread, "k"); ok {
			t.Errorf("setting %s/%s survived PurgeScope", s.scope, s.thread)
		}
	}
	// Other scopes, even one whose name starts with the purged one, are intact.
	for _, s := range []struct{ scope, thread string }{{"b", ""}, {"b", "one"}, {"a2", ""}} {
		if v, ok, err := b.Setting(ctx, s.scope, s.thread, "k"); err != nil || !ok || string(v) != s.scope+"/"+s.thread {
			t.Errorf("setting %s/%s after purging a: %q, %v, %v", s.scope, s.thread, v, ok, err)
		}
	}
	for _, c := range ks {
		if got := pack(t, b, c.ID); got != string(nc(keep.ID, c.Seq).Pack) {
			t.Errorf("a pack of another scope changed: %q", got)
		}
	}
	if seq, err := b.CheckpointSeq(ctx, keep.ID, "cp"); err != nil || seq != 2 {
		t.Errorf("a checkpoint of another scope: %d, %v", seq, err)
	}
	if got := logSeqs(t, b, prefix.ID, 0, 0); !slices.Equal(got, []int64{1}) {
		t.Errorf("log of scope a2 after purging a = %v", got)
	}
	snap, err := b.GCSnapshot(ctx, "a", now(t, b).Add(time.Hour))
	if err != nil || len(snap.Retained) != 0 || len(snap.Dropped) != 0 {
		t.Errorf("GCSnapshot of a purged scope = %+v, %v", snap, err)
	}
	// An append to a purged thread (a writer that read its head before
	// the purge) stores nothing.
	res, err := b.Append(ctx, []backend.NewCommit{nc(a1.ID, 4)})
	if err == nil {
		err = res[0].Err
	}
	wantErr(t, "Append to a purged thread", err, backend.ErrNoThread)
	if l, err := b.Threads(ctx, "a"); err != nil || len(l) != 0 {
		t.Errorf("Threads of a purged scope after an append = %v, %v", threadNames(l), err)
	}
	if err := b.PurgeScope(ctx, "never-existed"); err != nil {
		t.Errorf("PurgeScope of an unknown scope: %v", err)
	}
	// The scope can be used again.
	again := newThread(t, b, "a", "one")
	if again.ID == a1.ID {
		t.Errorf("a thread of a purged scope reused ID %d", a1.ID)
	}
	c := mustAppend(t, b, nc(again.ID, 1))
	if c.ID <= as[len(as)-1].ID {
		t.Errorf("commit ID %d reused after PurgeScope", c.ID)
	}
}

func checkSettings(t *testing.T, b backend.Backend) {
	ctx := t.Context()
	get := func(scope, thread, key string) ([]byte, bool) {
		t.Helper()
		v, ok, err := b.Setting(ctx, scope, thread, key)
		if err != nil {
			t.Fatalf("Setting(%q, %q, %q): %v", scope, thread, key, err)
		}
		return v, ok
	}
	put := func(scope, thread, key string, v []byte) {
		t.Helper()
		if err := b.PutSetting(ctx, scope, thread, key, v); err != nil {
			t.Fatalf("PutSetting(%q, %q, %q): %v", scope, thread, key, err)
		}
	}
	if v, ok := get("s", "", "k"); ok {
		t.Errorf("unset setting = %q, %v", v, ok)
	}
	put("s", "", "k", []byte("scope"))
	put("s", "main", "k", []byte("thread"))
	put("t", "", "k", []byte("other scope"))
	put("s", "main", "k2", []byte{0, 1, 0xff})
	for _, c := range []struct{ scope, thread, key, want string }{
		{"s", "", "k", "scope"}, {"s", "main", "k", "thread"}, {"t", "", "k", "other scope"},
		{"s", "main", "k2", "\x00\x01\xff"},
	} {
		if v, ok := get(c.scope, c.thread, c.key); !ok || string(v) != c.want {
			t.Errorf("Setting(%q, %q, %q) = %q, %v; want %q", c.scope, c.thread, c.key, v, ok, c.want)
		}
	}
	if _, ok := get("s", "other", "k"); ok {
		t.Errorf("a thread's setting leaked to another thread")
	}
	// Settings do not need the thread to exist.
	if _, ok := get("t", "main", "k"); ok {
		t.Errorf("a setting leaked to another scope")
	}
	put("s", "main", "k", []byte("replaced"))
	if v, _ := get("s", "main", "k"); string(v) != "replaced" {
		t.Errorf("overwritten setting = %q", v)
	}
	// The returned value is the caller's to keep.
	v, _ := get("s", "main", "k")
	v[0] = 'X'
	if v, _ := get("s", "main", "k"); string(v) != "replaced" {
		t.Errorf("changing a returned value changed the setting: %q", v)
	}
	put("s", "main", "k", []byte{})
	if v, ok := get("s", "main", "k"); !ok || len(v) != 0 {
		t.Errorf("empty setting = %q, %v; want set and empty", v, ok)
	}
	put("s", "main", "k", nil)
	if _, ok := get("s", "main", "k"); ok {
		t.Errorf("PutSetting(nil) did not delete")
	}
	put("s", "main", "nope", nil) // deleting an unset key is harmless
	if v, ok := get("s", "", "k"); !ok || string(v) != "scope" {
		t.Errorf("deleting a thread's setting changed the scope's: %q, %v", v, ok)
	}
}

// ---- concurrency ----

func checkConcurrentOneThread(t *testing.T, b backend.Backend) {
	ctx := t.Context()
	th := newThread(t, b, "s", "main")
	const writers, total = 8, 60
	type win struct {
		seq, id int64
		writer  int
	}
	var (
		mu    sync.Mutex
		wins  []win
		stale int
		wg    sync.WaitGroup
	)
	errc := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for {
				h, ok, err := b.Head(ctx, th.ID)
				if err != nil {
					errc <- fmt.Errorf("Head: %w", err)
					return
				}
				var seq int64 = 1
				if ok {
					seq = h.Seq + 1
				}
				if seq > total {
					return
				}
				c := backend.NewCommit{Thread: th.ID, Seq: seq, Root: fmt.Appendf(nil, "w%d-s%d", w, seq), Meta: []byte("{}")}
				res, err := b.Append(ctx, []backend.NewCommit{c})
				if err != nil {
					errc <- fmt.Errorf("Append: %w", err)
					return
				}
				switch err := res[0].Err; {
				case err == nil:
					mu.Lock()
					wins = append(wins, win{seq, res[0].Commit.ID, w})
					mu.Unlock()
				case errors.Is(err, backend.ErrStale):
					mu.Lock()
					stale++
					mu.Unlock()
				default:
					errc <- fmt.Errorf("Append entry: %w", err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	if len(wins) != total {
		t.Fatalf("%d appends succeeded for %d sequence numbers (%d stale)", len(wins), total, stale)
	}
	bySeq := map[int64]win{}
	for _, w := range wins {
		if prev, dup := bySeq[w.seq]; dup {
			t.Errorf("seq %d stored twice (writers %d and %d)", w.seq, prev.writer, w.writer)
		}
		bySeq[w.seq] = w
	}
	l, err := b.Log(ctx, th.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(l) != total {
		t.Fatalf("log has %d commits, want %d", len(l), total)
	}
	for i, c := range l {
		want := int64(total - i)
		w := bySeq[want]
		if c.Seq != want || c.ID != w.id || string(c.Root) != fmt.Sprintf("w%d-s%d", w.writer, want) {
			t.Errorf("log entry %d: %s; the winner of seq %d was writer %d with ID %d", i, fmtCommit(c), want, w.writer, w.id)
		}
		if i > 0 && c.ID >= l[i-1].ID {
			t.Errorf("IDs do not grow with seq: seq %d has ID %d, seq %d has ID %d", c.Seq, c.ID, l[i-1].Seq, l[i-1].ID)
		}
	}
	t.Logf("%d writers, %d commits, %d stale attempts", writers, total, stale)
}

func checkConcurrentManyThreads(t *testing.T, b backend.Backend) {
	ctx := t.Context()
	const writers, each = 8, 15
	ths := make([]backend.Thread, writers)
	for i := range ths {
		ths[i] = newThread(t, b, "s", fmt.Sprintf("t%d", i))
	}
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for i, th := range ths {
		wg.Go(func() {
			for seq := int64(1); seq <= each; seq++ {
				res, err := b.Append(ctx, []backend.NewCommit{nc(th.ID, seq)})
				if err == nil {
					err = res[0].Err
				}
				if err != nil {
					errs[i] = fmt.Errorf("thread %d seq %d: %w", th.ID, seq, err)
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	ids := map[int64]bool{}
	for _, th := range ths {
		l, err := b.Log(ctx, th.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(l) != each {
			t.Errorf("thread %d has %d commits, want %d", th.ID, len(l), each)
		}
		for _, c := range l {
			if !bytes.Equal(c.Root, nc(th.ID, c.Seq).Root) {
				t.Errorf("thread %d seq %d has root %q", th.ID, c.Seq, c.Root)
			}
			if ids[c.ID] {
				t.Errorf("commit ID %d given twice", c.ID)
			}
			ids[c.ID] = true
		}
	}
}

func checkConcurrentGroupCommit(t *testing.T, b backend.Backend) {
	ctx := t.Context()
	// Each writer sends Appends carrying one entry for each of its threads,
	// as an engine doing group commit does.
	const writers, perWriter, rounds = 4, 3, 8
	ths := make([][]backend.Thread, writers)
	for w := range ths {
		for i := range perWriter {
			ths[w] = append(ths[w], newThread(t, b, "s", fmt.Sprintf("w%d-%d", w, i)))
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for w := range writers {
		wg.Go(func() {
			for r := range rounds {
				batch := make([]backend.NewCommit, 0, perWriter)
				for _, th := range ths[w] {
					batch = append(batch, nc(th.ID, int64(r+1)))
				}
				res, err := b.Append(ctx, batch)
				if err != nil {
					errs[w] = err
					return
				}
				for i, rr := range res {
					if rr.Err != nil || rr.Commit.Seq != int64(r+1) || rr.Commit.Thread != batch[i].Thread {
						errs[w] = fmt.Errorf("round %d entry %d: %s, %v", r, i, fmtCommit(rr.Commit), rr.Err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	for _, row := range ths {
		for _, th := range row {
			if got := headSeq(t, b, th.ID); got != rounds {
				t.Errorf("thread %s head %d, want %d", th.Name, got, rounds)
			}
		}
	}
}

// checkConcurrentDropRequires races forks of a commit against its drop:
// every fork that was stored must have been stored while the commit was
// retained, so a fork that succeeds after the drop returned is a bug. The
// check is one-sided (it cannot see inside the race), but it catches
// backends that check Requires outside the append's transaction.
func checkConcurrentDropRequires(t *testing.T, b backend.Backend) {
	ctx := t.Context()
	for round := range 10 {
		src := newThread(t, b, "s", fmt.Sprintf("src%d", round))
		commits(t, b, src.ID, 3)
		const forks = 4
		fs := make([]backend.Thread, forks)
		for i := range fs {
			fs[i] = newThread(t, b, "s", fmt.Sprintf("fork%d-%d", round, i))
		}
		var wg sync.WaitGroup
		dropped := make(chan struct{})
		errs := make([]error, forks)
		afterDrop := make([]bool, forks)
		wg.Go(func() {
			defer close(dropped)
			if err := b.Drop(ctx, src.ID, []int64{2}); err != nil {
				t.Errorf("Drop: %v", err)
			}
		})
		for i := range forks {
			wg.Go(func() {
				if i%2 == 1 {
					<-dropped
					afterDrop[i] = true
				}
				c := nc(fs[i].ID, 1)
				c.Requires = &backend.CommitID{Thread: src.ID, Seq: 2}
				res, err := b.Append(ctx, []backend.NewCommit{c})
				if err != nil {
					errs[i] = err
					return
				}
				errs[i] = res[0].Err
			})
		}
		wg.Wait()
		for i, err := range errs {
			switch {
			case err == nil && afterDrop[i]:
				t.Errorf("round %d: a fork of a commit dropped before it began was stored", round)
			case err != nil && !errors.Is(err, backend.ErrNotRetained):
				t.Errorf("round %d: fork %d: %v, want success or ErrNotRetained", round, i, err)
			}
		}
		if _, err := b.CommitAt(ctx, src.ID, 2); !errors.Is(err, backend.ErrNoCommit) {
			t.Errorf("round %d: the required commit was not dropped: %v", round, err)
		}
	}
}

// checkFork: a backend.Forker creates the thread and its first commit
// together, and when it refuses (name taken, source not retained) it
// creates neither. Backends that are not Forkers skip it.
func checkFork(t *testing.T, b backend.Backend) {
	f, ok := backend.As[backend.Forker](b)
	if !ok {
		t.Skip("not a backend.Forker")
	}
	ctx := t.Context()
	src := newThread(t, b, "s", "src")
	cs := commits(t, b, src.ID, 2)
	first := func(name string, seq int64) backend.NewCommit {
		c := nc(0, 1)
		c.Root = []byte("root of " + name)
		c.Requires = &backend.CommitID{Thread: src.ID, Seq: seq}
		return c
	}
	th, c, err := f.Fork(ctx, "s", "fork", first("fork", 1))
	if err != nil {
		t.Fatalf("Fork: %v", err)
	}
	if th.Name != "fork" || th.Scope != "s" || c.Thread != th.ID || c.Seq != 1 || string(c.Root) != "root of fork" {
		t.Fatalf("Fork returned thread %+v, commit %s", th, fmtCommit(c))
	}
	if h, ok := head(t, b, th.ID); !ok {
		t.Fatal("the fork has no head")
	} else {
		sameCommit(t, "the fork's head", h, c)
	}
	if got, err := b.Thread(ctx, "s", "fork", false); err != nil || got.ID != th.ID {
		t.Fatalf("Thread(fork): %+v %v", got, err)
	}

	_, _, err = f.Fork(ctx, "s", "fork", first("fork", 2))
	wantErr(t, "Fork to a taken name", err, backend.ErrThreadExists)
	if n := headSeq(t, b, th.ID); n != 1 {
		t.Errorf("the taken thread's head moved to %d", n)
	}

	drop(t, b, src.ID, cs[0].Seq)
	_, _, err = f.Fork(ctx, "s", "late", first("late", cs[0].Seq))
	wantErr(t, "Fork of a dropped commit", err, backend.ErrNotRetained)
	if _, err := b.Thread(ctx, "s", "late", false); !errors.Is(err, backend.ErrNoThread) {
		t.Errorf("a refused fork left its thread: %v", err)
	}
}

// checkCheckpointCommit: a backend.CheckpointResolver finds the commit a
// checkpoint names, and fails as CheckpointSeq would. Other backends skip
// it.
func checkCheckpointCommit(t *testing.T, b backend.Backend) {
	r, ok := backend.As[backend.CheckpointResolver](b)
	if !ok {
		t.Skip("not a backend.CheckpointResolver")
	}
	ctx := t.Context()
	th := newThread(t, b, "s", "main")
	cs := commits(t, b, th.ID, 3)
	if err := b.SetCheckpoint(ctx, th.ID, "cp", 2); err != nil {
		t.Fatal(err)
	}
	got, err := r.CheckpointCommit(ctx, th.ID, "cp")
	if err != nil {
		t.Fatal(err)
	}
	sameCommit(t, "CheckpointCommit(cp)", got, cs[1])
	_, err = r.CheckpointCommit(ctx, th.ID, "nope")
	wantErr(t, "CheckpointCommit of a missing name", err, backend.ErrNoCheckpoint)
	_, err = r.CheckpointCommit(ctx, th.ID+1000, "cp")
	wantErr(t, "CheckpointCommit on a missing thread", err, backend.ErrNoThread)
}

// checkThreadHeads: a backend.HeadsLister lists a scope's threads by name,
// each with the head Head returns: none for a thread without commits, the
// newest after appends, and after a drop of older ones. Other backends
// skip it.
func checkThreadHeads(t *testing.T, b backend.Backend) {
	l, ok := backend.As[backend.HeadsLister](b)
	if !ok {
		t.Skip("not a backend.HeadsLister")
	}
	ctx := t.Context()
	empty := newThread(t, b, "s", "c-empty")
	one := newThread(t, b, "s", "a-one")
	many := newThread(t, b, "s", "b-many")
	newThread(t, b, "other", "a-one")
	commits(t, b, one.ID, 1)
	commits(t, b, many.ID, 5)
	drop(t, b, many.ID, 1, 2, 3)
	hs, err := l.ThreadHeads(ctx, "s")
	if err != nil {
		t.Fatalf("ThreadHeads: %v", err)
	}
	var names []string
	for _, h := range hs {
		names = append(names, h.Name)
	}
	if got := strings.Join(names, ","); got != "a-one,b-many,c-empty" {
		t.Fatalf("ThreadHeads lists %s, want a-one,b-many,c-empty", got)
	}
	for i, th := range []backend.Thread{one, many, empty} {
		h := hs[i]
		if h.ID != th.ID || h.Scope != "s" || !h.Created.Equal(th.Created) {
			t.Errorf("ThreadHeads[%d] = %+v, want thread %+v", i, h.Thread, th)
		}
		want, ok := head(t, b, th.ID)
		if !ok {
			if h.Head.Seq != 0 {
				t.Errorf("%s has no commits, but ThreadHeads gives head %s", th.Name, fmtCommit(h.Head))
			}
			continue
		}
		if h.Head.ID != want.ID || h.Head.Thread != th.ID || h.Head.Seq != want.Seq || !h.Head.Time.Equal(want.Time) ||
			string(h.Head.Meta) != string(want.Meta) {
			t.Errorf("%s: ThreadHeads gives head %s, Head %s", th.Name, fmtCommit(h.Head), fmtCommit(want))
		}
	}
	if hs, err := l.ThreadHeads(ctx, "none"); err != nil || len(hs) != 0 {
		t.Errorf("ThreadHeads of an empty scope: %v, %v", hs, err)
	}
}
