package satchel

import (
	"context"
	"strconv"
	"strings"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/internal/errs"
)

// A reference to a commit (At, Diff, DiffFile, Restore, Fork) is one of:
// a sequence number; a checkpoint name; "" or "head"; THREAD@REF, REF (a
// sequence number, a checkpoint name or "head") in THREAD, another thread
// of the workspace's scope; or THREAD alone, that thread's head. A name
// that is both a checkpoint of the workspace's thread and a thread is the
// checkpoint: THREAD@head names the thread (docs/decisions/0131).

// OnlyThread confines the workspace to its own thread: a reference to
// another thread is refused with ErrAccessDenied (`this token can use
// thread T only`), as is Fork. Servers open the workspaces of thread-bound
// tokens with it.
func OnlyThread() WorkspaceOption { return func(w *Workspace) { w.only = true } }

// confined is the refusal of a confined workspace's reach to another thread.
func (w *Workspace) confined() error {
	return errs.New(errs.ErrAccessDenied, "this token can use thread %s only", w.ledgerThread())
}

// refThread splits THREAD@REF: ok is false when ref has no '@'. ow is the
// workspace of THREAD (w itself when it is w's thread).
func (w *Workspace) refThread(ref string) (ow *Workspace, r string, ok bool, err error) {
	i := strings.IndexByte(ref, '@')
	if i < 0 {
		return nil, "", false, nil
	}
	thread, r := ref[:i], ref[i+1:]
	if err := ValidThreadName(thread); err != nil {
		return nil, "", true, errs.New(errs.ErrInvalidArgument, "invalid commit %q: %v", ref, err)
	}
	if r == "" || strings.IndexByte(r, '@') >= 0 {
		return nil, "", true, errs.New(errs.ErrInvalidArgument, "invalid commit %q: THREAD@REF takes a sequence number, a checkpoint name or head after the @", ref)
	}
	if thread == w.thread {
		return w, r, true, nil
	}
	if w.only && thread != w.home {
		return nil, "", true, w.confined()
	}
	return w.sibling(thread), r, true, nil
}

// threadNamed returns the workspace of the scope's thread name when that
// thread exists (and w may reach it).
func (w *Workspace) threadNamed(ctx context.Context, name string) (*Workspace, bool, error) {
	if ValidThreadName(name) != nil {
		return nil, false, nil
	}
	if name == w.thread {
		_, ok, err := w.threadID(ctx, false)
		return w, ok, err
	}
	ow := w.sibling(name)
	_, ok, err := ow.threadID(ctx, false)
	if err != nil || !ok {
		return nil, false, err
	}
	if w.only && name != w.home {
		return nil, false, w.confined()
	}
	return ow, true, nil
}

// resolveIn resolves r (no thread) in w's thread, which must exist.
func (w *Workspace) resolveIn(ctx context.Context, r string) (backend.Commit, error) {
	_, ok, err := w.threadID(ctx, false)
	if err != nil {
		return backend.Commit{}, err
	}
	if !ok {
		return backend.Commit{}, errs.New(errs.ErrNotFound, "thread not found: %s", w.thread)
	}
	return w.resolveLocal(ctx, r)
}

// sibling is a handle on another thread of w's scope, with w's actor and
// read ledger.
func (w *Workspace) sibling(thread string) *Workspace {
	return &Workspace{s: w.s, scope: w.scope, thread: thread, actor: w.actor, limits: &limitsOnce{}, reads: w.reads, gate: w.gate, ref: &threadRef{}, rv: w.rv, notes: w.notes}
}

// OnThread returns the workspace of another thread of the same scope,
// with this one's actor and read ledger (TrackReads): a session that moves
// between threads keeps what it saw of each. The thread must exist. A
// workspace confined by OnlyThread refuses any thread but its own.
func (w *Workspace) OnThread(ctx context.Context, thread string) (*Workspace, error) {
	if err := ValidThreadName(thread); err != nil {
		return nil, err
	}
	if thread == w.thread {
		return w, nil
	}
	if w.only {
		return nil, w.confined()
	}
	ow := w.sibling(thread)
	_, ok, err := ow.threadID(ctx, false)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errs.New(errs.ErrNotFound, "thread not found: %s", thread)
	}
	return ow, nil
}

// srcName is how a commit's summary names src, which ref resolved to: N
// in w's thread, THREAD@N in another.
func (w *Workspace) srcName(ref string, src backend.Commit) string {
	seq := strconv.FormatInt(src.Seq, 10)
	if src.Thread == 0 || src.Thread == w.ref.get() {
		return seq
	}
	if i := strings.IndexByte(ref, '@'); i >= 0 {
		ref = ref[:i]
	}
	return ref + "@" + seq
}

// threadOf names the thread src, which ref resolved to, belongs to.
func (w *Workspace) threadOf(ref string, src backend.Commit) string {
	if src.Thread == 0 || src.Thread == w.ref.get() {
		return w.thread
	}
	if i := strings.IndexByte(ref, '@'); i >= 0 {
		return ref[:i]
	}
	return ref
}
