package satchel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/internal/diff3"
	"github.com/satchel-dev/satchel/internal/engine"
	"github.com/satchel-dev/satchel/internal/errs"
)

// MergeOption is an option of Workspace.Merge.
type MergeOption func(*mergeOpts)

type mergeOpts struct {
	markers bool
	dryRun  bool
}

// ConflictMarkers makes a merge with conflicts commit anyway: each
// conflicting region of a text file is written between "<<<<<<< INTO",
// "=======" and ">>>>>>> FROM" lines; a binary file both sides changed
// keeps the target's version, and a file one side deleted and the other
// changed keeps the changed version. The conflicts are listed in the
// result. Without it, a merge with conflicts commits nothing.
func ConflictMarkers() MergeOption { return func(o *mergeOpts) { o.markers = true } }

// DryRun makes a merge report what it would do, committing nothing.
func DryRun() MergeOption { return func(o *mergeOpts) { o.dryRun = true } }

// MergeConflict is one conflict of a merge: a path, and for a text file
// the lines of the target's version it covers.
type MergeConflict struct {
	Path string `json:"path"`
	// Lines is "12-14" or "12" for a conflicting region of a text file
	// (lines of the target's version), empty otherwise.
	Lines string `json:"lines,omitempty"`
	// Kind is "both changed", "binary, both changed", "deleted in INTO,
	// changed in FROM" or "changed in INTO, deleted in FROM".
	Kind string `json:"kind"`
}

// String returns the conflict as a refusal lists it: `notes/plan.md lines
// 12-14 (both changed)`.
func (c MergeConflict) String() string {
	switch {
	case c.Lines == "":
		return c.Path + " (" + c.Kind + ")"
	case strings.Contains(c.Lines, "-"):
		return c.Path + " lines " + c.Lines + " (" + c.Kind + ")"
	}
	return c.Path + " line " + c.Lines + " (" + c.Kind + ")"
}

// MergeConflictError is the refusal of a merge with conflicts (without
// ConflictMarkers): nothing was committed. errors.Is(err, ErrConflict)
// holds.
type MergeConflictError struct {
	From, Into string
	Conflicts  []MergeConflict
}

func (e *MergeConflictError) Error() string {
	var b strings.Builder
	n := len(e.Conflicts)
	fmt.Fprintf(&b, "merge of %s into %s refused: %d conflict", e.From, e.Into, n)
	if n != 1 {
		b.WriteByte('s')
	}
	b.WriteString(": ")
	for i, c := range e.Conflicts {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.String())
	}
	return b.String()
}

// Unwrap returns ErrConflict.
func (e *MergeConflictError) Unwrap() error { return errs.ErrConflict }

// MergeResult is what a merge did, or would do (DryRun).
type MergeResult struct {
	// Commit is the merge commit; when there was nothing new to merge, the
	// head, with Unchanged set; zero for a dry run.
	Commit Commit `json:"commit"`
	// From is the commit merged, Base the newest commit both threads have.
	From CommitRef `json:"from"`
	Into string    `json:"into"`
	Base CommitRef `json:"base"`
	// Paths are the paths the merge changed on the target, in order.
	Paths []string `json:"paths"`
	// Conflicts are the conflicts written with markers (ConflictMarkers)
	// or, for a dry run, the conflicts found.
	Conflicts []MergeConflict `json:"conflicts,omitempty"`
	DryRun    bool            `json:"dry_run,omitempty"`
	// Unchanged is set when the target already has every change of From.
	Unchanged bool `json:"unchanged,omitempty"`
}

// Message is the result in a sentence, as the surfaces print it.
func (r MergeResult) Message() string {
	switch {
	case r.Unchanged:
		return fmt.Sprintf("unchanged: %s already has every change of %s", r.Into, r.From)
	case r.DryRun && len(r.Conflicts) > 0:
		list := make([]string, len(r.Conflicts))
		for i, c := range r.Conflicts {
			list[i] = c.String()
		}
		return fmt.Sprintf("merge of %s into %s would change %s and meet %s: %s", r.From, r.Into, plural(len(r.Paths), "path"), plural(len(r.Conflicts), "conflict"), strings.Join(list, ", "))
	case r.DryRun:
		return fmt.Sprintf("merge of %s into %s would change %s, without conflicts", r.From, r.Into, plural(len(r.Paths), "path"))
	}
	s := fmt.Sprintf("merged %s into %s: commit %d, %s changed", r.From, r.Into, r.Commit.Seq, plural(len(r.Paths), "path"))
	if n := len(r.Conflicts); n > 0 {
		list := make([]string, n)
		for i, c := range r.Conflicts {
			list[i] = c.String()
		}
		s += fmt.Sprintf(", %s marked: %s", plural(n, "conflict"), strings.Join(list, ", "))
	}
	return s
}

