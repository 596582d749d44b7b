package sqlite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/satchel-dev/satchel/backend"
)

// benchPack is a 10 KB pack of incompressible bytes, the size of a commit
// that writes one small file; smallPack is 1 KB, a commit of a small edit.
var benchPack, smallPack = randomBytes(10 << 10), randomBytes(1 << 10)

func randomBytes(n int) []byte {
	p := make([]byte, n)
	r := rand.New(rand.NewPCG(7, uint64(n)))
	for i := range p {
		p[i] = byte(r.Uint32())
	}
	return p
}

// packSizes are the packs the append benchmarks run with.
var packSizes = []struct {
	name string
	pack []byte
}{{"10KB", benchPack}, {"1KB", smallPack}}

var benchRoot = []byte("0123456789abcdef0123456789abcdef0123")

func benchNC(thread, seq int64) backend.NewCommit {
	return packNC(thread, seq, benchPack)
}

func packNC(thread, seq int64, pack []byte) backend.NewCommit {
	return backend.NewCommit{Thread: thread, Seq: seq, Root: benchRoot, Meta: []byte(`{"by":"bench","tool":"write_file"}`), Pack: pack}
}

func benchThread(b *testing.B, be *Backend, name string) int64 {
	th, err := be.CreateThread(b.Context(), "bench", name)
	if err != nil {
		b.Fatal(err)
	}
	return th.ID
}

// cpuTime is the CPU time (user and system) the process has used: under
// a loaded machine it measures the cost of an operation better than the
// wall clock.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time per operation since start.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N)/1e3, "cpu-µs/op")
}

// benchOptions lets experiments change the backend's settings from the
// environment: SATCHEL_BENCH_PARAMS adds DSN parameters, and
// SATCHEL_BENCH_INLINE_CHECKPOINTS=1 leaves checkpoints to the writer.
func benchOptions() options {
	return options{
		params:            os.Getenv("SATCHEL_BENCH_PARAMS"),
		inlineCheckpoints: os.Getenv("SATCHEL_BENCH_INLINE_CHECKPOINTS") == "1",
	}
}

