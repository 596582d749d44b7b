package postgres

import (
	"fmt"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel/backend"
)

// BenchmarkReplaceDocsBulk stores batches of new documents (W2-sized, with
// their change-log entries) as the documents' committer hands them over,
// with the new keys in one statement (bulk) and in one statement each
// (statements), side by side. The time per document is mostly the
// server's: the batch is one round trip on loopback.
func BenchmarkReplaceDocsBulk(b *testing.B) {
	js := []byte(`{"company_id":"c0001","confidence":0.5,"metadata":{"analyst":"a","source":"s"},"summary":"` +
		strings.Repeat("x", 200) + `","tags":["x"],"topic":"t001","updated_at":"2026-01-01T00:00:00Z"}`)
	be := openTest(b)
	n := 0
	for _, size := range []int{2, 4, 16, 64} {
		for _, off := range []bool{true, false} {
			name := fmt.Sprintf("batch=%d/bulk", size)
			if off {
				name = fmt.Sprintf("batch=%d/statements", size)
			}
			b.Run(name, func(b *testing.B) {
				bulkOff = off
				defer func() { bulkOff = false }()
				rs := make([]backend.DocReplace, size)
				for i := 0; i < b.N; i += size {
					for j := range rs {
						rs[j] = backend.DocReplace{
							DocID:   backend.DocID{Store: "bench", Scope: "s", Key: fmt.Sprintf("k%09d", n)},
							JSON:    js,
							Version: 1,
							Change:  &backend.DocChange{Op: "set", Scope: "s", Meta: []byte(`{"op":"set","by":{"agent":"bench"}}`)},
						}
						n++
					}
					res, err := be.ReplaceDocs(b.Context(), rs)
					if err != nil {
						b.Fatal(err)
					}
					for _, r := range res {
						if r.Err != nil {
							b.Fatal(r.Err)
						}
					}
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/doc")
			})
		}
	}
}