// plural writes "1 path", "2 paths".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// parseMergeFrom splits a merge source, THREAD or THREAD@REF (a sequence
// number or a checkpoint name), into the thread and the ref ("" for the
// head).
func parseMergeFrom(s string) (thread, ref string, err error) {
	thread, ref, found := strings.Cut(s, "@")
	if err := ValidThreadName(thread); err != nil {
		return "", "", err
	}
	if found && ref == "" {
		return "", "", errs.New(errs.ErrInvalidArgument, "invalid reference %q: nothing after @", s)
	}
	return thread, ref, nil
}

var errMergeConflicts = errors.New("merge conflicts")

// Merge merges into w's thread the changes of thread from (THREAD, its
// head, or THREAD@REF) made since the newest commit the two threads have
// in common: the commit one was forked from, or the one the last merge
// between them merged (DESIGN §8). A path changed on one side only takes
// that side's version; a text file changed on both is merged by lines as
// diff3 does. Overlapping changes, a deletion against a change, and two
// different binary versions are conflicts: the merge then commits nothing
// and returns a *MergeConflictError listing them all, unless
// ConflictMarkers is given. The merge is one commit on w's thread, made
// with a compare-and-swap as every commit, summarized "merged FROM@N"
// and naming that commit as its second parent (Commit.Parent). Its cost
// grows with the paths changed since the common commit, not with the
// workspace.
func (w *Workspace) Merge(ctx context.Context, from string, opts ...MergeOption) (MergeResult, error) {
	if w.rv != nil {
		return MergeResult{}, w.refuseUnderReview("merge")
	}
	var o mergeOpts
	for _, f := range opts {
		f(&o)
	}
	thread, ref, err := parseMergeFrom(from)
	if err != nil {
		return MergeResult{}, err
	}
	if thread == w.thread {
		return MergeResult{}, errs.New(errs.ErrInvalidArgument, "cannot merge thread %s into itself", thread)
	}
	if w.only {
		return MergeResult{}, w.confined()
	}
	src, err := w.s.Workspace(ctx, w.scope, thread, WorkspaceActor(w.actor))
	if err != nil {
		return MergeResult{}, err
	}
	srcID, ok, err := src.threadID(ctx, false)
	if err != nil {
		return MergeResult{}, err
	}
	if !ok {
		return MergeResult{}, errs.New(errs.ErrNotFound, "thread not found: %s", thread)
	}
	id, ok, err := w.threadID(ctx, false)
	if err != nil {
		return MergeResult{}, err
	}
	if !ok {
		return MergeResult{}, errs.New(errs.ErrNotFound, "thread not found: %s", w.thread)
	}
	sc, err := src.resolve(ctx, ref)
	if err != nil {
		return MergeResult{}, err
	}
	res := MergeResult{From: CommitRef{thread, sc.Seq}, Into: w.thread, DryRun: o.dryRun, Paths: []string{}}
	head, _, err := w.s.b.Head(ctx, id)
	if err != nil {
		return MergeResult{}, err
	}
	// Should the head move before the merge commits, the merge is made
	// again on the new head (the commit's compare-and-swap), with the same
	// base: a change that reached the target meanwhile, by another merge
	// of the source or by hand, is then on both sides, and taken once.
	base, err := w.mergeBase(ctx, id, head.Seq, srcID, thread, sc.Seq)
	if err != nil {
		return MergeResult{}, err
	}
	res.Base = base
	if base.Thread == thread && base.Seq >= sc.Seq {
		res.Unchanged = true
		res.Commit = w.s.commitOf(head, nil)
		res.Commit.Unchanged = true
		return res, nil
	}
	return w.merge(ctx, head, base, sc, &res, o)
}

