package satchel

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/internal/engine"
	"github.com/satchel-dev/satchel/internal/vpath"
)

// The reads below serve tools that browse a workspace's past (the web
// inspector): a history in pages, the checkpoints, where a thread forked
// from, and the commits that changed one file.

// History lists the retained commits older than before (a sequence
// number; 0 or less: from the head), newest first, at most limit (0: all).
// Passing the last Seq of one page as the next page's before pages through
// a long history without reading it whole.
func (w *Workspace) History(ctx context.Context, before int64, limit int) ([]Commit, error) {
	if w.rv != nil {
		rw, err := w.reading(ctx)
		if err != nil {
			return nil, err
		}
		return rw.History(ctx, before, limit)
	}
	id, ok, err := w.threadID(ctx, false)
	if err != nil || !ok {
		return []Commit{}, err
	}
	cs, err := w.s.eng.Log(ctx, id, before, limit)
	if err != nil {
		return nil, err
	}
	names, err := w.checkpointNames(ctx, id)
	if err != nil {
		return nil, err
	}
	out := make([]Commit, 0, len(cs))
	for _, c := range cs {
		if rc, ok := w.redactOf(c, names[c.Seq]); ok {
			out = append(out, rc)
		}
	}
	return out, nil
}

func (w *Workspace) checkpointNames(ctx context.Context, id int64) (map[int64][]string, error) {
	cps, err := w.s.eng.Checkpoints(ctx, id)
	if err != nil {
		return nil, err
	}
	names := map[int64][]string{}
	for _, cp := range cps {
		names[cp.Seq] = append(names[cp.Seq], cp.Name)
	}
	return names, nil
}

// CheckpointInfo is a named commit of a thread.
type CheckpointInfo struct {
	Name string `json:"name"`
	Seq  int64  `json:"seq"`
}

// Checkpoints lists the thread's checkpoints, newest commit first.
func (w *Workspace) Checkpoints(ctx context.Context) ([]CheckpointInfo, error) {
	if w.rv != nil {
		rw, err := w.reading(ctx)
		if err != nil {
			return nil, err
		}
		return rw.Checkpoints(ctx)
	}
	id, ok, err := w.threadID(ctx, false)
	if err != nil || !ok {
		return []CheckpointInfo{}, err
	}
	cps, err := w.s.eng.Checkpoints(ctx, id)
	if err != nil {
		return nil, err
	}
	out := make([]CheckpointInfo, len(cps))
	for i, cp := range cps {
		out[i] = CheckpointInfo{Name: cp.Name, Seq: cp.Seq}
	}
	return out, nil
}

// Origin is where a thread was forked from: a thread of the same scope and
// the sequence number of the commit the fork started at.
type Origin struct {
	Thread string `json:"thread"`
	Seq    int64  `json:"seq"`
}

// Origin reports where the thread was forked from, as its first commit
// records it; ok is false for a thread that was not forked, one forked
// from the empty tree (which makes no commit), and one whose first commit
// retention has dropped.
func (w *Workspace) Origin(ctx context.Context) (o Origin, ok bool, err error) {
	if w.rv != nil {
		rw, err := w.reading(ctx)
		if err != nil {
			return Origin{}, false, err
		}
		return rw.Origin(ctx)
	}
	id, exists, err := w.threadID(ctx, false)
	if err != nil || !exists {
		return Origin{}, false, err
	}
	c, err := w.s.eng.CommitAt(ctx, id, 1)
	if errors.Is(err, backend.ErrNoCommit) {
		return Origin{}, false, nil
	}
	if err != nil {
		return Origin{}, false, err
	}
	o, ok = parseOrigin(w.s.commitOf(c, nil))
	return o, ok, nil
}

// parseOrigin reads a fork's first commit: Fork writes the summary
// "fork of THREAD@SEQ", and a thread name has no '@' nor space.
func parseOrigin(c Commit) (Origin, bool) {
	if c.Op != "fork" {
		return Origin{}, false
	}
	rest, ok := strings.CutPrefix(c.Summary, "fork of ")
	if !ok {
		return Origin{}, false
	}
	i := strings.LastIndexByte(rest, '@')
	if i < 0 || ValidThreadName(rest[:i]) != nil {
		return Origin{}, false
	}
	seq, err := strconv.ParseInt(rest[i+1:], 10, 64)
	if err != nil || seq < 1 {
		return Origin{}, false
	}
	return Origin{Thread: rest[:i], Seq: seq}, true
}

