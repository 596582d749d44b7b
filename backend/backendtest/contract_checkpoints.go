package backendtest

import (
	"errors"
	"slices"
	"testing"

	"github.com/satchel-dev/satchel/backend"
)

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
