package satchel_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/memory"
)

// failingBackend is a memory backend whose appends fail once failAfter
// of them succeeded: a database that breaks in the middle of an import.
type failingBackend struct {
	*memory.Backend
	appends, failAfter  atomic.Int64
	docs, failDocsAfter atomic.Int64
}

func (f *failingBackend) PutDocVersions(ctx context.Context, id backend.DocID, vs []backend.Doc) error {
	if f.docs.Add(1) > f.failDocsAfter.Load() {
		return errBroken
	}
	return f.Backend.PutDocVersions(ctx, id, vs)
}

var errBroken = errors.New("the database broke")

func (f *failingBackend) fail() bool { return f.appends.Add(1) > f.failAfter.Load() }

func (f *failingBackend) Append(ctx context.Context, ncs []backend.NewCommit) ([]backend.AppendResult, error) {
	if f.fail() {
		return nil, errBroken
	}
	return f.Backend.Append(ctx, ncs)
}

func (f *failingBackend) AppendParts(ctx context.Context, ncs []backend.NewCommit, packs [][]string) ([]backend.AppendResult, error) {
	if f.fail() {
		return nil, errBroken
	}
	return f.Backend.AppendParts(ctx, ncs, packs)
}

// TestImportUndo: when the database fails in the middle of an import,
// what the import wrote is removed again, whatever the point of failure.
func TestImportUndo(t *testing.T) {
	ctx := t.Context()
	src, _ := satchel.Open(ctx, "memory:")
	defer src.Close()
	populate(t, src)
	file := export(t, src, satchel.ExportOptions{Project: exportProject})
	for _, n := range []int64{0, 1, 5, 12, 19, 1000} {
		fb := &failingBackend{Backend: memory.New()}
		fb.failAfter.Store(n)
		fb.failDocsAfter.Store(2) // when every commit lands: the third document fails
		dst := satchel.New(fb)
		_, err := importBytes(t, dst, file, satchel.ImportOptions{})
		if !errors.Is(err, errBroken) {
			t.Fatalf("failing after %d appends: %v", n, err)
		}
		if sc, _ := dst.ScopeNames(ctx); len(sc) != 0 {
			t.Errorf("failing after %d appends: scopes %v left", n, sc)
		}
		for _, sc := range []string{"acme", "beta"} {
			if ts, _ := dst.Threads(ctx, sc); len(ts) != 0 {
				t.Errorf("failing after %d appends: threads %v left in %s", n, ts, sc)
			}
		}
		if toks, _ := dst.Tokens(ctx); len(toks) != 0 {
			t.Errorf("failing after %d appends: %d tokens left", n, len(toks))
		}
		if l, _ := dst.LimitsOf(ctx, "acme", ""); l.MaxFiles != satchel.DefaultMaxFiles {
			t.Errorf("failing after %d appends: the scope's limits stayed: %+v", n, l)
		}
		p, _ := satchel.LoadProjectFS(exportProject)
		c, _ := dst.Collection(ctx, p, "acme", "notes", satchel.IncludeExpired())
		if page, _ := c.List(ctx, 10, ""); len(page.Documents) != 0 {
			t.Errorf("failing after %d appends: documents left", n)
		}
		fb.Close()
	}
}
