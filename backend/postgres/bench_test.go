package postgres

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

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

// BenchmarkAppend appends one commit per call, one writer: one round trip
// and one transaction (one WAL flush) per commit.
func BenchmarkAppend(b *testing.B) {
	for _, ps := range packSizes {
		b.Run("pack="+ps.name, func(b *testing.B) {
			be := openTest(b)
			b.Cleanup(func() { be.Close() })
			th := benchThread(b, be, "main")
			ctx := b.Context()
			var seq int64
			b.SetBytes(int64(len(ps.pack)))
			b.ResetTimer()
			for b.Loop() {
				seq++
				res, err := be.Append(ctx, []backend.NewCommit{packNC(th, seq, ps.pack)})
				if err != nil || res[0].Err != nil {
					b.Fatal(err, res[0].Err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
		})
	}
}

// BenchmarkAppend16 runs 16 writers on 16 threads, one commit per Append:
// one transaction each, in parallel on the pool's connections.
func BenchmarkAppend16(b *testing.B) {
	for _, ps := range packSizes {
		b.Run("pack="+ps.name, func(b *testing.B) { benchAppend16(b, ps.pack, false) })
	}
}

// BenchmarkAppend16Group runs the same writers through a group committer:
// concurrent commits share one batch, one transaction, one WAL flush.
func BenchmarkAppend16Group(b *testing.B) {
	for _, ps := range packSizes {
		b.Run("pack="+ps.name, func(b *testing.B) { benchAppend16(b, ps.pack, true) })
	}
}

func benchAppend16(b *testing.B, pack []byte, group bool) {
	be := openTest(b)
	b.Cleanup(func() { be.Close() })
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
	if group {
		b.ReportMetric(float64(g.commits.Load())/float64(max(1, g.batches.Load())), "commits/batch")
	}
}

// groupCommitter is the simplest group commit: writers queue their commit,
// one of them (the leader) sends everything queued in one Append, and
// each writer returns when its own commit is durable.
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

// BenchmarkHead reads the head of a thread of 1,000 commits: one round
// trip.
func BenchmarkHead(b *testing.B) {
	be := openTest(b)
	b.Cleanup(func() { be.Close() })
	th, _ := fill(b, be, 1000)
	ctx := b.Context()
	b.ResetTimer()
	for b.Loop() {
		if _, ok, err := be.Head(ctx, th); err != nil || !ok {
			b.Fatal(err)
		}
	}
}

// BenchmarkPack reads 10 KB packs at random among 1,000.
func BenchmarkPack(b *testing.B) {
	be := openTest(b)
	b.Cleanup(func() { be.Close() })
	_, cs := fill(b, be, 1000)
	ctx := b.Context()
	r := rand.New(rand.NewPCG(1, 1))
	b.SetBytes(int64(len(benchPack)))
	b.ResetTimer()
	for b.Loop() {
		p, err := be.Pack(ctx, cs[r.IntN(len(cs))].ID)
		if err != nil || len(p) != len(benchPack) {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendNotify measures what the NOTIFY each commit sends in its
// transaction costs (changes.go): one writer, and 16 on 16 threads, each
// with and without it, side by side.
func BenchmarkAppendNotify(b *testing.B) {
	pack := packSizes[0].pack
	for _, notify := range []bool{false, true} {
		name := fmt.Sprintf("notify=%v", notify)
		b.Run("writers=1/"+name, func(b *testing.B) {
			notifyCommits = notify
			defer func() { notifyCommits = true }()
			be := openTest(b)
			b.Cleanup(func() { be.Close() })
			th := benchThread(b, be, "main")
			var seq int64
			for b.Loop() {
				seq++
				res, err := be.Append(b.Context(), []backend.NewCommit{packNC(th, seq, pack)})
				if err != nil || res[0].Err != nil {
					b.Fatal(err, res[0].Err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
		})
		b.Run("writers=16/"+name, func(b *testing.B) {
			notifyCommits = notify
			defer func() { notifyCommits = true }()
			benchAppend16(b, pack, false)
		})
	}
}
