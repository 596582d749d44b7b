package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/satchel-dev/satchel/backend/sqlite"
)

// BenchmarkReplacedNodes writes n files on SQLite one commit each, in
// W1's order (file i in directory i%100), with a cache of 32 MiB (8 MiB
// of nodes, flooded after about 900 writes of their root-to-leaf paths,
// as the default 64 MiB is after about 7,000), then scans every path
// (W1's glob-all) and reads every file: with the replaced nodes dropped
// from the cache (the default) and kept (the baseline), alternated. It
// reports the process's CPU time a scan and a read.
func BenchmarkReplacedNodes(b *testing.B) {
	ctx := context.Background()
	const n = 3000
	content := strings.Repeat("a line of seventy-two characters, as W1's files have them, give or take\n", 100)
	for _, keep := range []bool{true, false, true, false} {
		b.Run(fmt.Sprintf("keepReplaced=%v", keep), func(b *testing.B) {
			be, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "nodes.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer be.Close()
			th, err := be.Thread(ctx, "s", "main", true)
			if err != nil {
				b.Fatal(err)
			}
			e := New(be, Options{CacheBytes: 32 << 20})
			e.keepReplaced = keep
			path := func(i int) string { return fmt.Sprintf("notes/d%02d/f%05d.md", i%100, i) }
			for i := range n {
				_, _, err := e.Update(ctx, th.ID, func(tx *Tx) (CommitInfo, error) {
					return CommitInfo{}, tx.Put(ctx, path(i), fmt.Sprintf("%d\n%s", i, content))
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			var scanCPU, readCPU time.Duration
			for b.Loop() {
				s, _, _, err := e.Head(ctx, th.ID)
				if err != nil {
					b.Fatal(err)
				}
				c0 := processCPU()
				paths := 0
				if err := s.ScanPaths(ctx, "notes/", "notes0", func(string) (bool, error) { paths++; return true, nil }); err != nil || paths != n {
					b.Fatalf("%d paths (%v), want %d", paths, err, n)
				}
				c1 := processCPU()
				for i := range n {
					ent, ok, err := s.Get(ctx, path(i))
					if err != nil || !ok {
						b.Fatalf("%s: %v %v", path(i), ok, err)
					}
					if _, err := s.Content(ctx, &ent); err != nil {
						b.Fatal(err)
					}
				}
				scanCPU, readCPU = scanCPU+c1-c0, readCPU+processCPU()-c1
			}
			b.ReportMetric(float64(scanCPU.Microseconds())/float64(b.N), "scan-cpu-µs")
			b.ReportMetric(float64(readCPU.Microseconds())/float64(b.N*n), "read-cpu-µs")
		})
	}
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
