package backendtest

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/satchel-dev/satchel/backend"
)

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
