package bench_test

import (
	"path/filepath"
	"testing"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/bench"
)

// TestW3 runs W3 small on memory and SQLite: every phase's expectation
// holds, and every figure is reported.
func TestW3(t *testing.T) {
	for _, dsn := range []string{"memory:", filepath.Join(t.TempDir(), "w3.db")} {
		t.Run(dsn, func(t *testing.T) {
			ctx := t.Context()
			st, err := satchel.Open(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			var rs []bench.Result
			err = bench.RunW3(ctx, st, bench.W3Options{System: "test", F: 50, S: 40, Forks: 5, Reads: 30}, func(r bench.Result) { rs = append(rs, r) })
			if err != nil {
				t.Fatal(err)
			}
			var phases []string
			for _, r := range rs {
				phases = append(phases, r.Phase)
				if r.Workload != "W3" || r.BytesPerCheckpoint <= 0 || r.StepUs <= 0 || r.ForkUs <= 0 || r.OldReadUs <= 0 || r.HeadReadUs <= 0 {
					t.Errorf("result lacks a figure: %+v", r)
				}
			}
			if got := len(rs); got != 3 || phases[0] != "write" || phases[1] != "edit" || phases[2] != "read" {
				t.Errorf("phases %v, want [write edit read]", phases)
			}
			if rs[1].Ops != 40 || rs[2].Ops != 60 {
				t.Errorf("ops: edit %d, read %d; want 40, 60", rs[1].Ops, rs[2].Ops)
			}
			for _, v := range bench.Workloads() {
				if v.Name == "W3" {
					for _, vd := range v.Targets(rs) {
						t.Log(vd)
					}
				}
			}
		})
	}
}

// TestWorkloads: W1 and W3 are registered and found by either case.
func TestWorkloads(t *testing.T) {
	for _, name := range []string{"w1", "W1", "w3", "W3"} {
		if _, ok := bench.Lookup(name); !ok {
			t.Errorf("Lookup(%q) found nothing", name)
		}
	}
	if _, ok := bench.Lookup("w9"); ok {
		t.Error("Lookup(w9) found a workload")
	}
}

// TestW1Limits: W1 keeps the default bounds at small scales,
// and above it raises them to what the run writes, so that N = 1,000,000
// is not refused at its 147,000th file (1 GiB) or its last (1,000,000
// files and the log).
func TestW1Limits(t *testing.T) {
	if l := bench.W1Limits(10_000); l != (satchel.Limits{}) {
		t.Errorf("W1Limits(10,000) = %+v, want the defaults", l)
	}
	l := bench.W1Limits(1_000_000)
	if l.MaxFiles < 1_000_001 || l.MaxBytes < 1_000_000*int64(bench.W1Lines*(bench.W1LineWidth+1)) {
		t.Errorf("W1Limits(1,000,000) = %+v: below what the run holds", l)
	}
}
