package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/sqlite"
)

// appendCounter counts the Appends a backend receives, the commits in
// them and their packs' bytes.
type appendCounter struct {
	backend.Backend
	appends, commits, packBytes atomic.Int64
}

func (c *appendCounter) Append(ctx context.Context, ncs []backend.NewCommit) ([]backend.AppendResult, error) {
	c.appends.Add(1)
	c.commits.Add(int64(len(ncs)))
	for _, nc := range ncs {
		c.packBytes.Add(int64(len(nc.Pack)))
	}
	return c.Backend.Append(ctx, ncs)
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkOneThreadWriters runs 16 writers of one thread on SQLite,
// every mutation a durable commit, with chained commits (chain.go) and
// without: side by side, it shows what chaining gives a thread many
// clients write (commits per Append, commits/s) and what it costs (pack
// bytes and CPU per commit). The writers append a line each to one log
// (append), or each write a new file of W4's size (write: a chained
// commit stores its parents' files again).
func BenchmarkOneThreadWriters(b *testing.B) {
	text := strings.Repeat("a line of a note an agent wrote, about forty bytes\n", 60)
	loads := map[string]func(e *Engine, thread int64, i int64) error{
		"append": func(e *Engine, thread int64, i int64) error {
			return appendLine(e, thread, "log.txt", fmt.Sprintf("line %d of the shared log\n", i), nil)
		},
		"write": func(e *Engine, thread int64, i int64) error {
			_, _, err := e.Update(context.Background(), thread, func(tx *Tx) (CommitInfo, error) {
				return CommitInfo{Meta: []byte(`{}`)}, tx.Put(context.Background(), fmt.Sprintf("w/%07d.md", i), text)
			})
			return err
		},
	}
	for _, load := range []string{"append", "write"} {
		for _, mode := range []string{"chained", "serial"} {
			b.Run(load+"/"+mode, func(b *testing.B) {
				oneThreadWriters(b, mode, loads[load])
			})
		}
	}
}

func oneThreadWriters(b *testing.B, mode string, op func(e *Engine, thread int64, i int64) error) {
	{
		{
			ctx := context.Background()
			sb, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "one.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer sb.Close()
			cb := &appendCounter{Backend: hideParts{sb}}
			e := New(cb, Options{NoChaining: mode == "serial"})
			th, err := sb.Thread(ctx, "bench", "log", true)
			if err != nil {
				b.Fatal(err)
			}
			cb.appends.Store(0)
			cb.commits.Store(0)
			cb.packBytes.Store(0)
			var next atomic.Int64
			b.ResetTimer()
			cpu0 := cpuTime()
			var wg sync.WaitGroup
			for range 16 {
				wg.Go(func() {
					for {
						i := next.Add(1) - 1
						if i >= int64(b.N) {
							return
						}
						if err := op(e, th.ID, i); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N)/1e3, "cpu-µs/commit")
			b.ReportMetric(float64(cb.commits.Load())/float64(max(1, cb.appends.Load())), "commits/append")
			b.ReportMetric(float64(cb.packBytes.Load())/float64(max(1, cb.commits.Load())), "pack-B/commit")
		}
	}
}

// hideParts hides a backend's optional capabilities but Append's.
type hideParts struct{ backend.Backend }
