package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"

	"github.com/satchel-dev/satchel"
)

// TestStaleGuardOverhead measures W1's write and edit phases on SQLite with
// the read ledger (satchel.TrackReads) and without, alternated in one run
// (SATCHEL_BENCH_STALE=N files; rounds from SATCHEL_BENCH_ROUNDS, default
// 5). It prints the median of each side's ops/s and CPU µs per operation;
// it asserts nothing about them.
func TestStaleGuardOverhead(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("SATCHEL_BENCH_STALE"))
	if n <= 0 {
		t.Skip("SATCHEL_BENCH_STALE=N runs it")
	}
	rounds := 5
	if r, _ := strconv.Atoi(os.Getenv("SATCHEL_BENCH_ROUNDS")); r > 0 {
		rounds = r
	}
	ctx := context.Background()
	type key struct{ side, phase string }
	ops := map[key][]float64{}
	cpu := map[key][]float64{}
	for r := 0; r < rounds; r++ {
		for _, side := range []string{"off", "on"} {
			if r%2 == 1 { // alternate which side runs first
				side = map[string]string{"off": "on", "on": "off"}[side]
			}
			st, err := satchel.Open(ctx, filepath.Join(t.TempDir(), "w1.db"))
			if err != nil {
				t.Fatal(err)
			}
			var opts []satchel.WorkspaceOption
			if side == "on" {
				opts = append(opts, satchel.TrackReads())
			}
			ws, err := st.Workspace(ctx, "default", "main", opts...)
			if err != nil {
				t.Fatal(err)
			}
			err = RunW1(ctx, ws, W1Options{System: side, N: n}, func(res Result) {
				if res.Phase == "write" || res.Phase == "edit" {
					k := key{side, res.Phase}
					ops[k] = append(ops[k], res.OpsPerSec)
					cpu[k] = append(cpu[k], res.CPUusPerOp)
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			_ = st.Close()
		}
	}
	median := func(xs []float64) float64 {
		s := append([]float64(nil), xs...)
		sort.Float64s(s)
		return s[len(s)/2]
	}
	for _, phase := range []string{"write", "edit"} {
		off, on := key{"off", phase}, key{"on", phase}
		fmt.Printf("W1 %s N=%d rounds=%d: off %.0f ops/s (%.1f µs CPU/op), on %.0f ops/s (%.1f µs CPU/op): %+.1f%% ops/s, %+.1f%% CPU\n",
			phase, n, rounds, median(ops[off]), median(cpu[off]), median(ops[on]), median(cpu[on]),
			100*(median(ops[on])/median(ops[off])-1), 100*(median(cpu[on])/median(cpu[off])-1))
	}
}
