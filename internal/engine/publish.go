package engine

import (
	"context"
	"errors"

	"github.com/satchel-dev/satchel/backend"
)

// PointAt appends to thread a commit whose tree is that of src, a retained
// commit (of any thread of the scope), only if the thread's head is still
// at sequence base: one compare-and-swap, never retried. It returns
// backend.ErrStale when the head has moved past base. It is how a fork's
// work is published onto the thread it was forked from, all or nothing.
func (e *Engine) PointAt(ctx context.Context, thread, base int64, src backend.Commit, meta []byte) (backend.Commit, error) {
	root, err := decodeRoot(src.Root, src.ID)
	if err != nil {
		return backend.Commit{}, err
	}
	files, bytes, err := e.totals(ctx, root)
	if err != nil {
		return backend.Commit{}, err
	}
	// What the commit adds to its scope's usage is counted over the base
	// (the compare-and-swap makes sure it is still the head).
	var bf, bb int64
	if base > 0 {
		bc, err := e.b.CommitAt(ctx, thread, base)
		if errors.Is(err, backend.ErrNoCommit) {
			return backend.Commit{}, backend.ErrStale // the head moved on and retention took base
		}
		if err != nil {
			return backend.Commit{}, err
		}
		if bf, bb, err = e.commitTotals(ctx, bc); err != nil {
			return backend.Commit{}, err
		}
	}
	l := e.lock(thread)
	defer e.unlock(thread, l)
	res, err := e.commits.do(ctx, backend.NewCommit{
		Thread: thread, Seq: base + 1, Root: encodeRoot(root), Meta: meta,
		Requires: &backend.CommitID{Thread: src.Thread, Seq: src.Seq},
		Files:    files, Bytes: bytes, DeltaFiles: files - bf, DeltaBytes: bytes - bb,
	}, nil)
	if err != nil {
		e.heads.forget(thread)
		return backend.Commit{}, err
	}
	if res.Err != nil {
		e.heads.forget(thread)
		return backend.Commit{}, res.Err
	}
	e.heads.set(thread, res.Commit)
	return res.Commit, nil
}
