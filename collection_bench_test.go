package satchel_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/postgres"
	"github.com/satchel-dev/satchel/backend/sqlite"
	"github.com/satchel-dev/satchel/internal/bench"
	"github.com/satchel-dev/satchel/internal/testenv"
	"github.com/satchel-dev/satchel/satcheltest"
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

// BenchmarkCollectionSetClients sets W2 documents (new keys) from 1 and
// 16 clients at once, each setting its own, with the backend's batches
// (group commit of documents) and without them (each set its own
// transaction), alternated three times so that the two are compared side
// by side: go test -bench CollectionSetClients -run '^$' (PostgreSQL with
// SATCHEL_TEST_POSTGRES).
func BenchmarkCollectionSetClients(b *testing.B) {
	backends := []string{"sqlite"}
	if os.Getenv("SATCHEL_TEST_POSTGRES") != "" {
		backends = append(backends, "postgres")
	}
	p, err := satchel.LoadProjectFS(fstest.MapFS{"stores/research-notes.json": {Data: []byte(bench.W2StoreDefinition())}})
	if err != nil {
		b.Fatal(err)
	}
	for _, be := range backends {
		for _, clients := range []int{1, 16} {
			for round := range 3 {
				for _, batched := range []bool{true, false} {
					mode := "batched"
					if !batched {
						mode = "unbatched"
					}
					b.Run(fmt.Sprintf("%s/clients=%d/%s/round=%d", be, clients, mode, round+1), func(b *testing.B) {
						bk := setClientsBackend(b, be)
						if !batched {
							bk = satcheltest.Hide[backend.DocBatcher](bk)
						}
						st := satchel.New(bk)
						b.Cleanup(func() { st.Close() })
						ctx := context.Background()
						c, err := st.Collection(ctx, p, "bench", "research-notes", satchel.Force())
						if err != nil {
							b.Fatal(err)
						}
						docs := make([]map[string]any, b.N)
						for i := range docs {
							docs[i] = bench.W2Doc(1, i, 0)
						}
						b.ResetTimer()
						start := cpuTime()
						var wg sync.WaitGroup
						for k := range clients {
							wg.Add(1)
							go func() {
								defer wg.Done()
								for i := k; i < b.N; i += clients {
									if _, _, err := c.Set(ctx, docs[i]); err != nil {
										b.Error(err)
										return
									}
								}
							}()
						}
						wg.Wait()
						b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "sets/s")
						b.ReportMetric(float64(cpuTime()-start)/float64(b.N)/1e3, "cpu-µs/op")
					})
				}
			}
		}
	}
}

func setClientsBackend(b *testing.B, name string) backend.Backend {
	ctx := context.Background()
	if name == "sqlite" {
		bk, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "b.db"))
		if err != nil {
			b.Fatal(err)
		}
		return bk
	}
	url := testenv.PostgresURL(b)
	schema := fmt.Sprintf("satchel_setclients_%d_%d", os.Getpid(), time.Now().UnixNano())
	bk, err := postgres.OpenFresh(ctx, url, schema)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = postgres.DropSchema(context.Background(), url, schema) })
	return bk
}

// BenchmarkCollectionToolList is store__NAME__list of 20 documents, as an
// MCP server calls it: the page read, each document checked against the
// definition (does_not_fit), the result encoded.
func BenchmarkCollectionToolList(b *testing.B) {
	for _, dsn := range []string{"memory:", "sqlite"} {
		b.Run(dsn, func(b *testing.B) {
			p, err := satchel.LoadProjectFS(fstest.MapFS{
				"stores/research-notes.json": {Data: []byte(bench.W2StoreDefinition())},
				"agents/a/agent.json":        {Data: []byte(`{"name": "A", "stores": {"research-notes": "read"}}`)},
			})
			if err != nil {
				b.Fatal(err)
			}
			at := dsn
			if dsn == "sqlite" {
				at = filepath.Join(b.TempDir(), "b.db")
			}
			st, err := satchel.Open(context.Background(), at)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { st.Close() })
			ctx := context.Background()
			c, err := st.Collection(ctx, p, "bench", "research-notes", satchel.Force())
			if err != nil {
				b.Fatal(err)
			}
			for i := 0; i < 100; i++ {
				if _, _, err := c.Set(ctx, bench.W2Doc(1, i, 0)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := st.CallCollectionTool(ctx, p, "bench", satchel.Actor{Agent: "a"}, "store__research_notes__list", []byte(`{"limit": 20}`)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
