package backendtest

import (
	"context"
	"errors"
	"testing"

	"github.com/satchel-dev/satchel/backend"
)

// checkAppendChainedQuota: a chain under a scope's quota stores its
// commits while they fit, each counted after those before it; the first
// that does not is refused by the quota (reported against the usage the
// stored ones left), and those chained to it are stale. The counters hold
// exactly what was stored, and a chain that fits whole moves them by its
// sum.
func checkAppendChainedQuota(t *testing.T, b backend.Backend) {
	q, ok := backend.As[backend.Quotas](b)
	if !ok {
		t.Skipf("%T keeps no quotas", b)
	}
	ctx := t.Context()
	th := newThread(t, b, "quota", "main")
	mustAppend(t, b, nc(th.ID, 1))
	live := func(_ context.Context, heads []backend.Commit) ([]int64, []int64, error) {
		return make([]int64, len(heads)), make([]int64, len(heads)), nil
	}
	lim := backend.Usage{Bytes: backend.NoLimit, Files: 3, Threads: backend.NoLimit, Documents: backend.NoLimit, HistoryBytes: backend.NoLimit}
	if err := q.SetQuota(ctx, "quota", lim, live); err != nil {
		t.Fatal(err)
	}
	usage := func() backend.Usage {
		t.Helper()
		rows, err := q.Quotas(ctx, "quota")
		if err != nil || len(rows) != 1 {
			t.Fatalf("Quotas: %v, %d rows", err, len(rows))
		}
		return rows[0].Used
	}
	before := usage()
	chain := func(from int64, n int) []backend.NewCommit {
		ncs := make([]backend.NewCommit, n)
		for i := range ncs {
			ncs[i] = nc(th.ID, from+int64(i))
			ncs[i].Chained = i > 0
			ncs[i].Files, ncs[i].DeltaFiles = int64(i+1), 1
			ncs[i].Bytes, ncs[i].DeltaBytes = int64(10*(i+1)), 10
		}
		return ncs
	}

	ncs := chain(2, 5)
	res, err := b.Append(ctx, ncs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if res[i].Err != nil {
			t.Fatalf("entry %d of 5, within the quota: %v", i, res[i].Err)
		}
	}
	var qe *backend.QuotaError
	if !errors.As(res[3].Err, &qe) || qe.Counter != "files" || qe.Would != 4 || qe.Limit != 3 {
		t.Fatalf("the fourth file: %v, want the files quota refusing 4 over 3", res[3].Err)
	}
	if !errors.Is(res[4].Err, backend.ErrStale) {
		t.Fatalf("the entry chained to the refused one: %v, want ErrStale", res[4].Err)
	}
	if got := headSeq(t, b, th.ID); got != 4 {
		t.Fatalf("head at seq %d, want 4 (three of the chain stored)", got)
	}
	after := usage()
	var hist int64
	for _, c := range ncs[:3] {
		hist += int64(len(c.Pack))
	}
	if after.Files != before.Files+3 || after.Bytes != before.Bytes+30 || after.HistoryBytes != before.HistoryBytes+hist {
		t.Fatalf("usage %+v after %+v: want 3 files, 30 bytes and %d bytes of history more", after, before, hist)
	}

	// Lifted, a chain of four goes whole and counts its sum.
	lim.Files = 100
	if err := q.SetQuota(ctx, "quota", lim, live); err != nil {
		t.Fatal(err)
	}
	res, err = b.Append(ctx, chain(5, 4))
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r.Err != nil {
			t.Fatalf("entry %d of a chain that fits: %v", i, r.Err)
		}
	}
	if got := usage(); got.Files != after.Files+4 || got.Bytes != after.Bytes+40 {
		t.Fatalf("usage %+v after a chain of 4 from %+v", got, after)
	}
}
