package satchel_test

import (
	"context"
	"errors"
	"testing"

	"github.com/satchel-dev/satchel"
)

// TestCheckpointNamesARefMeans: a checkpoint cannot take a name that a
// commit reference already means, or the name would never reach it.
func TestCheckpointNamesARefMeans(t *testing.T) {
	ctx := context.Background()
	ws := newWorkspace(t)
	if err := ws.Write(ctx, "a.md", "one\n"); err != nil {
		t.Fatal(err)
	}
	for name, msg := range map[string]string{
		"head": `invalid checkpoint name "head": head already means the thread's head commit`,
		"-1":   `invalid checkpoint name "-1": must not be a number (a number means a sequence)`,
		"-007": `invalid checkpoint name "-007": must not be a number (a number means a sequence)`,
		"42":   `invalid checkpoint name "42": must not be all digits (a number means a sequence)`,
	} {
		_, err := ws.Checkpoint(ctx, name)
		if !errors.Is(err, satchel.ErrInvalidArgument) || err.Error() != msg {
			t.Errorf("Checkpoint(%q) = %v, want %q", name, err, msg)
		}
		if err := satchel.ValidCheckpointName(name); err == nil || err.Error() != msg {
			t.Errorf("ValidCheckpointName(%q) = %v, want %q", name, err, msg)
		}
	}
	for _, name := range []string{"HEAD", "head-1", "-1-2", "v1", "1.0"} {
		if _, err := ws.Checkpoint(ctx, name); err != nil {
			t.Errorf("Checkpoint(%q): %v", name, err)
		}
	}
}

// FuzzCheckpointNameReachable: every name Checkpoint accepts is reached by
// At under that name, not by another reading of the reference.
func FuzzCheckpointNameReachable(f *testing.F) {
	for _, s := range []string{"v1", "head", "HEAD", "-1", "+1", "0", "1e3", "0x10", "-0", "", "a b", "-", "--1"} {
		f.Add(s)
	}
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, name string) {
		st, err := satchel.Open(ctx, "memory:")
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		ws, err := st.Workspace(ctx, "s", "main")
		if err != nil {
			t.Fatal(err)
		}
		if err := ws.Write(ctx, "a", "1"); err != nil {
			t.Fatal(err)
		}
		if _, err := ws.Checkpoint(ctx, name); err != nil {
			if !errors.Is(err, satchel.ErrInvalidArgument) {
				t.Fatalf("Checkpoint(%q): %v", name, err)
			}
			return
		}
		if err := ws.Write(ctx, "a", "2"); err != nil {
			t.Fatal(err)
		}
		snap, err := ws.At(ctx, name)
		if err != nil {
			t.Fatalf("At(%q) after Checkpoint(%q): %v", name, name, err)
		}
		if got := snap.Commit().Seq; got != 1 {
			t.Fatalf("At(%q) is commit %d, want the checkpoint's 1", name, got)
		}
	})
}

func newWorkspace(t *testing.T) *satchel.Workspace {
	t.Helper()
	st, err := satchel.Open(context.Background(), "memory:")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ws, err := st.Workspace(context.Background(), "s", "main")
	if err != nil {
		t.Fatal(err)
	}
	return ws
}
