package satchel_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/satchel-dev/satchel"
)

// TestSpillArea: spills are saved beside the thread, read at their path,
// never listed, searched, versioned or restored with the thread's files,
// pruned to KeepSpills, and deleted with the thread.
func TestSpillArea(t *testing.T) {
	ctx := context.Background()
	st, err := satchel.Open(ctx, "memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ws, _ := st.Workspace(ctx, "s", "main")
	if err := ws.Write(ctx, "a.md", "match\n"); err != nil {
		t.Fatal(err)
	}
	if err := ws.SaveSpill(ctx, "notes/x.txt", "x"); err == nil {
		t.Errorf("a spill outside spill/ was saved")
	}
	n := satchel.KeepSpills + 3
	for i := range n {
		if err := ws.SaveSpill(ctx, fmt.Sprintf("spill/s%03d.txt", i), "match\n"); err != nil {
			t.Fatal(err)
		}
	}
	last := fmt.Sprintf("spill/s%03d.txt", n-1)
	if got, err := ws.Read(ctx, last); err != nil || got != "match\n" {
		t.Errorf("read of a spill: %q, %v", got, err)
	}
	if got, err := ws.ReadNumbered(ctx, last, 1, 1); err != nil || got != "1| match" {
		t.Errorf("numbered read of a spill: %q, %v", got, err)
	}
	if got, _ := ws.Glob(ctx, "**"); len(got) != 1 {
		t.Errorf("glob sees %q", got)
	}
	if g, err := ws.Grep(ctx, "match", "", satchel.GrepOptions{}); err != nil || len(g.Matches) != 1 {
		t.Errorf("grep: %+v, %v", g, err)
	}
	if h, _ := ws.History(ctx, 0, 0); len(h) != 1 {
		t.Errorf("the thread's history has %d commits", len(h))
	}
	spills, err := ws.Spills().List(ctx, "", satchel.ListOptions{})
	if err != nil || len(spills) != satchel.KeepSpills {
		t.Errorf("the spill area keeps %d spills (%v), want %d", len(spills), err, satchel.KeepSpills)
	}
	if ts, _ := st.Threads(ctx, "s"); len(ts) != 1 || ts[0].Name != "main" {
		t.Errorf("threads: %+v", ts)
	}
	if err := st.DeleteThread(ctx, "s", "main"); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Read(ctx, last); err == nil {
		t.Errorf("a spill outlived its thread")
	}
}
