package satchel_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/backend/postgres"
)

var benchSchemas atomic.Int64

// benchStores opens a fresh store of each backend the benchmark runs on:
// memory, SQLite, and PostgreSQL when SATCHEL_TEST_POSTGRES names a
// server.
func benchStores(b *testing.B, fn func(b *testing.B, st *satchel.Store)) {
	b.Run("memory", func(b *testing.B) {
		st, err := satchel.Open(context.Background(), "memory:")
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		fn(b, st)
	})
	b.Run("sqlite", func(b *testing.B) {
		st, err := satchel.Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"))
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		fn(b, st)
	})
	url := os.Getenv("SATCHEL_TEST_POSTGRES")
	if url == "" {
		return
	}
	b.Run("postgres", func(b *testing.B) {
		schema := fmt.Sprintf("satchel_bench_%d_%d", os.Getpid(), benchSchemas.Add(1))
		pb, err := postgres.OpenFresh(context.Background(), url, schema)
		if err != nil {
			b.Fatal(err)
		}
		defer postgres.DropSchema(context.Background(), url, schema)
		st := satchel.New(pb)
		defer st.Close()
		fn(b, st)
	})
}

// BenchmarkThreads lists a scope of 1,000 threads, each with a commit
// (satchel threads list, the inspector's thread list).
func BenchmarkThreads(b *testing.B) {
	benchStores(b, func(b *testing.B, st *satchel.Store) {
		ctx := context.Background()
		for i := range 1000 {
			ws, err := st.Workspace(ctx, "bench", fmt.Sprintf("t%04d", i))
			if err != nil {
				b.Fatal(err)
			}
			if err := ws.Write(ctx, "a.txt", "x"); err != nil {
				b.Fatal(err)
			}
		}
		for b.Loop() {
			ts, err := st.Threads(ctx, "bench")
			if err != nil || len(ts) != 1000 || ts[0].Head != 1 {
				b.Fatalf("%d threads (%v)", len(ts), err)
			}
		}
	})
}

// BenchmarkGC collects after each small change to a workspace of 100,000
// files, imported in 100 checkpointed commits, whose retention keeps the
// last 2 commits (and the checkpoints): each collection drops the packs of
// the 2 edits before them, which hold a few nodes, while the tree the
// retained commits reach is 100,000 files.
func BenchmarkGC(b *testing.B) {
	benchStores(b, func(b *testing.B, st *satchel.Store) {
		ctx := context.Background()
		ws, err := st.Workspace(ctx, "bench", "main")
		if err != nil {
			b.Fatal(err)
		}
		const n = 100_000
		for from := 0; from < n; from += 1000 {
			err = ws.Batch(ctx, func(ctx context.Context, bt *satchel.Batch) error {
				for i := from; i < from+1000; i++ {
					if err := bt.Write(ctx, globPath(n, i), "file "+strconv.Itoa(i)+"\n"); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := ws.Checkpoint(ctx, fmt.Sprint("import-", from/1000)); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := ws.SetRetention(ctx, satchel.Policy{MaxCommits: 2}); err != nil {
			b.Fatal(err)
		}
		i := 0
		for ; i < 2; i++ {
			if err := ws.Write(ctx, globPath(n, i), "edit "+strconv.Itoa(i)+"\n"); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := st.GC(ctx, "bench", time.Nanosecond); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			b.StopTimer()
			for range 2 {
				i++
				if err := ws.Write(ctx, globPath(n, i%n), "edit "+strconv.Itoa(i)+"\n"); err != nil {
					b.Fatal(err)
				}
			}
			b.StartTimer()
			gs, err := st.GC(ctx, "bench", time.Nanosecond)
			if err != nil || gs.Dropped != 2 {
				b.Fatalf("GC: %+v, %v", gs, err)
			}
		}
	})
}
