package sqlite

import (
	"fmt"
	"os"
	"testing"

	"github.com/satchel-dev/satchel/backend"
)

// BenchmarkReplaceDocs stores batches of new documents of about the size
// of W2's, each with its entry in the log of changes, as the committer of
// documents hands them over: the writer's CPU time per document, against
// the batch's size (size 1 is ReplaceDoc, a lone set's path). For
// experiments, SATCHEL_BENCH_NOLOG=1 leaves the log entries out and
// SATCHEL_BENCH_NOTRIGGERS=1 drops the documents quota's triggers from the
// benchmark's database (what each costs a document).
func BenchmarkReplaceDocs(b *testing.B) {
	js := []byte(`{"company_id":"c0001","confidence":0.5,"metadata":{"analyst":"a","source":"s"},"summary":"` + string(make([]byte, 200)) + `","tags":["x"],"topic":"t001","updated_at":"2026-01-01T00:00:00Z"}`)
	for i := range js {
		if js[i] == 0 {
			js[i] = 'x'
		}
	}
	for _, size := range []int{1, 2, 4, 8, 16, 32, 64} {
		b.Run(fmt.Sprintf("batch=%d", size), func(b *testing.B) {
			be := openTest(b, benchOptions())
			if os.Getenv("SATCHEL_BENCH_NOTRIGGERS") == "1" {
				for _, t := range []string{"docs_quota_check", "docs_quota_insert"} {
					if _, err := be.w.Exec("DROP TRIGGER " + t); err != nil {
						b.Fatal(err)
					}
				}
			}
			nolog := os.Getenv("SATCHEL_BENCH_NOLOG") == "1"
			ctx := b.Context()
			rs := make([]backend.DocReplace, size)
			n := 0
			b.ResetTimer()
			start := cpuTime()
			for i := 0; i < b.N; i += size {
				for j := range rs {
					rs[j] = backend.DocReplace{
						DocID:   backend.DocID{Store: "bench", Scope: "s", Key: fmt.Sprintf("c%04d:t%03d", n%1000, n/1000)},
						JSON:    js,
						Version: 1,
						Change:  &backend.DocChange{Op: "set", Scope: "s", Meta: []byte(`{"op":"set","by":{"agent":"bench"}}`)},
					}
					if nolog {
						rs[j].Change = nil
					}
					n++
				}
				if size == 1 {
					if _, err := be.ReplaceDoc(ctx, rs[0]); err != nil {
						b.Fatal(err)
					}
					continue
				}
				res, err := be.ReplaceDocs(ctx, rs)
				if err != nil {
					b.Fatal(err)
				}
				for _, r := range res {
					if r.Err != nil {
						b.Fatal(r.Err)
					}
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(cpuTime()-start)/float64(n)/1e3, "cpu-µs/doc")
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "docs/s")
		})
	}
}
