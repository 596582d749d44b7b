package satchel_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/satchel-dev/satchel"
)

func TestHistoryBeforeAndOrigin(t *testing.T) {
	ctx := context.Background()
	st, err := satchel.Open(ctx, "memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ws, _ := st.Workspace(ctx, "acme", "main")
	for i := 1; i <= 5; i++ {
		if err := ws.Write(ctx, "a.md", fmt.Sprint(i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ws.Checkpoint(ctx, "five"); err != nil {
		t.Fatal(err)
	}
	var seqs []int64
	for before := int64(0); ; {
		page, err := ws.History(ctx, before, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		for _, c := range page {
			seqs = append(seqs, c.Seq)
		}
		before = page[len(page)-1].Seq
	}
	if diff := cmp.Diff([]int64{5, 4, 3, 2, 1}, seqs); diff != "" {
		t.Errorf("paged history (-want +got):\n%s", diff)
	}
	first, _ := ws.History(ctx, 0, 1)
	if len(first) != 1 || len(first[0].Checkpoints) != 1 || first[0].Checkpoints[0] != "five" {
		t.Errorf("the head's checkpoints: %+v", first)
	}
	cps, err := ws.Checkpoints(ctx)
	if err != nil || len(cps) != 1 || cps[0] != (satchel.CheckpointInfo{Name: "five", Seq: 5}) {
		t.Errorf("Checkpoints = %+v, %v", cps, err)
	}

	if _, ok, err := ws.Origin(ctx); ok || err != nil {
		t.Errorf("main has an origin: %v %v", ok, err)
	}
	alt, err := ws.Fork(ctx, "3", "alt")
	if err != nil {
		t.Fatal(err)
	}
	o, ok, err := alt.Origin(ctx)
	if err != nil || !ok || o != (satchel.Origin{Thread: "main", Seq: 3}) {
		t.Errorf("alt.Origin = %+v %v %v, want main@3", o, ok, err)
	}
	// A thread whose name looks like a fork's summary is still no fork.
	other, _ := st.Workspace(ctx, "acme", "other")
	if err := other.Write(ctx, "fork of main@1", "x"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := other.Origin(ctx); ok {
		t.Errorf("a write whose path reads like a fork is taken for a fork")
	}
	missing, _ := st.Workspace(ctx, "acme", "missing")
	if h, err := missing.History(ctx, 0, 10); err != nil || len(h) != 0 {
		t.Errorf("history of a missing thread: %v %v", h, err)
	}
}

func TestFileHistory(t *testing.T) {
	ctx := context.Background()
	st, err := satchel.Open(ctx, "memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ws, _ := st.Workspace(ctx, "acme", "main")
	steps := []func() error{
		func() error { return ws.Write(ctx, "a.md", "1") },     // 1 added
		func() error { return ws.Write(ctx, "b.md", "x") },     // 2
		func() error { return ws.Write(ctx, "a.md", "2") },     // 3 changed
		func() error { return ws.Write(ctx, "a.md", "2") },     // same content: no commit
		func() error { return ws.Delete(ctx, "a.md") },         // 4 removed
		func() error { return ws.Write(ctx, "b.md", "y") },     // 5
		func() error { return ws.Write(ctx, "a.md", "again") }, // 6 added
	}
	for _, s := range steps {
		if err := s(); err != nil {
			t.Fatal(err)
		}
	}
	type got struct {
		Seq  int64
		Kind string
	}
	var all []got
	pages := 0
	for before := int64(0); ; pages++ {
		page, err := ws.FileHistory(ctx, "a.md", before, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range page.Changes {
			all = append(all, got{c.Commit.Seq, c.Kind})
		}
		if page.Next == 0 {
			break
		}
		before = page.Next
	}
	want := []got{{6, "added"}, {4, "removed"}, {3, "changed"}, {1, "added"}}
	if diff := cmp.Diff(want, all); diff != "" {
		t.Errorf("file history (-want +got):\n%s", diff)
	}
	if pages < 1 {
		t.Errorf("a limit of 2 gave one page for 4 changes")
	}
	if _, err := ws.FileHistory(ctx, "../x", 0, 0); !errors.Is(err, satchel.ErrInvalidPath) {
		t.Errorf("FileHistory(../x) = %v, want ErrInvalidPath", err)
	}
}

// A long history is examined MaxFileHistoryScan commits a call: the pages
// still reach every change.
func TestFileHistoryScanBound(t *testing.T) {
	ctx := context.Background()
	st, err := satchel.Open(ctx, "memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ws, _ := st.Workspace(ctx, "acme", "main")
	n := satchel.MaxFileHistoryScan*2 + 10
	if err := ws.Write(ctx, "a.md", "first"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if err := ws.Write(ctx, "noise.md", fmt.Sprint(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := ws.Write(ctx, "a.md", "last"); err != nil {
		t.Fatal(err)
	}
	var seqs []int64
	calls := 0
	for before := int64(0); ; {
		calls++
		page, err := ws.FileHistory(ctx, "a.md", before, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range page.Changes {
			seqs = append(seqs, c.Commit.Seq)
		}
		if page.Next == 0 {
			break
		}
		before = page.Next
	}
	if diff := cmp.Diff([]int64{int64(n + 2), 1}, seqs); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if calls != 3 {
		t.Errorf("%d calls for %d commits, want 3 (each examines %d)", calls, n+2, satchel.MaxFileHistoryScan)
	}
}

func TestDiffSnapshotsAcrossThreads(t *testing.T) {
	ctx := context.Background()
	st, err := satchel.Open(ctx, "memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ws, _ := st.Workspace(ctx, "acme", "main")
	_ = ws.Write(ctx, "a.md", "one\n")
	_ = ws.Write(ctx, "b.md", "b\n")
	alt, err := ws.Fork(ctx, "head", "alt")
	if err != nil {
		t.Fatal(err)
	}
	_ = alt.Write(ctx, "a.md", "two\n")
	_ = alt.Delete(ctx, "b.md")
	_ = alt.Write(ctx, "c.md", "c\n")
	a, _ := ws.At(ctx, "head")
	b, _ := alt.At(ctx, "head")
	cs, err := st.DiffSnapshots(ctx, a, b)
	want := []satchel.Change{{Path: "a.md", Kind: "changed"}, {Path: "b.md", Kind: "removed"}, {Path: "c.md", Kind: "added"}}
	if err != nil || !cmp.Equal(cs, want) {
		t.Errorf("DiffSnapshots = %v, %v; want %v", cs, err, want)
	}
	d, err := st.DiffSnapshotFile(ctx, a, b, "a.md")
	if wantD := "--- a/a.md\n+++ b/a.md\n@@ -1 +1 @@\n-one\n+two\n"; err != nil || d != wantD {
		t.Errorf("DiffSnapshotFile = %q, %v; want %q", d, err, wantD)
	}
	if _, err := st.DiffSnapshotFile(ctx, a, b, "zz.md"); !errors.Is(err, satchel.ErrNotFound) {
		t.Errorf("a file in neither: %v", err)
	}
}
