package satcheltest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/backend"
)

// RunChanges checks the store's change feed (Store.Watch): a watcher of a
// scope is told of each commit of its threads with the paths it changed,
// and of each document write, and of nothing of another scope. Only the
// order and content of events is checked: how soon they come is the
// backend's (a generous bound only keeps a broken feed from hanging).
func RunChanges(t *testing.T, open func(t *testing.T) backend.Backend) {
	b := open(t)
	_, logsDocs := backend.As[backend.Keys](b)
	st := satchel.New(b)
	t.Cleanup(func() { st.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	ws, err := st.Workspace(ctx, "default", "main")
	if err != nil {
		t.Fatal(err)
	}
	must(t, "write before", ws.Write(ctx, "before.md", "x"))
	events := make(chan satchel.ChangeEvent, 100)
	if err := st.Watch(ctx, "default", func(e satchel.ChangeEvent) { events <- e }); err != nil {
		t.Fatalf("Watch: %v", err)
	}
	if err := st.Watch(ctx, "bad scope!", func(satchel.ChangeEvent) {}); err == nil {
		t.Error("Watch of an invalid scope: no error")
	}
	next := func(what string) satchel.ChangeEvent {
		t.Helper()
		select {
		case e := <-events:
			return e
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: no change reported", what)
		}
		return satchel.ChangeEvent{}
	}
	want := func(what string, e satchel.ChangeEvent, thread string, seq int64, paths ...string) {
		t.Helper()
		if e.Scope != "default" || e.Thread != thread || e.Seq != seq || !slices.Equal(e.Paths, paths) || e.Store != "" {
			t.Errorf("%s: %+v, want thread %s seq %d paths %q", what, e, thread, seq, paths)
		}
	}

	must(t, "write", ws.Write(ctx, "notes/a.md", "one"))
	want("a write", next("a write"), "main", 2, "notes/a.md")

	// Another scope's commit is not reported: the next event is this
	// scope's next commit.
	other, err := st.Workspace(ctx, "other", "main")
	if err != nil {
		t.Fatal(err)
	}
	must(t, "write in another scope", other.Write(ctx, "secret.md", "x"))
	must(t, "batch", ws.Batch(ctx, func(ctx context.Context, b *satchel.Batch) error {
		if err := b.Write(ctx, "b.md", "b"); err != nil {
			return err
		}
		return b.Delete(ctx, "before.md")
	}))
	want("a batch", next("a batch"), "main", 3, "b.md", "before.md")

	// A fork is a new thread: its files are reported as changed.
	if _, err := ws.Fork(ctx, "", "side"); err != nil {
		t.Fatal(err)
	}
	want("a fork", next("a fork"), "side", 1, "b.md", "notes/a.md")

	// Documents: the store and the key.
	c, err := st.Collection(ctx, project(t), "default", "pairs")
	if err != nil {
		t.Fatal(err)
	}
	k, _ := set(t, c, `{"a": "x", "b": 12}`)
	if logsDocs {
		e := next("a document set")
		if e.Scope != "default" || e.Store != "pairs" || !slices.Equal(e.Keys, []string{k}) || e.Thread != "" {
			t.Errorf("a document set: %+v, want store pairs key %s", e, k)
		}
	}

	// Once nobody watches, the store stops listening; a new watch
	// listens again, from where the store is then. A watch that has
	// ended is told of nothing more, and a new one of nothing older than
	// itself, even while the old one is still ending.
	cancel()
	must(t, "write unwatched", ws.Write(context.Background(), "unwatched.md", "x"))
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	again := make(chan satchel.ChangeEvent, 100)
	if err := st.Watch(ctx2, "default", func(e satchel.ChangeEvent) { again <- e }); err != nil {
		t.Fatalf("Watch again: %v", err)
	}
	must(t, "write watched again", ws.Write(ctx2, "again.md", "x"))
	select {
	case e := <-again:
		// The paths are those since the head the feed saw last: the
		// first watch's, while it is still ending, would add
		// unwatched.md.
		if e.Thread != "main" || e.Seq != 5 || !slices.Contains(e.Paths, "again.md") {
			t.Errorf("a write watched again: %+v, want main seq 5 with again.md", e)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a write watched again: no change reported")
	}
	if len(events) > 0 {
		t.Errorf("a watch that ended was told of %+v", <-events)
	}
	joinLate(t, st, ws)
}

// joinLate checks that a watch that joins a scope already watched is not
// told of a change made before it began, though the feed reports that
// change after: the first watcher holds the feed until then.
func joinLate(t *testing.T, st *satchel.Store, ws *satchel.Workspace) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := make(chan satchel.ChangeEvent)
	hold := func(e satchel.ChangeEvent) {
		select {
		case first <- e:
		case <-ctx.Done():
		}
	}
	if err := st.Watch(ctx, "default", hold); err != nil {
		t.Fatalf("Watch: %v", err)
	}
	late := make(chan satchel.ChangeEvent, 100)
	recv := func(ch chan satchel.ChangeEvent, what string) satchel.ChangeEvent {
		t.Helper()
		select {
		case e := <-ch:
			return e
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: no change reported", what)
		}
		return satchel.ChangeEvent{}
	}
	must(t, "write held", ws.Write(ctx, "held.md", "x"))
	// The feed now waits on first's function, with held.md's commit.
	time.Sleep(10 * time.Millisecond)
	must(t, "write before the late watch", ws.Write(ctx, "early.md", "x"))
	if err := st.Watch(ctx, "default", func(e satchel.ChangeEvent) { late <- e }); err != nil {
		t.Fatalf("Watch late: %v", err)
	}
	for !slices.Contains(recv(first, "the held write").Paths, "early.md") {
		// until first is told of early.md's commit
	}
	go func() { // first no longer holds the feed
		for {
			select {
			case <-first:
			case <-ctx.Done():
				return
			}
		}
	}()
	must(t, "write after the late watch", ws.Write(ctx, "late.md", "x"))
	e := recv(late, "a write after the late watch")
	if !slices.Equal(e.Paths, []string{"late.md"}) {
		t.Errorf("a watch that joined late was told first of %+v, want late.md only", e)
	}
}
