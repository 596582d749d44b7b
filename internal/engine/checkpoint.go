package engine

import (
	"context"
	"errors"

	"github.com/satchel-dev/satchel/backend"
)

// Checkpoint names the head of thread name and returns it. check is asked
// about the head first (the zero Commit for a thread without commits);
// its error refuses the checkpoint. A thread without commits gets one: an
// empty commit that carries the name, stored through the committer so
// that the head it caches is that commit; when another writer committed
// first, the name goes to the head that writer made. The backend's
// refusals (ErrCheckpointExists) are returned as they are.
func (e *Engine) Checkpoint(ctx context.Context, thread int64, name string, meta []byte, check func(head backend.Commit) error) (backend.Commit, error) {
	head, ok, err := e.readHead(ctx, thread)
	if err != nil {
		return backend.Commit{}, err
	}
	if err := check(head); err != nil {
		return backend.Commit{}, err
	}
	if !ok {
		l := e.lock(thread)
		e.settlePending(thread, l)
		res, err := e.commits.do(ctx, backend.NewCommit{Thread: thread, Seq: 1, Meta: meta, Checkpoint: name}, nil)
		e.unlock(thread, l)
		if err == nil {
			err = res.Err
		}
		if err == nil {
			e.heads.set(thread, res.Commit)
			return res.Commit, nil
		}
		e.heads.forget(thread)
		if !errors.Is(err, backend.ErrStale) {
			return backend.Commit{}, err
		}
		if head, _, err = e.readHead(ctx, thread); err != nil {
			return backend.Commit{}, err
		}
	}
	if err := e.b.SetCheckpoint(ctx, thread, name, head.Seq); err != nil {
		return backend.Commit{}, err
	}
	return head, nil
}
