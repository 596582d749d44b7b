package satchel

import (
	"context"
	"errors"
	"sort"
	"strings"

	"github.com/satchel-dev/satchel/internal/engine"
	"github.com/satchel-dev/satchel/internal/errs"
)

// Spilled results of a thread (docs/decisions/0020-spills-beside-the-thread.md).
//
// A result too large to return inline is saved as a file under spill/ of
// the thread's spill area: a companion thread of the same scope, named
// THREAD/spill, which no user can name (a '/' is not allowed in a thread
// name) and which Store.Threads does not list. The thread's own listings,
// globs, greps, history and restores never see the spills; a read of a
// spill/ path that the thread does not hold is answered from the spill
// area, so the hint of a spill ("read spill/... with read_file") works on
// every surface. The area keeps the newest KeepSpills spills: each save
// deletes the older ones, and its retention keeps as many commits, so
// garbage collection reclaims what was pruned.

// SpillDir is the directory spills are saved in.
const SpillDir = "spill"

// KeepSpills is how many spills a thread's spill area keeps.
const KeepSpills = 64

// spillThreadSuffix makes a thread's spill area's name from the thread's.
const spillThreadSuffix = "/spill"

// isSpillThread reports whether a backend thread name is a spill area.
func isSpillThread(name string) bool { return strings.HasSuffix(name, spillThreadSuffix) }

// Spills returns the workspace of the thread's spill area (for operators'
// tools: list, read or delete spills; SaveSpill is how they are saved).
func (w *Workspace) Spills() *Workspace { return w.spills() }

func (w *Workspace) spills() *Workspace {
	return &Workspace{s: w.s, scope: w.scope, thread: w.thread + spillThreadSuffix, actor: w.actor, limits: &limitsOnce{}, ref: &threadRef{}}
}

// SaveSpill saves a spilled result at path (under spill/) in the thread's
// spill area, not in the thread itself, and prunes the area to its newest
// KeepSpills spills, in one commit of the area.
func (w *Workspace) SaveSpill(ctx context.Context, path, content string) error {
	if !strings.HasPrefix(path, SpillDir+"/") {
		return errs.New(errs.ErrInvalidArgument, "a spill is saved under %s/, not at %s", SpillDir, path)
	}
	sw := w.spills()
	err := sw.mutate(ctx, "spill", nil, func(b *Batch) error {
		if err := b.Write(ctx, path, content); err != nil {
			return err
		}
		return b.pruneSpills(ctx, KeepSpills)
	})
	if err != nil {
		return err
	}
	p, err := sw.Retention(ctx)
	if err != nil || p.MaxCommits != 0 {
		return err
	}
	_, err = sw.SetRetention(ctx, Policy{MaxCommits: KeepSpills})
	return err
}

// pruneSpills deletes the oldest files under spill/ beyond the newest keep.
func (b *Batch) pruneSpills(ctx context.Context, keep int) error {
	type spill struct {
		path string
		mod  int64
	}
	var all []spill
	err := b.tx.Scan(ctx, SpillDir+"/", SpillDir+"0", func(e *engine.Entry) (bool, error) {
		all = append(all, spill{e.Path, e.ModTime})
		return true, nil
	})
	if err != nil || len(all) <= keep {
		return err
	}
	sort.Slice(all, func(i, j int) bool { return all[i].mod > all[j].mod })
	for _, s := range all[keep:] {
		b.note("delete", s.path, "")
		if err := b.tx.Delete(ctx, s.path); err != nil {
			return err
		}
	}
	return nil
}

// readSpill answers a read of path that the thread itself does not hold
// (err is its ErrNotFound) from the spill area, when path is under spill/.
//
// A spill's name that the area no longer holds, when the area is full
// (it holds KeepSpills spills, so it has reclaimed older ones), is
// refused as reclaimed: `spill/X was reclaimed (each thread keeps its
// newest 64 spills)`, still of kind ErrNotFound.
func (w *Workspace) readSpill(ctx context.Context, path string, err error, read func(*Workspace) error) error {
	if !errors.Is(err, errs.ErrNotFound) || !strings.HasPrefix(path, SpillDir+"/") || isSpillThread(w.thread) || w.Access(path) == AccessNone {
		return err
	}
	sw := w.spills()
	if serr := read(sw); serr == nil || !errors.Is(serr, errs.ErrNotFound) {
		return serr
	}
	if !spillName(strings.TrimPrefix(path, SpillDir+"/")) {
		return err
	}
	if held, lerr := sw.List(ctx, SpillDir, ListOptions{Limit: KeepSpills}); lerr == nil && len(held) >= KeepSpills {
		return errs.New(errs.ErrNotFound, "%s was reclaimed (each thread keeps its newest %d spills)", path, KeepSpills)
	}
	return err
}

// spillName says whether name is a spill's file name as the spill
// package makes them: 12 random characters, "-", a name.
func spillName(name string) bool {
	if len(name) < 14 || name[12] != '-' || strings.Contains(name, "/") {
		return false
	}
	for _, c := range name[:12] {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
