package engine

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
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
