package memory_test

import (
	"context"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/backendtest"
	"github.com/satchel-dev/satchel/backend/memory"
)

// partsBackend stores every pack through AppendParts, cut into pieces, so
// that the contract checks packs kept as parts.
type partsBackend struct{ *memory.Backend }

func (b partsBackend) Append(ctx context.Context, commits []backend.NewCommit) ([]backend.AppendResult, error) {
	ncs := make([]backend.NewCommit, len(commits))
	packs := make([][]string, len(commits))
	for i, nc := range commits {
		p := string(nc.Pack)
		if p != "" {
			a, b := len(p)/3, 2*len(p)/3
			packs[i] = []string{p[:a], p[a:b], "", p[b:]}
		}
		nc.Pack = []byte("not the pack")
		ncs[i] = nc
	}
	return b.AppendParts(ctx, ncs, packs)
}

func TestContractParts(t *testing.T) {
	backendtest.RunContract(t, func(t *testing.T) backend.Backend { return partsBackend{memory.New()} })
}

func TestAppendParts(t *testing.T) {
	ctx := context.Background()
	b := memory.New()
	th, err := b.Thread(ctx, "s", "main", true)
	if err != nil {
		t.Fatal(err)
	}
	parts := []string{"P\x01", strings.Repeat("x", 100), "yz"}
	res, err := b.AppendParts(ctx, []backend.NewCommit{{Thread: th.ID, Seq: 1}, {Thread: th.ID, Seq: 2}, {Thread: th.ID, Seq: 2}},
		[][]string{parts, {"one"}, {"stale"}})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Err != nil || res[1].Err != nil || res[2].Err != backend.ErrStale {
		t.Fatalf("results %+v", res)
	}
	for i, want := range []string{strings.Join(parts, ""), "one"} {
		for range 2 { // joined once, then kept joined
			got, err := b.Pack(ctx, res[i].Commit.ID)
			if err != nil || got != want {
				t.Fatalf("pack %d = %q, %v; want %q", i, got, err, want)
			}
		}
	}
	if err := b.Drop(ctx, th.ID, []int64{1}); err != nil {
		t.Fatal(err)
	}
	if err := b.RewritePack(ctx, res[0].Commit.ID, []byte("blanked")); err != nil {
		t.Fatal(err)
	}
	if got, _ := b.Pack(ctx, res[0].Commit.ID); got != "blanked" {
		t.Errorf("rewritten pack = %q", got)
	}
}
