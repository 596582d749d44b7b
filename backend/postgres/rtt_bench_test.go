package postgres

import (
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/internal/delayproxy"
)

// rtts are the round trips BenchmarkAppendRTT runs behind.
var rtts = []time.Duration{0, time.Millisecond}

// BenchmarkAppendRTT appends batches of 1, 7 and 16 commits through the
// delay proxy, without and with a round trip of 1 ms: what a batch costs
// beyond the round trip (the server's work and the flush).
func BenchmarkAppendRTT(b *testing.B) {
	u0 := testURL(b)
	schema := testSchema()
	be0, err := OpenFresh(b.Context(), u0, schema)
	if err != nil {
		b.Fatal(err)
	}
	defer DropSchema(b.Context(), u0, schema)
	defer be0.Close()
	pu, _ := url.Parse(u0)
	for _, rtt := range rtts {
		px, err := delayproxy.Start(pu.Host, rtt)
		if err != nil {
			b.Fatal(err)
		}
		u := *pu
		u.Host = px.Addr()
		be, err := Open(b.Context(), withSearchPath(u.String(), schema))
		if err != nil {
			b.Fatal(err)
		}
		for _, n := range []int{1, 7, 16} {
			b.Run(fmt.Sprintf("rtt=%v/n=%d", rtt, n), func(b *testing.B) {
				th := benchThread(b, be, fmt.Sprintf("t%v%d", rtt, n))
				var seq int64
				for b.Loop() {
					ncs := chainOf(th, &seq, n, false)
					res, err := be.Append(b.Context(), ncs)
					if err != nil || res[0].Err != nil {
						b.Fatal(err, res[0].Err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "us/append")
			})
		}
		be.Close()
		px.Close()
	}
}

// BenchmarkAppendRun appends chains of 4 and 16 commits of 1 KB to one
// thread, as runs (one statement for the chain) and as a statement a
// commit, side by side: the server's cost of a chained commit.
func BenchmarkAppendRun(b *testing.B) {
	be := openTest(b)
	defer be.Close()
	threads := 0
	for _, n := range []int{4, 16} {
		for _, off := range []bool{true, false} {
			name := fmt.Sprintf("n=%d/run", n)
			if off {
				name = fmt.Sprintf("n=%d/statements", n)
			}
			b.Run(name, func(b *testing.B) {
				runsOff = off
				defer func() { runsOff = false }()
				threads++
				th := benchThread(b, be, fmt.Sprintf("t%d", threads))
				var seq int64
				for b.Loop() {
					ncs := chainOf(th, &seq, n, true)
					res, err := be.Append(b.Context(), ncs)
					if err != nil {
						b.Fatal(err)
					}
					for _, r := range res {
						if r.Err != nil {
							b.Fatal(r.Err)
						}
					}
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/commit")
			})
		}
	}
}

// chainOf returns n commits of 1 KB packs to thread th after *seq, which
// it advances; chained marks each after the first as chained to the one
// before it.
func chainOf(th int64, seq *int64, n int, chained bool) []backend.NewCommit {
	ncs := make([]backend.NewCommit, n)
	for i := range ncs {
		*seq++
		ncs[i] = packNC(th, *seq, smallPack)
		ncs[i].Chained = chained && i > 0
	}
	return ncs
}
