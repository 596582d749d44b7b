package backendtest

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/satchel-dev/satchel/backend"
)

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
