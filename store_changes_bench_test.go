package satchel_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/testenv"
)

// BenchmarkWatchLatency measures how long a change takes to reach a
// watcher of the change feed: a write through one store (a replica, or
// another process: one database, two stores) until the watcher of the
// other store is told of it. ns/op is the mean; p50 and p99 are
// reported too.
func BenchmarkWatchLatency(b *testing.B) {
	dbs := []struct{ name, dsn string }{{"memory", "memory:"}, {"sqlite", filepath.Join(b.TempDir(), "w.db")}}
	dbs = append(dbs, struct{ name, dsn string }{"postgres", ""})
	for _, db := range dbs {
		b.Run(db.name, func(b *testing.B) {
			if db.name == "postgres" {
				db.dsn = testenv.PostgresURL(b)
			}
			ctx := context.Background()
			open := func() *satchel.Store {
				st, err := satchel.Open(ctx, db.dsn)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { st.Close() })
				return st
			}
			watcher := open()
			writer := watcher
			if db.name != "memory" {
				writer = open()
			}
			scope := fmt.Sprintf("lat-%x", time.Now().UnixNano())
			events := make(chan satchel.ChangeEvent, 16)
			wctx, cancel := context.WithCancel(ctx)
			defer cancel()
			if err := watcher.Watch(wctx, scope, func(e satchel.ChangeEvent) { events <- e }); err != nil {
				b.Fatal(err)
			}
			ws, err := writer.Workspace(ctx, scope, "main")
			if err != nil {
				b.Fatal(err)
			}
			var lat []time.Duration
			i := 0
			for b.Loop() {
				i++
				start := time.Now()
				if err := ws.Write(ctx, "a.md", fmt.Sprint(i)); err != nil {
					b.Fatal(err)
				}
				select {
				case <-events:
				case <-time.After(time.Minute):
					b.Fatal("no event")
				}
				lat = append(lat, time.Since(start))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}
