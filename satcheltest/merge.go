package satcheltest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/backendof"
)

// plan is a text whose lines 12-14 both sides of the merge change.
func plan(l12 string) string {
	s := ""
	for i := 1; i <= 20; i++ {
		switch {
		case i >= 12 && i <= 14:
			s += fmt.Sprintf("%s %d\n", l12, i)
		default:
			s += fmt.Sprintf("line %d\n", i)
		}
	}
	return s
}

func (s *suite) merge(t *testing.T, st *satchel.Store, ws *satchel.Workspace) {
	write(t, ws, "notes/plan.md", plan("line"), "keep.md", "keep\n", "gone.md", "gone\n", "img/a.png", "\x89PNG\x00base")
	fk, err := ws.Fork(bg, "", "try-b")
	must(t, "fork", err)

	// Changes on one side only, the same change on both, a line merge.
	write(t, ws, "main-only.md", "m\n")
	write(t, fk, "b-only.md", "b\n", "same.md", "same\n")
	write(t, ws, "same.md", "same\n")
	must(t, "b deletes", fk.Delete(bg, "gone.md"))
	write(t, ws, "notes/plan.md", "LINE 1\n"+plan("line")[len("line 1\n"):])
	write(t, fk, "notes/plan.md", plan("line")[:len(plan("line"))-len("line 20\n")]+"LINE 20\n")
	head, _ := fk.Head(bg)
	r, err := ws.Merge(bg, "try-b", satchel.DryRun())
	must(t, "dry run", err)
	equal(t, "dry run", r.Message(), "merge of try-b@"+fmt.Sprint(head.Seq)+" into main would change 3 paths, without conflicts")
	mh, _ := ws.Head(bg)
	r, err = ws.Merge(bg, "try-b")
	must(t, "merge", err)
	equal(t, "one commit", r.Commit.Seq, mh.Seq+1)
	equal(t, "summary", r.Commit.Summary, fmt.Sprintf("merged try-b@%d", head.Seq))
	equal(t, "op", r.Commit.Op, "merge")
	if r.Commit.Parent == nil || *r.Commit.Parent != (satchel.CommitRef{Thread: "try-b", Seq: head.Seq}) {
		t.Errorf("second parent %v, want try-b@%d", r.Commit.Parent, head.Seq)
	}
	equalSlice(t, "paths", r.Paths, []string{"b-only.md", "gone.md", "notes/plan.md"})
	got, _ := ws.Read(bg, "notes/plan.md")
	equal(t, "line merge", got, "LINE 1\n"+plan("line")[len("line 1\n"):len(plan("line"))-len("line 20\n")]+"LINE 20\n")
	ok, _ := ws.Exists(bg, "gone.md")
	equal(t, "deleted on b", ok, false)
	hist, err := ws.History(bg, 0, 1)
	must(t, "history", err)
	if len(hist) != 1 || hist[0].Parent == nil || hist[0].Summary != r.Commit.Summary {
		t.Errorf("history's newest commit %+v, want the merge", hist)
	}

	// Nothing new: unchanged, no commit.
	r, err = ws.Merge(bg, "try-b")
	must(t, "merge again", err)
	equal(t, "unchanged", r.Message(), fmt.Sprintf("unchanged: main already has every change of try-b@%d", head.Seq))
	equal(t, "no commit", r.Commit.Seq, mh.Seq+1)

	// Conflicts: refused, nothing committed; the next merge's base is the
	// last merge.
	write(t, ws, "notes/plan.md", plan("main"))
	write(t, fk, "notes/plan.md", plan("b"), "img/a.png", "\x89PNG\x00b")
	write(t, ws, "img/a.png", "\x89PNG\x00main")
	before, _ := ws.Head(bg)
	_, err = ws.Merge(bg, "try-b")
	refused(t, "conflicting merge", err, satchel.ErrConflict, "merge of try-b into main refused: 2 conflicts: img/a.png (binary, both changed), notes/plan.md lines 12-14 (both changed)")
	var mc *satchel.MergeConflictError
	if !errors.As(err, &mc) || len(mc.Conflicts) != 2 {
		t.Errorf("error %v is not a MergeConflictError with 2 conflicts", err)
	}
	after, _ := ws.Head(bg)
	equal(t, "nothing committed", after.Seq, before.Seq)

	// With markers: committed, listed.
	r, err = ws.Merge(bg, "try-b", satchel.ConflictMarkers())
	must(t, "merge with markers", err)
	equal(t, "conflicts listed", len(r.Conflicts), 2)
	got, _ = ws.Read(bg, "notes/plan.md")
	want := plan("line")[:len("line 1\n")*9+len("line 10\nline 11\n")] +
		"<<<<<<< main\nmain 12\nmain 13\nmain 14\n=======\nb 12\nb 13\nb 14\n>>>>>>> try-b\n" +
		"line 15\nline 16\nline 17\nline 18\nline 19\nline 20\n"
	equal(t, "markers", got, want)
	got, _ = ws.Read(bg, "img/a.png")
	equal(t, "binary keeps the target's", got, "\x89PNG\x00main")

	// Delete against change.
	write(t, fk, "keep.md", "changed\n")
	must(t, "main deletes", ws.Delete(bg, "keep.md"))
	_, err = ws.Merge(bg, "try-b")
	refused(t, "delete against change", err, satchel.ErrConflict, "merge of try-b into main refused: 1 conflict: keep.md (deleted in main, changed in try-b)")

	// The other way: main's merge is try-b's base too.
	_, err = fk.Merge(bg, "main")
	refused(t, "merge back", err, satchel.ErrConflict, "merge of main into try-b refused: 1 conflict: keep.md (changed in try-b, deleted in main)")

	// Refusals.
	_, err = ws.Merge(bg, "main")
	refused(t, "into itself", err, satchel.ErrInvalidArgument, "cannot merge thread main into itself")
	_, err = ws.Merge(bg, "nope")
	refused(t, "unknown thread", err, satchel.ErrNotFound, "thread not found: nope")
	other, _ := st.Workspace(bg, "default", "other")
	write(t, other, "x.md", "x")
	_, err = ws.Merge(bg, "other")
	refused(t, "unrelated", err, satchel.ErrInvalidArgument, "cannot merge other into main: they have no common commit (neither was forked from the other)")
	_, err = ws.Merge(bg, "try-b@")
	refused(t, "empty ref", err, satchel.ErrInvalidArgument, `invalid reference "try-b@": nothing after @`)
}

