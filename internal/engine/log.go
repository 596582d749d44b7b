package engine

import (
	"context"

	"github.com/satchel-dev/satchel/backend"
)

// Reads of a thread's log: its commits, its checkpoints and its head as
// stored. They need no rule of the engine and go to the backend as they
// are (the head cache is the committer's, not theirs); package satchel
// reads a thread's versions through the engine alone, and asks the
// backend directly only for store metadata.

// Log lists thread's retained commits newest first, with Seq < before
// (before <= 0: from the head), at most limit (limit <= 0: all)
// (backend.Backend.Log).
func (e *Engine) Log(ctx context.Context, thread, before int64, limit int) ([]backend.Commit, error) {
	return e.b.Log(ctx, thread, before, limit)
}

// CommitAt returns a retained commit of thread by sequence number, or
// backend.ErrNoCommit (backend.Backend.CommitAt).
func (e *Engine) CommitAt(ctx context.Context, thread, seq int64) (backend.Commit, error) {
	return e.b.CommitAt(ctx, thread, seq)
}

// HeadCommit returns thread's head commit as stored; ok is false for a
// thread without commits (backend.Backend.Head). Head returns it with its
// snapshot.
func (e *Engine) HeadCommit(ctx context.Context, thread int64) (backend.Commit, bool, error) {
	return e.b.Head(ctx, thread)
}

// Checkpoints lists thread's checkpoints, newest commit first
// (backend.Backend.Checkpoints).
func (e *Engine) Checkpoints(ctx context.Context, thread int64) ([]backend.Checkpoint, error) {
	return e.b.Checkpoints(ctx, thread)
}

// CheckpointSeq resolves a checkpoint name of thread, or
// backend.ErrNoCheckpoint (backend.Backend.CheckpointSeq).
func (e *Engine) CheckpointSeq(ctx context.Context, thread int64, name string) (int64, error) {
	return e.b.CheckpointSeq(ctx, thread, name)
}
