package satchel_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/sqlite"
	"github.com/satchel-dev/satchel/internal/bench"
)

// countingBackend counts the Appends a backend receives and the commits
// in them, to show how well the engine batches (group commit).
type countingBackend struct {
	backend.Backend
	appends, commits atomic.Int64
	packBytes        atomic.Int64
	appendTime       atomic.Int64 // ns
}

func (c *countingBackend) Append(ctx context.Context, ncs []backend.NewCommit) ([]backend.AppendResult, error) {
	c.appends.Add(1)
	c.commits.Add(int64(len(ncs)))
	for _, nc := range ncs {
		c.packBytes.Add(int64(len(nc.Pack)))
	}
	t0 := time.Now()
	defer func() { c.appendTime.Add(int64(time.Since(t0))) }()
	return c.Backend.Append(ctx, ncs)
}

// processCPU is the CPU time (user and system) the process has used: on a
// shared machine it measures an operation's cost better than the clock.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkGroupCommit runs 16 writers on one SQLite database, each on its
// own thread, each writing one file per call (a W1 file of 7.3 KiB, or
// 100 bytes) among 500 of its thread: every write is a commit,
// acknowledged only when durable. The engine's committer batches the
// commits that arrive while one transaction is being stored into the
// next. It reports writes/s (target: 20,000), the CPU time per write, the
// commits per backend Append (the batching), and the share of the wall
// time the single writer connection was busy.
func BenchmarkGroupCommit(b *testing.B) {
	for _, size := range []struct {
		name    string
		content func(i int) string
	}{
		{"7KiB", func(i int) string { return bench.W1Content(1, i) }},
		{"100B", func(i int) string { return bench.W1AppendLine(i) + bench.W1AppendLine(i+1) + "0123456789abcdefghi\n" }},
	} {
		b.Run(size.name, func(b *testing.B) {
			ctx := context.Background()
			sb, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "group.db"))
			if err != nil {
				b.Fatal(err)
			}
			cb := &countingBackend{Backend: sb}
			st := satchel.New(cb)
			defer st.Close()
			const writers = 16
			wss := make([]*satchel.Workspace, writers)
			contents := make([]string, 1000)
			for i := range contents {
				contents[i] = size.content(i)
			}
			for i := range wss {
				if wss[i], err = st.Workspace(ctx, "bench", "t"+strconv.Itoa(i)); err != nil {
					b.Fatal(err)
				}
				if err := wss[i].Write(ctx, "warm.md", "x"); err != nil {
					b.Fatal(err)
				}
			}
			cb.appends.Store(0)
			cb.commits.Store(0)
			cb.appendTime.Store(0)
			cb.packBytes.Store(0)
			var next atomic.Int64
			b.ResetTimer()
			cpu0 := processCPU()
			var wg sync.WaitGroup
			for w := range writers {
				wg.Go(func() {
					ws := wss[w]
					for {
						i := next.Add(1) - 1
						if i >= int64(b.N) {
							return
						}
						if err := ws.Write(ctx, "notes/f"+strconv.FormatInt(i%500, 10)+".md", contents[i%1000]); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N)/1e3, "cpu-µs/write")
			b.ReportMetric(float64(cb.commits.Load())/float64(max(1, cb.appends.Load())), "commits/append")
			b.ReportMetric(float64(cb.packBytes.Load())/float64(max(1, cb.commits.Load())), "pack-B/commit")
			b.ReportMetric(100*float64(cb.appendTime.Load())/float64(b.Elapsed()), "%writer-busy")
		})
	}
}

// BenchmarkGroupCommitFrames runs BenchmarkGroupCommit's 16 writers of 100
// bytes, then reads the SQLite write-ahead log and reports what a
// transaction wrote: its frames (pages) in all, and how many belong to the
// commits table, to its (thread_id, seq) index, and to everything else
// (sqlite_sequence, page 1, pointer maps). Pages touched per transaction is
// what a SQLite commit costs (docs/performance.md, "Group commit").
func BenchmarkGroupCommitFrames(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	path := filepath.Join(dir, "frames.db")
	sb, err := sqlite.Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	st := satchel.New(sb)
	defer st.Close()
	const writers = 16
	wss := make([]*satchel.Workspace, writers)
	for i := range wss {
		if wss[i], err = st.Workspace(ctx, "bench", "t"+strconv.Itoa(i)); err != nil {
			b.Fatal(err)
		}
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				content := bench.W1AppendLine(int(i)) + "0123456789abcdefghi\n"
				if err := wss[w].Write(ctx, "notes/f"+strconv.FormatInt(i%500, 10)+".md", content); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	frames, err := walFrames(path)
	if err != nil {
		b.Fatal(err)
	}
	trees, err := pageTrees(path)
	if err != nil {
		b.Fatal(err)
	}
	var txs, all, table, index int
	byTree := map[string]int{}
	for _, f := range frames {
		byTree[trees[f.page]]++
		all++
		switch trees[f.page] {
		case "commits":
			table++
		case "sqlite_autoindex_commits_1":
			index++
		}
		if f.commit {
			txs++
		}
	}
	if txs == 0 {
		b.Skip("the log holds no transaction (checkpointed and restarted)")
	}
	per := func(n int) float64 { return float64(n) / float64(txs) }
	if os.Getenv("FRAMES_BY_TREE") != "" && b.N > 100 {
		for name, n := range byTree {
			b.Logf("%-30q %.2f frames/tx", name, per(n))
		}
	}
	b.ReportMetric(per(all), "frames/tx")
	b.ReportMetric(per(table), "table-frames/tx")
	b.ReportMetric(per(index), "index-frames/tx")
	b.ReportMetric(per(all-table-index), "other-frames/tx")
	b.ReportMetric(float64(txs), "tx")
}

type walFrame struct {
	page   uint32
	commit bool // the last frame of a transaction
}

// walFrames reads the valid frames of a SQLite write-ahead log (those
// whose salts match the header's: the log is reused after a restart).
func walFrames(db string) ([]walFrame, error) {
	wal, err := os.ReadFile(db + "-wal")
	if err != nil {
		return nil, err
	}
	if len(wal) < 32 {
		return nil, nil
	}
	pageSize := int(binary.BigEndian.Uint32(wal[8:]))
	salts := wal[16:24]
	var frames []walFrame
	for off := 32; off+24+pageSize <= len(wal); off += 24 + pageSize {
		if !bytes.Equal(wal[off+8:off+16], salts) {
			break
		}
		frames = append(frames, walFrame{
			page:   binary.BigEndian.Uint32(wal[off:]),
			commit: binary.BigEndian.Uint32(wal[off+4:]) != 0,
		})
	}
	return frames, nil
}

// pageTrees maps each page of the database to the table or index it
// belongs to (SQLite's dbstat table).
func pageTrees(db string) (map[uint32]string, error) {
	conn, err := sql.Open("sqlite", "file:"+db+"?mode=ro")
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	rows, err := conn.Query("SELECT name, pageno FROM dbstat")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	trees := map[uint32]string{}
	for rows.Next() {
		var name string
		var page uint32
		if err := rows.Scan(&name, &page); err != nil {
			return nil, err
		}
		trees[page] = name
	}
	return trees, rows.Err()
}
