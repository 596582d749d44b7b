package satchel_test

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/bench"
)

func benchCollection(b *testing.B, dsn string, indexed bool) *satchel.Collection {
	def := bench.W2StoreDefinition()
	if indexed {
		def = bench.W2StoreDefinitionIndexed()
	}
	p, err := satchel.LoadProjectFS(fstest.MapFS{"stores/research-notes.json": {Data: []byte(def)}})
	if err != nil {
		b.Fatal(err)
	}
	if dsn == "sqlite" {
		dsn = filepath.Join(b.TempDir(), "b.db")
	}
	st, err := satchel.Open(context.Background(), dsn)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	c, err := st.Collection(context.Background(), p, "bench", "research-notes", satchel.Force())
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkCollectionSet sets W2 documents (new keys, then replacements).
func BenchmarkCollectionSet(b *testing.B) {
	for _, dsn := range []string{"memory:", "sqlite"} {
		for _, indexed := range []bool{false, true} {
			name := dsn
			if indexed {
				name += "indexed"
			}
			b.Run(name, func(b *testing.B) {
				c := benchCollection(b, dsn, indexed)
				const n = 100000
				docs := make([]map[string]any, n)
				for i := range docs {
					docs[i] = bench.W2Doc(1, i, 0)
				}
				ctx := context.Background()
				b.ResetTimer()
				start := cpuTime()
				for i := 0; i < b.N; i++ {
					if _, _, err := c.Set(ctx, docs[i%n]); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(cpuTime()-start)/float64(b.N)/1e3, "cpu-µs/op")
			})
		}
	}
}

// BenchmarkCollectionGet gets W2 documents by key.
func BenchmarkCollectionGet(b *testing.B) {
	for _, dsn := range []string{"memory:", "sqlite"} {
		b.Run(dsn, func(b *testing.B) {
			c := benchCollection(b, dsn, false)
			const n = 10000
			ctx := context.Background()
			for i := 0; i < n; i++ {
				if _, _, err := c.Set(ctx, bench.W2Doc(1, i, 0)); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			start := cpuTime()
			for i := 0; i < b.N; i++ {
				if _, err := c.Get(ctx, bench.W2Key(i%n), false); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N)/1e3, "cpu-µs/op")
		})
	}
}

// cpuTime is the CPU time the process has used: on a loaded machine it
// measures an operation's cost better than the wall clock.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
