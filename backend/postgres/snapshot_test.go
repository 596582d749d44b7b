package postgres

import (
	"testing"

	"github.com/satchel-dev/satchel/backend"
)

// TestSnapshot: a snapshot's reads all see the instant it was taken,
// whatever is written after, and it refuses writes.
func TestSnapshot(t *testing.T) {
	b := openTest(t)
	defer b.Close()
	ctx := t.Context()
	th, err := b.CreateThread(ctx, "s", "a")
	if err != nil {
		t.Fatal(err)
	}
	app := func(seq int64) {
		t.Helper()
		res, err := b.Append(ctx, []backend.NewCommit{{Thread: th.ID, Seq: seq, Meta: []byte("{}")}})
		if err != nil || res[0].Err != nil {
			t.Fatalf("append %d: %v %v", seq, err, res)
		}
	}
	app(1)
	if err := b.PutSetting(ctx, "s", "", "k", []byte("old")); err != nil {
		t.Fatal(err)
	}
	snap, release, err := b.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	app(2)
	if _, err := b.CreateThread(ctx, "s", "later"); err != nil {
		t.Fatal(err)
	}
	if err := b.PutSetting(ctx, "s", "", "k", []byte("new")); err != nil {
		t.Fatal(err)
	}
	for range 3 { // each read on a connection of its own: the same instant
		if h, ok, err := snap.Head(ctx, th.ID); err != nil || !ok || h.Seq != 1 {
			t.Fatalf("snapshot head: %d %v %v, want 1", h.Seq, ok, err)
		}
		if ts, err := snap.Threads(ctx, "s"); err != nil || len(ts) != 1 {
			t.Fatalf("snapshot threads: %v %v", ts, err)
		}
		if v, _, err := snap.Setting(ctx, "s", "", "k"); err != nil || string(v) != "old" {
			t.Fatalf("snapshot setting: %q %v", v, err)
		}
	}
	if h, _, _ := b.Head(ctx, th.ID); h.Seq != 2 {
		t.Fatalf("live head %d, want 2", h.Seq)
	}
	if err := snap.PutSetting(ctx, "s", "", "k", []byte("x")); err == nil {
		t.Fatal("a snapshot took a write")
	}
}
