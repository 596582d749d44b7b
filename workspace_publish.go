package satchel

import (
	"context"
	"errors"
	"fmt"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/internal/errs"
)

// Head returns the workspace's head commit (Seq 0 for a thread without
// commits yet).
func (w *Workspace) Head(ctx context.Context) (Commit, error) {
	if w.rv != nil {
		rw, err := w.reading(ctx)
		if err != nil {
			return Commit{}, err
		}
		return rw.Head(ctx)
	}
	c, err := w.resolve(ctx, "")
	if err != nil {
		return Commit{}, err
	}
	return w.s.commitOf(c, nil), nil
}

// PublishTo makes the tree of w's head the new head of thread onto (of
// the same scope), as one commit, with one compare-and-swap: only if
// onto's head is still the commit of sequence base, the one w was forked
// from (0: onto had no commits). Nothing is copied. When onto has moved,
// nothing is published and the error is an ErrConflict; w is untouched,
// so its work is not lost. This is how a run on a fork publishes all of
// its commits at once, or none of them. The commit's summary is
// "publish THREAD@SEQ" (w's thread and head) unless PublishSummary says
// otherwise.
func (w *Workspace) PublishTo(ctx context.Context, onto *Workspace, base int64, opts ...PublishOption) (Commit, error) {
	if w.rv != nil || onto.rv != nil {
		return Commit{}, w.refuseUnderReview("publish")
	}
	var o publishOpts
	for _, opt := range opts {
		opt(&o)
	}
	if w.scope != onto.scope {
		return Commit{}, errs.New(errs.ErrInvalidArgument, "cannot publish thread %s of scope %s onto scope %s", w.thread, w.scope, onto.scope)
	}
	return w.publishAt(ctx, onto, base, "", o.summary)
}

// publishAt is PublishTo of the commit ref names (a sequence number; ""
// for the head), with the commit's summary ("": the usual one).
func (w *Workspace) publishAt(ctx context.Context, onto *Workspace, base int64, ref, summary string) (Commit, error) {
	if base < 0 {
		return Commit{}, errs.New(errs.ErrInvalidArgument, "invalid base %d: a sequence number is at least 0", base)
	}
	src, err := w.resolve(ctx, ref)
	if err != nil {
		return Commit{}, err
	}
	if src.ID == 0 {
		return Commit{}, errs.New(errs.ErrNotFound, "thread %s has no commits to publish", w.thread)
	}
	id, _, err := onto.threadID(ctx, true)
	if err != nil {
		return Commit{}, err
	}
	// An archive entry is a commit: a head at base that is one refuses
	// the publish, and one after base fails the compare-and-swap.
	if head, ok, err := w.s.eng.HeadCommit(ctx, id); err != nil {
		return Commit{}, err
	} else if ok && head.Seq == base {
		if err := onto.checkWritable(head); err != nil {
			return Commit{}, err
		}
	}
	if onto.gate != nil {
		if err := onto.canPublish(ctx, id, w.thread, src); err != nil {
			return Commit{}, err
		}
	}
	var meta []byte
	if summary == "" {
		meta = markOwn(onto.meta("publish", fmt.Sprintf("publish %s@%d", w.thread, src.Seq)))
	} else {
		meta = onto.meta("publish", summary)
	}
	c, err := w.s.eng.PointAt(ctx, id, base, src, meta)
	switch {
	case errors.Is(err, backend.ErrStale):
		return Commit{}, errs.New(errs.ErrConflict, "thread %s changed since commit %d: nothing was published", onto.thread, base)
	case errors.Is(err, backend.ErrNotRetained):
		return Commit{}, errs.New(errs.ErrNotFound, "commit not found: %d is no longer retained", src.Seq)
	case err != nil:
		return Commit{}, err
	}
	return w.s.commitOf(c, nil), nil
}

// PublishOption changes what PublishTo records.
type PublishOption func(*publishOpts)

type publishOpts struct{ summary string }

// PublishSummary is the publish commit's summary, for a publisher that
// says better than "publish THREAD@SEQ" what is published (an atomic Lua
// run: "publish run of summarize.lua (3 commits)"), since the thread it
// came from is often deleted right after.
func PublishSummary(s string) PublishOption { return func(o *publishOpts) { o.summary = s } }
