package satchel_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/backend/memory"
	"github.com/satchel-dev/satchel/internal/bench"
)

// w1Files writes the first n files of W1 into ws, one commit each as W1
// does (so that each file's content is in a pack of its own).
func w1Files(tb testing.TB, ws *satchel.Workspace, n int) {
	tb.Helper()
	ctx := context.Background()
	for i := 0; i < n; i++ {
		if err := ws.Write(ctx, bench.W1Path(i), bench.W1Content(1, i)); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkGrepCurve greps W1's pattern over 1,000 and 10,000 W1 files
// (7.3 and 73 MB) on memory: the cost per byte should not depend on how
// many files there are. It reports ns per byte searched, in wall time and
// in the process's CPU time (the second does not count the time waited
// for a core on a loaded machine).
func BenchmarkGrepCurve(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{1_000, 10_000} {
		b.Run("N="+strconv.Itoa(n), func(b *testing.B) {
			st, err := satchel.Open(ctx, "memory:")
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			ws, _ := st.Workspace(ctx, "bench", "grep")
			w1Files(b, ws, n)
			want := len(bench.W1GrepExpected(n))
			c0 := cpuTime()
			for b.Loop() {
				r, err := ws.Grep(ctx, bench.W1GrepPattern, "notes", satchel.GrepOptions{Limit: n, Timeout: bench.W1GrepTimeout})
				if err != nil || len(r.Matches) != want {
					b.Fatalf("%d matches (%v), want %d", len(r.Matches), err, want)
				}
			}
			bytes := float64(b.N) * float64(n*bench.W1Lines*(bench.W1LineWidth+1))
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/bytes, "ns/byte")
			b.ReportMetric(float64((cpuTime()-c0).Nanoseconds())/bytes, "cpu-ns/byte")
		})
	}
}

// BenchmarkReadCacheSQLite reads random W1 files of one SQLite database
// through two stores, one whose cache holds every pack and one whose
// cache holds a tenth of them, in alternating rounds: the second reads
// most files' packs from SQLite, which is what W1's reads do at N =
// 100,000 with the default cache (256 MiB for 1.2 GB of packs).
func BenchmarkReadCacheSQLite(b *testing.B) {
	ctx := context.Background()
	const n = 5_000 // about 60 MB of packs
	path := filepath.Join(b.TempDir(), "reads.db")
	big, err := satchel.Open(ctx, path, satchel.WithCacheBytes(1<<30))
	if err != nil {
		b.Fatal(err)
	}
	defer big.Close()
	ws, _ := big.Workspace(ctx, "bench", "reads")
	w1Files(b, ws, n)
	small, err := satchel.Open(ctx, path, satchel.WithCacheBytes(8<<20))
	if err != nil {
		b.Fatal(err)
	}
	defer small.Close()
	for _, c := range []struct {
		name string
		st   *satchel.Store
	}{{"cache=1GiB", big}, {"cache=8MiB", small}, {"cache=1GiB", big}, {"cache=8MiB", small}} {
		b.Run(c.name, func(b *testing.B) {
			ws, _ := c.st.Workspace(ctx, "bench", "reads")
			m := bench.NewMulberry32(3)
			c0 := cpuTime()
			for b.Loop() {
				i := int(m.Next() % n)
				if _, err := ws.Read(ctx, bench.W1Path(i)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpuTime()-c0).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

// BenchmarkExistsTreeSize checks W1's paths and missing paths in a thread
// of 100,000 files and one of 1,000,000, in one store, alternated three
// times: what exists costs as the tree grows, everything else equal. The
// threads are written in commits of 10,000 small files (the tree's shape
// is W1's: its paths, one chunk a file). On memory and SQLite, and on
// PostgreSQL with SATCHEL_TEST_POSTGRES: go test -bench ExistsTreeSize
// -run '^$' -benchtime 100000x.
func BenchmarkExistsTreeSize(b *testing.B) {
	backends := []string{"memory", "sqlite"}
	if os.Getenv("SATCHEL_TEST_POSTGRES") != "" {
		backends = append(backends, "postgres")
	}
	sizes := []int{100_000, 1_000_000}
	ctx := context.Background()
	for _, be := range backends {
		b.Run(be, func(b *testing.B) {
			st := satchel.New(memory.New())
			if be != "memory" {
				st = satchel.New(setClientsBackend(b, be))
			}
			defer st.Close()
			wss := map[int]*satchel.Workspace{}
			for _, n := range sizes {
				ws, err := st.Workspace(ctx, "bench", "files-"+strconv.Itoa(n))
				if err != nil {
					b.Fatal(err)
				}
				for start := 0; start < n; start += 10_000 {
					err := ws.Batch(ctx, func(ctx context.Context, bt *satchel.Batch) error {
						for i := start; i < min(n, start+10_000); i++ {
							if err := bt.Write(ctx, bench.W1Path(i), "file "+strconv.Itoa(i)+"\n"); err != nil {
								return err
							}
						}
						return nil
					})
					if err != nil {
						b.Fatal(err)
					}
				}
				wss[n] = ws
			}
			for round := range 3 {
				for _, n := range sizes {
					b.Run(fmt.Sprintf("round=%d/N=%d", round+1, n), func(b *testing.B) {
						ws := wss[n]
						c0 := cpuTime()
						k := 0
						for b.Loop() {
							// Files far apart, so that the checks
							// walk many leaves, not one.
							i := (k / 2 * 7919) % n
							p, want := bench.W1Path(i), true
							if k%2 == 1 {
								p, want = bench.W1MissingPath(i), false
							}
							k++
							if ok, err := ws.Exists(ctx, p); err != nil || ok != want {
								b.Fatalf("exists(%s) = %v, %v; want %v", p, ok, err, want)
							}
						}
						b.ReportMetric(float64((cpuTime()-c0).Nanoseconds())/float64(b.N)/1e3, "cpu-µs/op")
					})
				}
			}
		})
	}
}
