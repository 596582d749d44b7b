package luahost

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/satchel-dev/satchel"
)

// runAtomic runs the script on a fork of the thread's head and publishes
// the fork's head onto the thread with one compare-and-swap when the run
// succeeds (docs/decisions/0018-lua-atomic-runs.md). A run that fails
// deletes its fork: nothing was published. A thread that moved during the
// run keeps the fork, under the name the error gives.
func (s *Script) runAtomic(ctx context.Context, cfg *Config, parent *satchel.Workspace) (*Result, error) {
	base, err := parent.Head(ctx)
	if err != nil {
		return nil, err
	}
	name := forkName(cfg.Thread)
	var fork *satchel.Workspace
	if base.Seq == 0 {
		fork, err = cfg.Store.Workspace(ctx, cfg.Scope, name, cfg.workspaceOptions()...)
	} else {
		fork, err = parent.Fork(ctx, strconv.FormatInt(base.Seq, 10), name)
	}
	if err != nil {
		return nil, err
	}
	// The fork's own first commit (the fork) is not the run's work.
	start, err := fork.Head(ctx)
	if err != nil {
		return nil, err
	}
	drop := func() { _ = cfg.Store.DeleteThread(context.WithoutCancel(ctx), cfg.Scope, name) }
	if _, err := s.exec(ctx, cfg, fork); err != nil {
		drop()
		return nil, err
	}
	res := &Result{}
	if res.Commits, err = commitsSince(ctx, fork, start.Seq, cfg.Actor); err != nil {
		drop()
		return nil, err
	}
	if err := s.readOutput(ctx, fork, res); err != nil {
		drop()
		return nil, err
	}
	head, err := fork.Head(ctx)
	if err != nil {
		drop()
		return nil, err
	}
	if head.Seq == start.Seq { // no change: nothing to publish
		drop()
		return res, nil
	}
	n := head.Seq - start.Seq
	what := fmt.Sprintf("%d commits", n)
	if n == 1 {
		what = "1 commit"
	}
	pub, err := fork.PublishTo(ctx, parent, base.Seq, satchel.PublishSummary(fmt.Sprintf("publish run of %s (%s)", s.Name, what)))
	if errors.Is(err, satchel.ErrConflict) {
		return nil, &satchel.Error{Kind: satchel.ErrConflict, Msg: fmt.Sprintf(
			"thread %s changed during the run; nothing was published (the run's work is kept on thread %s)", cfg.Thread, name)}
	}
	if err != nil {
		drop()
		return nil, err
	}
	drop()
	// The run's own commits were on its fork, now deleted: their
	// sequence numbers are the fork's, not the thread's, and say so.
	for i := range res.Commits {
		res.Commits[i].Fork = name
	}
	res.Published = &pub
	res.Commits = append(res.Commits, Commit{Commit: pub})
	return res, nil
}

// forkName is the thread an atomic run of thread works on.
func forkName(thread string) string {
	const suffix = len("-run-12345678")
	if len(thread) > 128-suffix {
		thread = thread[:128-suffix]
	}
	return thread + "-run-" + randomSuffix()
}