func (w *Workspace) merge(ctx context.Context, head backend.Commit, base CommitRef, sc backend.Commit, res *MergeResult, o mergeOpts) (MergeResult, error) {
	bw := w
	if base.Thread != w.thread {
		var err error
		if bw, err = w.s.Workspace(ctx, w.scope, base.Thread, WorkspaceActor(w.actor)); err != nil {
			return MergeResult{}, err
		}
	}
	bc, err := bw.resolve(ctx, strconv.FormatInt(base.Seq, 10))
	if errors.Is(err, errs.ErrNotFound) {
		return MergeResult{}, errs.New(errs.ErrNotFound, "cannot merge %s into %s: their common commit %s is no longer retained", res.From, w.thread, base)
	}
	if err != nil {
		return MergeResult{}, err
	}
	bs, err := w.s.eng.At(ctx, bc)
	if err != nil {
		return MergeResult{}, err
	}
	ts, err := w.s.eng.At(ctx, sc)
	if err != nil {
		return MergeResult{}, err
	}
	theirs, err := w.s.eng.Diff(ctx, bs, ts)
	if err != nil {
		return MergeResult{}, err
	}
	m := &merger{w: w, into: w.thread, from: res.From.Thread, markers: o.markers}
	if o.dryRun {
		hs, err := w.s.eng.At(ctx, head)
		if err != nil {
			return MergeResult{}, err
		}
		if err := m.run(ctx, hs, theirs, nil); err != nil {
			w.countRefusal(err)
			return MergeResult{}, err
		}
		res.Paths, res.Conflicts = m.paths, m.conflicts
		return *res, nil
	}
	var c Commit
	_, err = w.update(ctx, "merge", nil, func(b *Batch) error {
		b.reports = append(b.reports, &c)
		b.meta = w.mergeMeta(res.From)
		return m.run(ctx, b.tx, theirs, b)
	})
	switch {
	case errors.Is(err, errMergeConflicts):
		return MergeResult{}, &MergeConflictError{From: res.From.Thread, Into: w.thread, Conflicts: m.conflicts}
	case err != nil:
		return MergeResult{}, err
	}
	res.Commit, res.Paths, res.Conflicts = c, m.paths, m.conflicts
	if c.Unchanged {
		// Every change of the source is on the target already (made
		// there too): nothing to record.
		res.Unchanged = true
	}
	return *res, nil
}

// mergeMeta is the metadata of a merge commit: op "merge", the summary
// "merged FROM@N", and the commit merged as its second parent.
func (w *Workspace) mergeMeta(from CommitRef) []byte {
	var s engine.Summary
	s.Add("merged " + from.String())
	meta := appendMeta(nil, "merge", s.Bytes(), w.actor, w.key)
	p, _ := json.Marshal(from)
	meta = append(meta[:len(meta)-1], `,"parent":`...)
	meta = append(meta, p...)
	return append(meta, '}')
}

// view is what a merge reads the target through: its head, or the
// transaction that commits the merge.
type view interface {
	Get(ctx context.Context, path string) (engine.Entry, bool, error)
	Content(ctx context.Context, ent *engine.Entry) (string, error)
}

// merger applies the source's changes to the target, path by path.
type merger struct {
	w          *Workspace
	into, from string
	markers    bool
	paths      []string
	conflicts  []MergeConflict
}

// run merges each path the source changed since the base into v; with b
// set, it writes the result there (else it only records it).
func (m *merger) run(ctx context.Context, v view, theirs []engine.Change, b *Batch) error {
	m.paths, m.conflicts = []string{}, nil
	eng := m.w.s.eng
	for _, ch := range theirs {
		ours, ok, err := v.Get(ctx, ch.Path)
		if err != nil {
			return err
		}
		op := entryOrNil(&ours, ok)
		same := func(a, b *engine.Entry) (bool, error) {
			if a == nil || b == nil {
				return a == nil && b == nil, nil
			}
			return eng.SameContent(ctx, a, b)
		}
		if s, err := same(op, ch.New); err != nil || s {
			continue // the same change on both sides (or none)
		}
		oursChanged, err := same(op, ch.Old)
		if err != nil {
			return err
		}
		oursChanged = !oursChanged
		put := func(content string) error {
			m.paths = append(m.paths, ch.Path)
			if b == nil {
				return nil
			}
			if op == nil {
				if err := b.checkCreatable(ctx, ch.Path); err != nil {
					return err
				}
			}
			if err := b.tx.Put(ctx, ch.Path, content); err != nil {
				return err
			}
			return b.checkBounds(ctx, ch.Path, int64(len(content)))
		}
		content := func(e *engine.Entry) (string, error) {
			if e == nil {
				return "", nil
			}
			return v.Content(ctx, e)
		}
		switch {
		case !oursChanged && ch.New == nil:
			m.paths = append(m.paths, ch.Path)
			if b != nil {
				if err := b.tx.Delete(ctx, ch.Path); err != nil {
					return err
				}
			}
		case !oursChanged:
			s, err := content(ch.New)
			if err != nil {
				return err
			}
			if err := put(s); err != nil {
				return err
			}
		case op == nil || ch.New == nil:
			kind := "deleted in " + m.into + ", changed in " + m.from
			keep := ch.New
			if op != nil {
				kind, keep = "changed in "+m.into+", deleted in "+m.from, nil
			}
			m.conflicts = append(m.conflicts, MergeConflict{Path: ch.Path, Kind: kind})
			if keep != nil {
				s, err := content(keep)
				if err != nil {
					return err
				}
				if err := put(s); err != nil {
					return err
				}
			}
		default:
			bs, err := content(ch.Old)
			if err != nil {
				return err
			}
			os, err := content(op)
			if err != nil {
				return err
			}
			ts, err := content(ch.New)
			if err != nil {
				return err
			}
			if IsBinary(bs) || IsBinary(os) || IsBinary(ts) {
				m.conflicts = append(m.conflicts, MergeConflict{Path: ch.Path, Kind: "binary, both changed"})
				continue // the target keeps its version
			}
			r := diff3.Merge(bs, os, ts, m.into, m.from)
			for _, c := range r.Conflicts {
				m.conflicts = append(m.conflicts, MergeConflict{Path: ch.Path, Lines: lineRange(c.OursStart, c.OursEnd), Kind: "both changed"})
			}
			if r.Text != os {
				if err := put(r.Text); err != nil {
					return err
				}
			}
		}
	}
	if m.w.gate != nil {
		touched := append([]string(nil), m.paths...)
		for _, c := range m.conflicts {
			touched = append(touched, c.Path)
		}
		if err := m.w.canChangeAll("merge", "merging "+m.from+" into "+m.into, touched); err != nil {
			return err
		}
	}
	if b != nil && len(m.conflicts) > 0 && !m.markers {
		return errMergeConflicts
	}
	return nil
}