// FileChange is a commit that changed one file, and how: "added",
// "changed" or "removed".
type FileChange struct {
	Commit Commit `json:"commit"`
	Kind   string `json:"kind"`
}

// FileHistoryPage is one page of a file's history.
type FileHistoryPage struct {
	// Changes are the commits that changed the file, newest first.
	Changes []FileChange `json:"changes"`
	// Next, when not 0, continues the history: pass it as the next call's
	// before. A page stops after limit changes or after examining
	// MaxFileHistoryScan commits, whichever comes first, so a page may
	// hold fewer than limit changes and still have a Next.
	Next int64 `json:"next,omitempty"`
}

// MaxFileHistoryScan bounds the commits one FileHistory call examines.
const MaxFileHistoryScan = 500

// FileHistory lists the retained commits older than before (0: from the
// head) in which the file at path differs from the retained commit before
// them (the oldest retained commit is compared with the empty tree), at
// most limit (0: 20). The path is validated; a path that never existed
// gives an empty history.
func (w *Workspace) FileHistory(ctx context.Context, path string, before int64, limit int) (FileHistoryPage, error) {
	if w.rv != nil {
		rw, err := w.reading(ctx)
		if err != nil {
			return FileHistoryPage{}, err
		}
		return rw.FileHistory(ctx, path, before, limit)
	}
	page := FileHistoryPage{Changes: []FileChange{}}
	if err := vpath.Validate(path); err != nil {
		return page, err
	}
	if limit <= 0 {
		limit = 20
	}
	if w.Access(path) == AccessNone {
		return page, nil // as for a path that never existed
	}
	id, ok, err := w.threadID(ctx, false)
	if err != nil || !ok {
		return page, err
	}
	cs, err := w.s.eng.Log(ctx, id, before, MaxFileHistoryScan+1)
	if err != nil {
		return page, err
	}
	names, err := w.checkpointNames(ctx, id)
	if err != nil {
		return page, err
	}
	entryAt := func(c backend.Commit) (engine.Entry, bool, error) {
		snap, err := w.s.eng.At(ctx, c)
		if err != nil {
			return engine.Entry{}, false, err
		}
		return snap.Get(ctx, path)
	}
	var cur engine.Entry
	var curOK bool
	if len(cs) > 0 {
		if cur, curOK, err = entryAt(cs[0]); err != nil {
			return page, err
		}
	}
	for i, c := range cs {
		if i == MaxFileHistoryScan {
			page.Next = c.Seq + 1 // c itself is not examined yet
			break
		}
		var prev engine.Entry
		var prevOK bool
		if i+1 < len(cs) {
			if prev, prevOK, err = entryAt(cs[i+1]); err != nil {
				return page, err
			}
		}
		kind := ""
		switch {
		case curOK && !prevOK:
			kind = "added"
		case !curOK && prevOK:
			kind = "removed"
		case curOK && prevOK:
			same, err := w.s.eng.SameContent(ctx, &cur, &prev)
			if err != nil {
				return page, err
			}
			if !same {
				kind = "changed"
			}
		}
		if kind != "" {
			rc, _ := w.redactOf(c, names[c.Seq])
			page.Changes = append(page.Changes, FileChange{Commit: rc, Kind: kind})
			if len(page.Changes) == limit {
				if i+1 < len(cs) {
					page.Next = c.Seq
				}
				break
			}
		}
		cur, curOK = prev, prevOK
	}
	return page, nil
}

// DiffSnapshots lists the files that differ between two snapshots, which
// may be of different threads of one scope (a fork and its parent), in
// path order. Like Diff, it walks only the subtrees whose hashes differ.
func (s *Store) DiffSnapshots(ctx context.Context, a, b *Snapshot) ([]Change, error) {
	cs, err := s.eng.Diff(ctx, a.snap, b.snap)
	if err != nil {
		return nil, err
	}
	out := make([]Change, 0, len(cs))
	for _, c := range cs {
		if hiddenIn(a, c.Path) || hiddenIn(b, c.Path) {
			continue
		}
		out = append(out, Change{Path: c.Path, Kind: c.Kind.String()})
	}
	return out, nil
}

// DiffSnapshotFile is DiffFile between two snapshots, which may be of
// different threads of one scope.
func (s *Store) DiffSnapshotFile(ctx context.Context, a, b *Snapshot, path string) (string, error) {
	if err := vpath.Validate(path); err != nil {
		return "", err
	}
	return diffSnapshotFile(ctx, a, b, path)
}