// BenchmarkAppend appends one commit per call, one writer: the cost of
// an uncontended commit, with a 10 KB and a 1 KB pack.
func BenchmarkAppend(b *testing.B) {
	for _, ps := range packSizes {
		b.Run("pack="+ps.name, func(b *testing.B) {
			be := openTest(b, benchOptions())
			b.Cleanup(func() { be.Close() }) // after the timer stops: closing checkpoints
			th := benchThread(b, be, "main")
			ctx := b.Context()
			var seq int64
			b.SetBytes(int64(len(ps.pack)))
			b.ResetTimer()
			cpu0 := cpuTime()
			for b.Loop() {
				seq++
				res, err := be.Append(ctx, []backend.NewCommit{packNC(th, seq, ps.pack)})
				if err != nil || res[0].Err != nil {
					b.Fatal(err, res[0].Err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
			reportCPU(b, cpu0)
		})
	}
}

// BenchmarkAppend16 runs 16 writers, each on its own thread, each
// appending one commit per call: the writer's single connection serialises
// them, one transaction per commit.
func BenchmarkAppend16(b *testing.B) {
	for _, ps := range packSizes {
		b.Run("pack="+ps.name, func(b *testing.B) { benchAppend16(b, ps.pack, false) })
	}
}

// BenchmarkAppend16Group runs the same writers through a group committer:
// the commits waiting while one Append runs go together in the next, one
// transaction for all.
func BenchmarkAppend16Group(b *testing.B) {
	for _, ps := range packSizes {
		b.Run("pack="+ps.name, func(b *testing.B) { benchAppend16(b, ps.pack, true) })
	}
}

func benchAppend16(b *testing.B, pack []byte, group bool) {
	be := openTest(b, benchOptions())
	b.Cleanup(func() { be.Close() }) // after the timer stops: closing checkpoints
	// 16 goroutines: parallelism times GOMAXPROCS, one thread each.
	par := max(1, 16/runtime.GOMAXPROCS(0))
	ths := make([]int64, par*runtime.GOMAXPROCS(0))
	for i := range ths {
		ths[i] = benchThread(b, be, fmt.Sprint(i))
	}
	g := &groupCommitter{b: be}
	var next atomic.Int64
	b.SetParallelism(par)
	b.SetBytes(int64(len(pack)))
	b.ResetTimer()
	cpu0 := cpuTime()
	b.RunParallel(func(pb *testing.PB) {
		th := ths[next.Add(1)-1]
		var seq int64
		for pb.Next() {
			seq++
			var r backend.AppendResult
			var err error
			if group {
				r, err = g.append(context.Background(), packNC(th, seq, pack))
			} else {
				var res []backend.AppendResult
				res, err = be.Append(context.Background(), []backend.NewCommit{packNC(th, seq, pack)})
				if err == nil {
					r = res[0]
				}
			}
			if err != nil || r.Err != nil {
				b.Error(err, r.Err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
	reportCPU(b, cpu0)
	if group {
		b.ReportMetric(float64(g.commits.Load())/float64(max(1, g.batches.Load())), "commits/batch")
	}
}

// groupCommitter is the simplest group commit: writers queue their commit,
// one of them (the leader) sends everything queued in one Append, and
// each writer returns when its own commit is durable. The engine's is the
// same idea.
type groupCommitter struct {
	b       backend.Backend
	mu      sync.Mutex
	queue   []*groupReq
	busy    bool
	batches atomic.Int64
	commits atomic.Int64
}

type groupReq struct {
	nc     backend.NewCommit
	res    backend.AppendResult
	err    error
	done   chan struct{}
	leader bool
}

func (g *groupCommitter) append(ctx context.Context, nc backend.NewCommit) (backend.AppendResult, error) {
	r := &groupReq{nc: nc, done: make(chan struct{})}
	g.mu.Lock()
	g.queue = append(g.queue, r)
	if g.busy {
		g.mu.Unlock()
		<-r.done
		if !r.leader {
			return r.res, r.err
		}
		g.mu.Lock()
	}
	g.busy = true
	batch := g.queue
	g.queue = nil
	g.mu.Unlock()

	ncs := make([]backend.NewCommit, len(batch))
	for i, q := range batch {
		ncs[i] = q.nc
	}
	res, err := g.b.Append(ctx, ncs)
	g.batches.Add(1)
	g.commits.Add(int64(len(batch)))
	for i, q := range batch {
		q.leader = false
		if err != nil {
			q.err = err
		} else {
			q.res = res[i]
		}
		if q != r {
			close(q.done)
		}
	}
	g.mu.Lock()
	if len(g.queue) > 0 {
		g.queue[0].leader = true
		close(g.queue[0].done)
	} else {
		g.busy = false
	}
	g.mu.Unlock()
	return r.res, r.err
}

// fill appends n commits to a new thread and returns it with its commits.
func fill(b *testing.B, be *Backend, n int) (int64, []backend.Commit) {
	th := benchThread(b, be, fmt.Sprint("filled-", n))
	var cs []backend.Commit
	for seq := int64(1); seq <= int64(n); {
		var batch []backend.NewCommit
		for ; seq <= int64(n) && len(batch) < 100; seq++ {
			batch = append(batch, benchNC(th, seq))
		}
		res, err := be.Append(b.Context(), batch)
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range res {
			cs = append(cs, r.Commit)
		}
	}
	return th, cs
}

// BenchmarkHead reads the head of a thread of 1,000 commits.
// BenchmarkHead reads one thread's head again and again: between commits
// it is answered from memory (readheads.go). BenchmarkHeadQuery asks
// SQLite every time, as every read did before.
func BenchmarkHead(b *testing.B) { benchHead(b, false) }

func BenchmarkHeadQuery(b *testing.B) { benchHead(b, true) }

func benchHead(b *testing.B, query bool) {
	be := openTest(b, options{})
	if idx := be.readHeads.idx; query {
		be.readHeads.idx = nil
		b.Cleanup(idx.release) // after Close, below: cleanups run last first
	}
	b.Cleanup(func() { be.Close() }) // after the timer stops: closing checkpoints
	th, _ := fill(b, be, 1000)
	ctx := b.Context()
	b.ResetTimer()
	cpu0 := cpuTime()
	for b.Loop() {
		if _, ok, err := be.Head(ctx, th); err != nil || !ok {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu0)
}

// BenchmarkPack reads 10 KB packs at random among 1,000.
func BenchmarkPack(b *testing.B) {
	be := openTest(b, options{})
	b.Cleanup(func() { be.Close() }) // after the timer stops: closing checkpoints
	_, cs := fill(b, be, 1000)
	ctx := b.Context()
	r := rand.New(rand.NewPCG(1, 1))
	b.SetBytes(int64(len(benchPack)))
	b.ResetTimer()
	cpu0 := cpuTime()
	for b.Loop() {
		p, err := be.Pack(ctx, cs[r.IntN(len(cs))].ID)
		if err != nil || len(p) != len(benchPack) {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu0)
}

// BenchmarkReadsDuringWrites measures Head and Pack reads from 4
// goroutines while another goroutine appends without pause, with the
// reader pool and with every read sent through the writer's connection:
// the reason for the separate reader pool.
func BenchmarkReadsDuringWrites(b *testing.B) {
	for _, v := range []struct {
		name string
		opt  options
	}{{"readerPool", options{}}, {"writerOnly", options{sharedPool: true}}} {
		b.Run(v.name, func(b *testing.B) {
			be := openTest(b, v.opt)
			b.Cleanup(func() { be.Close() }) // after the timer stops: closing checkpoints
			th, cs := fill(b, be, 200)
			wth := benchThread(b, be, "writer")
			stop := make(chan struct{})
			var writes atomic.Int64
			var wg sync.WaitGroup
			wg.Go(func() {
				for seq := int64(1); ; seq++ {
					select {
					case <-stop:
						return
					default:
					}
					if _, err := be.Append(context.Background(), []backend.NewCommit{benchNC(wth, seq)}); err != nil {
						b.Error(err)
						return
					}
					writes.Add(1)
				}
			})
			b.SetParallelism(2)
			start := time.Now()
			b.ResetTimer()
			cpu0 := cpuTime()
			b.RunParallel(func(pb *testing.PB) {
				r := rand.New(rand.NewPCG(rand.Uint64(), 1))
				for pb.Next() {
					if _, _, err := be.Head(context.Background(), th); err != nil {
						b.Error(err)
						return
					}
					if _, err := be.Pack(context.Background(), cs[r.IntN(len(cs))].ID); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			reportCPU(b, cpu0)
			close(stop)
			wg.Wait()
			el := time.Since(start).Seconds()
			b.ReportMetric(float64(b.N)/el, "reads/s")
			b.ReportMetric(float64(writes.Load())/el, "writes/s")
		})
	}
}
