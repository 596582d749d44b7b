package backendtest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/satchel-dev/satchel/backend"
)

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
