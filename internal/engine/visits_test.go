package engine

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/satchel-dev/satchel/backend"
)

// globTree commits n files in n/100 directories of 100 files each
// (notes/d{i%(n/100):02}/f{i}.md): whatever n, notes/d07/ holds exactly
// 100 files.
func globTree(t *testing.T, n int) (*Engine, *Snapshot) {
	t.Helper()
	e, th := newThread(t)
	ctx := context.Background()
	for start := 0; start < n; start += 5000 {
		_, _, err := e.Update(ctx, th, func(tx *Tx) (CommitInfo, error) {
			for i := start; i < min(n, start+5000); i++ {
				if err := tx.Put(ctx, fmt.Sprintf("notes/d%02d/f%d.md", i%(n/100), i), "x"); err != nil {
					return CommitInfo{}, err
				}
			}
			return CommitInfo{}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	s, _, _, err := e.Head(ctx, th)
	if err != nil {
		t.Fatal(err)
	}
	e.visits = &atomic.Int64{}
	return e, s
}

// scanVisits scans [from, to) and returns the paths seen and the nodes
// read.
func scanVisits(t *testing.T, e *Engine, s *Snapshot, from, to string) (paths, nodes int64) {
	t.Helper()
	e.visits.Store(0)
	err := s.ScanPaths(context.Background(), from, to, func(string) (bool, error) { paths++; return true, nil })
	if err != nil {
		t.Fatal(err)
	}
	return paths, e.visits.Load()
}

// TestScanVisitsOnlyItsRange: a scan of one directory (what glob
// notes/d07/*.md runs) reads about as many nodes in a tree of 20,000
// files as in one of 1,000, while a scan of everything reads 20 times as
// many: it descends only into the subtrees its range overlaps.
func TestScanVisitsOnlyItsRange(t *testing.T) {
	es, small := globTree(t, 1_000)
	el, large := globTree(t, 20_000)
	p1, d1 := scanVisits(t, es, small, "notes/d07/", "notes/d070")
	p20, d20 := scanVisits(t, el, large, "notes/d07/", "notes/d070")
	_, a1 := scanVisits(t, es, small, "", "")
	_, a20 := scanVisits(t, el, large, "", "")
	t.Logf("nodes read: notes/d07/ %d → %d; everything %d → %d (N 1,000 → 20,000)", d1, d20, a1, a20)
	if p1 != 100 || p20 != 100 {
		t.Fatalf("notes/d07/ holds %d and %d files, want 100", p1, p20)
	}
	if d20 > d1+3 {
		t.Errorf("a scan of notes/d07/ reads %d nodes at N=1,000 but %d at N=20,000: it reads more than its range", d1, d20)
	}
	if a20 < 10*a1 {
		t.Errorf("a scan of everything reads %d nodes at N=1,000 and %d at N=20,000: expected growth with N", a1, a20)
	}
}

// TestCollectWalksOnlyWhatChanged: after small edits to a tree of 20,000
// files, a collection that drops the packs of the edits reads the few
// nodes written since the oldest of them, not the tree of every retained
// commit; and every retained commit stays whole.
func TestCollectWalksOnlyWhatChanged(t *testing.T) {
	e, _ := globTree(t, 20_000)
	ctx := context.Background()
	ths, err := e.b.Threads(ctx, "s")
	if err != nil || len(ths) != 1 {
		t.Fatal(ths, err)
	}
	th := ths[0].ID
	want := map[string]string{}
	s, _, _, err := e.Head(ctx, th)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Scan(ctx, "", "", func(ent *Entry) (bool, error) { want[ent.Path] = "x"; return true, nil }); err != nil {
		t.Fatal(err)
	}
	// The commits that built the tree are checkpoints, which retention
	// keeps: the packs a collection may drop are those of the edits.
	for _, c := range mustLog(t, e, th) {
		if err := e.b.SetCheckpoint(ctx, th, fmt.Sprint("import-", c.Seq), c.Seq); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 4 {
		p := fmt.Sprintf("notes/d%02d/f%d.md", i%200, i)
		put(t, e, th, map[string]string{p: fmt.Sprint("edit ", i)})
		want[p] = fmt.Sprint("edit ", i)
	}
	if n, err := e.Retain(ctx, th, Policy{MaxCommits: 2}); err != nil || n == 0 {
		t.Fatalf("Retain dropped %d: %v", n, err)
	}
	e.visits.Store(0)
	st, err := e.Collect(ctx, "s", 0)
	if err != nil {
		t.Fatal(err)
	}
	walked := e.visits.Load()
	t.Logf("collection: %+v, %d nodes read", st, walked)
	if st.Deleted+st.Rewritten == 0 {
		t.Fatalf("nothing collected: %+v", st)
	}
	// The 2 retained commits each wrote one path of nodes (a leaf and its
	// ancestors): a few dozen nodes at most, against the thousand of the
	// whole tree.
	if walked > 40 {
		t.Errorf("the collection read %d nodes: it walks subtrees older than the packs it may drop", walked)
	}
	fresh := New(e.b, Options{}) // nothing cached: every node read again
	s, _, _, err = fresh.Head(ctx, th)
	if err != nil {
		t.Fatal(err)
	}
	model(t, fresh, s, want)
}

func mustLog(t *testing.T, e *Engine, th int64) []backend.Commit {
	t.Helper()
	log, err := e.b.Log(context.Background(), th, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return log
}