// lineRange writes lines [lo, hi) (0-based) as "12-14" or "12" (1-based);
// an empty range names the line it comes before.
func lineRange(lo, hi int) string {
	if hi-lo <= 1 {
		return strconv.Itoa(lo + 1)
	}
	return strconv.Itoa(lo+1) + "-" + strconv.Itoa(hi)
}

// mergeBase finds the newest commit the target (thread id, up to its
// commit head) and the source (srcID, named src, up to commit srcSeq)
// both have: the source commit the target last merged, the target commit
// the source last merged, or the commit one was forked from. The two logs
// are read back a page at a time in turn, and each walk stops where the
// other's link makes older commits irrelevant, so the cost follows the
// commits since the last link, not the threads' histories.
func (w *Workspace) mergeBase(ctx context.Context, id, head, srcID int64, src string, srcSeq int64) (CommitRef, error) {
	// t finds the source commit inS the target contains since its commit
	// atT; sw the target commit the source contains since its commit atS.
	t := &linkWalk{s: w.s, id: id, before: head + 1, other: src}
	sw := &linkWalk{s: w.s, id: srcID, before: srcSeq + 1, other: w.thread}
	for !t.done || !sw.done {
		// A commit of the target at or before the one the source
		// merged, or the other way round, cannot link to a newer one.
		if err := t.step(ctx, sw.seq); err != nil {
			return CommitRef{}, err
		}
		if err := sw.step(ctx, t.seq); err != nil {
			return CommitRef{}, err
		}
	}
	switch {
	case t.found && sw.found:
		if t.seq >= sw.at {
			// The source commit the target merged already contains the
			// target commit the source merged.
			return CommitRef{src, t.seq}, nil
		}
		return CommitRef{w.thread, sw.seq}, nil
	case t.found:
		return CommitRef{src, t.seq}, nil
	case sw.found:
		return CommitRef{w.thread, sw.seq}, nil
	}
	return CommitRef{}, errs.New(errs.ErrInvalidArgument, "cannot merge %s into %s: they have no common commit (neither was forked from the other)", src, w.thread)
}

// linkWalk reads a thread's log back, from commit before-1, to the newest
// commit that brings in a commit of thread other: a merge of it, or the
// thread's first commit when it was forked from it. Found, it is commit
// at, bringing in other's commit seq.
type linkWalk struct {
	s       *Store
	id      int64
	before  int64
	other   string
	done    bool
	found   bool
	at, seq int64
}

// step reads one page of the log, no further back than commit stop+1.
func (l *linkWalk) step(ctx context.Context, stop int64) error {
	if l.done {
		return nil
	}
	if l.before <= max(stop+1, 1) {
		l.done = true
		return nil
	}
	log, err := l.s.b.Log(ctx, l.id, l.before, 64)
	if err != nil {
		return err
	}
	if len(log) == 0 {
		l.done = true
		return nil
	}
	for _, c := range log {
		if c.Seq <= stop {
			l.done = true
			return nil
		}
		var m commitMeta
		if json.Unmarshal(c.Meta, &m) != nil {
			continue
		}
		if m.Op == "merge" && m.Parent != nil && m.Parent.Thread == l.other {
			l.done, l.found, l.at, l.seq = true, true, c.Seq, m.Parent.Seq
			return nil
		}
		if c.Seq == 1 {
			if f := forkOf([]backend.Commit{c}); f != nil && f.Thread == l.other {
				l.done, l.found, l.at, l.seq = true, true, 1, f.Seq
				return nil
			}
		}
	}
	l.before = log[len(log)-1].Seq
	return nil
}