// mergeRacing merges while another store on the same database (as another
// process would) keeps writing to the target: every write and the merge
// all land.
func (s *suite) mergeRacing(t *testing.T, st *satchel.Store, ws *satchel.Workspace) {
	write(t, ws, "a.md", "a\n")
	fk, err := ws.Fork(bg, "", "side")
	must(t, "fork", err)
	for i := range 10 {
		write(t, fk, fmt.Sprintf("side/%d.md", i), "s\n")
	}
	other := satchel.New(backendof.Store(st), satchel.WithCacheBytes(1))
	wo, err := other.Workspace(bg, "default", "main")
	must(t, "second store", err)
	const n = 20
	var wg sync.WaitGroup
	wg.Add(1)
	var werr error
	go func() {
		defer wg.Done()
		for i := range n {
			if err := wo.Write(bg, fmt.Sprintf("w/%d.md", i), "w\n"); err != nil {
				werr = err
				return
			}
		}
	}()
	r, err := ws.Merge(bg, "side")
	must(t, "merge", err)
	wg.Wait()
	must(t, "writer", werr)
	equal(t, "merged paths", len(r.Paths), 10)
	for i := range 10 {
		ok, _ := ws.Exists(bg, fmt.Sprintf("side/%d.md", i))
		equal(t, "merged file", ok, true)
	}
	for i := range n {
		ok, _ := ws.Exists(bg, fmt.Sprintf("w/%d.md", i))
		equal(t, "racing write", ok, true)
	}
	r, err = ws.Merge(bg, "side")
	must(t, "merge again", err)
	equal(t, "unchanged", r.Unchanged, true)
}
