package satchel_test

import (
	"context"
	"testing"

	"github.com/satchel-dev/satchel"
)

// TestUnchangedMakesNoCommit: a change that changes nothing makes no
// commit, and says so.
func TestUnchangedMakesNoCommit(t *testing.T) {
	ctx := context.Background()
	ws := newWorkspace(t)
	head := func() int64 {
		t.Helper()
		h, err := ws.History(ctx, 0, 1)
		if err != nil || len(h) == 0 {
			t.Fatal(err)
		}
		return h[0].Seq
	}
	var c satchel.Commit
	if err := ws.Write(ctx, "a.md", "one\ntwo\n", satchel.Committed(&c)); err != nil {
		t.Fatal(err)
	}
	if c.Seq != 1 || c.Unchanged {
		t.Fatalf("first write reported %+v", c)
	}
	if _, err := ws.Checkpoint(ctx, "v1"); err != nil {
		t.Fatal(err)
	}

	c = satchel.Commit{}
	if err := ws.Write(ctx, "a.md", "one\ntwo\n", satchel.Committed(&c)); err != nil {
		t.Fatal(err)
	}
	if !c.Unchanged || c.Seq != 1 || head() != 1 {
		t.Errorf("a write of the same content: reported %+v, head %d", c, head())
	}

	c = satchel.Commit{}
	n, err := ws.StrReplace(ctx, "a.md", "two", "two", false, satchel.Committed(&c))
	if err != nil || n != 1 || !c.Unchanged || head() != 1 {
		t.Errorf("an edit to the same text: %d, %v, reported %+v, head %d", n, err, c, head())
	}
	if _, err := ws.StrReplace(ctx, "a.md", "o", "o", false); err == nil {
		t.Errorf("an ambiguous anchor is refused even when the edit would change nothing")
	}

	r, err := ws.Restore(ctx, "v1")
	if err != nil || !r.Unchanged || r.Seq != 1 || head() != 1 {
		t.Errorf("a restore to the head's own tree: %+v, %v, head %d", r, err, head())
	}

	// A checkpoint asked of a change that changes nothing names the head.
	c = satchel.Commit{}
	if err := ws.Write(ctx, "a.md", "one\ntwo\n", satchel.WithCheckpoint("v1-again"), satchel.Committed(&c)); err != nil {
		t.Fatal(err)
	}
	if snap, err := ws.At(ctx, "v1-again"); err != nil || snap.Commit().Seq != 1 || !c.Unchanged {
		t.Errorf("checkpoint of an unchanged write: %v, %+v", err, c)
	}

	// A real change still commits, and a restore after it does too.
	if err := ws.Write(ctx, "a.md", "three\n", satchel.Committed(&c)); err != nil || c.Unchanged || c.Seq != 2 {
		t.Errorf("a changed write: %+v, %v", c, err)
	}
	if r, err := ws.Restore(ctx, "v1"); err != nil || r.Unchanged || r.Seq != 3 {
		t.Errorf("a restore that changes the files: %+v, %v", r, err)
	}
}
