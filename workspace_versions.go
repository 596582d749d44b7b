package satchel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/internal/engine"
	"github.com/satchel-dev/satchel/internal/errs"
	"github.com/satchel-dev/satchel/internal/udiff"
	"github.com/satchel-dev/satchel/internal/vpath"
)

// Commit describes one version of a workspace (DESIGN §2.6).
type Commit struct {
	Seq  int64     `json:"seq"`
	Time time.Time `json:"time"`
	// Checkpoints are the names given to this commit.
	Checkpoints []string `json:"checkpoints,omitempty"`
	// Op is the kind of mutation (write, append, edit, delete, move, batch,
	// restore, fork, checkpoint).
	Op      string `json:"op"`
	Summary string `json:"summary"`
	// Actor says who made it and through what.
	Actor
	// IdempotencyKey is the key of the call that made it, if it had one.
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	// Unchanged is set on the commit a mutation reports (Restore, or the
	// Committed option) when the mutation changed nothing: no commit was
	// made, and this is the head it left as it was.
	Unchanged bool `json:"unchanged,omitempty"`
	// Parent is set on a merge commit: the commit of the other thread
	// that it merged (its second parent).
	Parent *CommitRef `json:"parent,omitempty"`
	// Git is set on a commit that came from git (a push, or satchel git
	// import): the git commit it is served as.
	Git *GitOrigin `json:"git,omitempty"`
}

func (s *Store) commitOf(c backend.Commit, names []string) Commit {
	return commitMetaOf(c).commit(c, names)
}

// commitMetaOf reads c's metadata.
func commitMetaOf(c backend.Commit) commitMeta {
	var m commitMeta
	_ = json.Unmarshal(c.Meta, &m)
	return m
}

// commit is the Commit of c, whose metadata m is.
func (m commitMeta) commit(c backend.Commit, names []string) Commit {
	return Commit{Seq: c.Seq, Time: c.Time, Checkpoints: names, Op: m.Op, Summary: m.Summary, Actor: m.Actor, IdempotencyKey: m.Key, Parent: m.Parent, Git: m.Git}
}

// Snapshot is a read-only view of a workspace at one retained commit.
type Snapshot struct {
	snap   *engine.Snapshot
	view   engine.View // snap, without what the workspace's file rules hide
	commit Commit
}

// v is the view the snapshot's reads go through.
func (s *Snapshot) v() engine.View {
	if s.view != nil {
		return s.view
	}
	return s.snap
}

// Commit returns the commit the snapshot shows, its summary redacted by
// the workspace's file rules as History redacts it.
func (s *Snapshot) Commit() Commit { return s.commit }

func (s *Snapshot) Read(ctx context.Context, path string, bounds ...int) (string, error) {
	return readView(ctx, s.v(), path, false, bounds)
}
func (s *Snapshot) ReadNumbered(ctx context.Context, path string, bounds ...int) (string, error) {
	return readView(ctx, s.v(), path, true, bounds)
}
func (s *Snapshot) ReadWith(ctx context.Context, path string, o ReadOptions) (ReadResult, error) {
	return readWith(ctx, s.v(), path, o)
}
func (s *Snapshot) Glob(ctx context.Context, pattern string) ([]string, error) {
	return globView(ctx, s.v(), pattern)
}
func (s *Snapshot) List(ctx context.Context, under string, o ListOptions) ([]string, error) {
	return listView(ctx, s.v(), under, o)
}
func (s *Snapshot) Grep(ctx context.Context, regex, under string, o GrepOptions) (GrepResult, error) {
	return grepView(ctx, s.v(), regex, under, o)
}
func (s *Snapshot) Exists(ctx context.Context, path string) (bool, error) {
	return existsView(ctx, s.v(), path)
}
func (s *Snapshot) Stat(ctx context.Context, path string) (FileInfo, error) {
	return statView(ctx, s.v(), path)
}

// resolve finds the commit a ref names: a sequence number, a checkpoint
// name, or "" / "head" for the head; THREAD@REF for REF in another thread
// of the scope, and THREAD alone for its head (refs.go).
func (w *Workspace) resolve(ctx context.Context, ref string) (backend.Commit, error) {
	if ow, r, ok, err := w.refThread(ref); ok || err != nil {
		if err != nil {
			return backend.Commit{}, err
		}
		return ow.resolveIn(ctx, r)
	}
	c, err := w.resolveLocal(ctx, ref)
	if errors.Is(err, errs.ErrNotFound) && ref != "" && ref != "head" {
		if ow, found, terr := w.threadNamed(ctx, ref); terr != nil {
			return c, terr
		} else if found {
			return ow.resolveIn(ctx, "head")
		}
	}
	return c, err
}

// resolveLocal resolves a ref of the workspace's own thread.
func (w *Workspace) resolveLocal(ctx context.Context, ref string) (backend.Commit, error) {
	c, err := w.resolveOnce(ctx, ref)
	if errors.Is(err, backend.ErrNoThread) {
		// Deleted or purged (and perhaps made anew) since it was looked up.
		w.forget()
		c, err = w.resolveOnce(ctx, ref)
	}
	return c, err
}

func (w *Workspace) resolveOnce(ctx context.Context, ref string) (backend.Commit, error) {
	id, ok, err := w.threadID(ctx, false)
	if err != nil {
		return backend.Commit{}, err
	}
	if ref == "" || ref == "head" {
		if !ok {
			return backend.Commit{}, nil
		}
		c, _, err := w.s.eng.HeadCommit(ctx, id)
		return c, err
	}
	if n, perr := strconv.ParseInt(ref, 10, 64); perr == nil {
		if n < 0 {
			return backend.Commit{}, errs.New(errs.ErrInvalidArgument, "invalid commit %q: a sequence number is at least 0", ref)
		}
		if n == 0 {
			return backend.Commit{}, nil // the empty tree before the first commit
		}
		if !ok {
			return backend.Commit{}, errs.New(errs.ErrNotFound, "commit not found: %d (thread %s has no commits)", n, w.thread)
		}
		c, err := w.s.eng.CommitAt(ctx, id, n)
		if errors.Is(err, backend.ErrNoCommit) {
			return c, errs.New(errs.ErrNotFound, "commit not found: %d is not a retained commit of thread %s", n, w.thread)
		}
		return c, err
	}
	if err := ValidCheckpointName(ref); err != nil {
		return backend.Commit{}, err
	}
	if !ok {
		return backend.Commit{}, errs.New(errs.ErrNotFound, "checkpoint not found: %s", ref)
	}
	if r, ok := backend.As[backend.CheckpointResolver](w.s.b); ok {
		c, err := r.CheckpointCommit(ctx, id, ref)
		if errors.Is(err, backend.ErrNoCheckpoint) {
			return c, errs.New(errs.ErrNotFound, "checkpoint not found: %s", ref)
		}
		return c, err
	}
	seq, err := w.s.eng.CheckpointSeq(ctx, id, ref)
	if errors.Is(err, backend.ErrNoCheckpoint) {
		return backend.Commit{}, errs.New(errs.ErrNotFound, "checkpoint not found: %s", ref)
	}
	if err != nil {
		return backend.Commit{}, err
	}
	return w.s.eng.CommitAt(ctx, id, seq)
}

// At returns a read-only view at a retained commit: ref is a sequence
// number or a checkpoint name ("" or "head" for the head, 0 for the empty
// tree before the first commit).
func (w *Workspace) At(ctx context.Context, ref string) (*Snapshot, error) {
	if w.rv != nil {
		rw, err := w.reading(ctx)
		if err != nil {
			return nil, err
		}
		return rw.At(ctx, ref)
	}
	c, err := w.resolve(ctx, ref)
	if err != nil {
		return nil, err
	}
	snap, err := w.s.eng.At(ctx, c)
	if err != nil {
		return nil, err
	}
	cm, _ := w.redactOf(c, nil) // as History shows it
	out := &Snapshot{snap: snap, view: w.filter(snap), commit: cm}
	return out, nil
}

// Checkpoint names the head commit. A name is 1–128 letters, digits, '.',
// '_' or '-', not all digits, unique in the thread. Of the options,
// IdempotencyKey applies: a retry returns the commit the first call named.
func (w *Workspace) Checkpoint(ctx context.Context, name string, opts ...WriteOption) (Commit, error) {
	if w.rv != nil {
		return reviewed(ctx, w, func(rw *Workspace) (Commit, error) { return rw.Checkpoint(ctx, name, opts...) })
	}
	if err := ValidCheckpointName(name); err != nil {
		return Commit{}, err
	}
	kc, err := w.keyCall("checkpoint", opts, name)
	if err != nil || kc == nil {
		if err != nil {
			return Commit{}, err
		}
		return w.checkpoint(ctx, name)
	}
	// The name is unique in its thread: of two racing calls one makes it,
	// the other fails and finds the first one's claim.
	kw := *w
	kw.key = kc.key
	return kw.keyedCommit(ctx, kc, func() (Commit, error) { return kw.checkpoint(ctx, name) })
}

// keyedCommit runs a call that makes (or names) one commit under an
// idempotency key whose claim cannot share its transaction: the key is
// looked up first and claimed after; a call that fails while another one
// claims the key meanwhile returns that one's result (the calls these
// serve, Checkpoint and Fork, cannot succeed twice: a name is taken once).
func (w *Workspace) keyedCommit(ctx context.Context, kc *keyCall, run func() (Commit, error)) (Commit, error) {
	var rc Commit
	replay := func() (Commit, bool, error) {
		ok, err := kc.lookup(ctx, w.s, w.scope)
		if err != nil || !ok {
			return Commit{}, false, err
		}
		err = w.replayCommit(ctx, kc.replayed, writeOpts{report: &rc})
		return rc, true, err
	}
	if c, ok, err := replay(); err != nil || ok {
		return c, err
	}
	c, err := run()
	if err != nil {
		if rc, ok, lerr := replay(); lerr == nil && ok {
			return rc, nil
		}
		return c, err
	}
	id, _, err := w.threadID(ctx, false)
	if err != nil {
		return c, err
	}
	if err := kc.claimAlone(ctx, w.s, w.scope, id, c.Seq); err != nil {
		return c, err
	}
	if kc.replayed != nil {
		err = w.replayCommit(ctx, kc.replayed, writeOpts{report: &rc})
		return rc, err
	}
	return c, nil
}

func (w *Workspace) checkpoint(ctx context.Context, name string) (Commit, error) {
	id, _, err := w.threadID(ctx, true)
	if err != nil {
		return Commit{}, err
	}
	c, err := w.s.eng.Checkpoint(ctx, id, name, w.meta("checkpoint", "checkpoint "+name), w.checkWritable)
	if err != nil {
		return Commit{}, w.checkpointErr(name, err)
	}
	return w.s.commitOf(c, []string{name}), nil
}

func (w *Workspace) checkpointErr(name string, err error) error {
	if errors.Is(err, backend.ErrCheckpointExists) {
		return errs.New(errs.ErrExists, "checkpoint %s already exists in thread %s", name, w.thread)
	}
	return err
}

// Change is one path that differs between two commits.
type Change struct {
	Path string `json:"path"`
	// Kind is "added", "removed" or "changed".
	Kind string `json:"kind"`
}

// Diff lists the files that differ between two commits (refs as in At),
// in path order.
func (w *Workspace) Diff(ctx context.Context, from, to string) ([]Change, error) {
	if w.rv != nil {
		rw, err := w.reading(ctx)
		if err != nil {
			return nil, err
		}
		return rw.Diff(ctx, from, to)
	}
	a, err := w.At(ctx, from)
	if err != nil {
		return nil, err
	}
	b, err := w.At(ctx, to)
	if err != nil {
		return nil, err
	}
	cs, err := w.s.eng.Diff(ctx, a.snap, b.snap)
	if err != nil {
		return nil, err
	}
	out := make([]Change, 0, len(cs))
	for _, c := range cs {
		if w.gate != nil && w.gate.access(c.Path) == AccessNone {
			continue
		}
		out = append(out, Change{Path: c.Path, Kind: c.Kind.String()})
	}
	return out, nil
}

// DiffFile returns a unified diff of one file between two commits ("" when
// it is the same in both; a file missing on one side diffs against empty).
func (w *Workspace) DiffFile(ctx context.Context, from, to, path string) (string, error) {
	if w.rv != nil {
		rw, err := w.reading(ctx)
		if err != nil {
			return "", err
		}
		return rw.DiffFile(ctx, from, to, path)
	}
	if err := vpath.Validate(path); err != nil {
		return "", err
	}
	a, err := w.At(ctx, from)
	if err != nil {
		return "", err
	}
	b, err := w.At(ctx, to)
	if err != nil {
		return "", err
	}
	return diffSnapshotFile(ctx, a, b, path)
}

// diffSnapshotFile is the unified diff of path between two snapshots.
func diffSnapshotFile(ctx context.Context, a, b *Snapshot, path string) (string, error) {
	ca, okA, err := contentAt(ctx, a.v(), path)
	if err != nil {
		return "", err
	}
	cb, okB, err := contentAt(ctx, b.v(), path)
	if err != nil {
		return "", err
	}
	if !okA && !okB {
		return "", errs.New(errs.ErrNotFound, "file not found: %s (in neither commit)", path)
	}
	oldName, newName := "a/"+path, "b/"+path
	if !okA {
		oldName = "/dev/null"
	}
	if !okB {
		newName = "/dev/null"
	}
	return udiff.Unified(oldName, newName, ca, cb, 3), nil
}

func contentAt(ctx context.Context, v engine.View, path string) (string, bool, error) {
	ent, ok, err := v.Get(ctx, path)
	if err != nil || !ok {
		return "", ok, err
	}
	c, err := v.Content(ctx, &ent)
	return c, true, err
}

// Restore makes the head's tree that of an earlier retained commit. It is
// itself a new commit, so nothing is lost. When the head already has the
// files of ref, it makes none and returns the head's commit, Unchanged.
// Of the options, IdempotencyKey applies.
func (w *Workspace) Restore(ctx context.Context, ref string, opts ...WriteOption) (Commit, error) {
	if w.rv != nil {
		return reviewed(ctx, w, func(rw *Workspace) (Commit, error) { return rw.Restore(ctx, ref, opts...) })
	}
	kc, err := w.keyCall("restore", opts, ref)
	if err != nil {
		return Commit{}, err
	}
	if kc == nil {
		return w.restore(ctx, ref, nil)
	}
	kw := *w
	kw.key = kc.key
	for attempt := 0; ; attempt++ {
		if ok, err := kc.lookup(ctx, w.s, w.scope); err != nil {
			return Commit{}, err
		} else if ok {
			var c Commit
			err := w.replayCommit(ctx, kc.replayed, writeOpts{report: &c})
			return c, err
		}
		c, err := kw.restore(ctx, ref, kc)
		if errors.Is(err, backend.ErrKeyUsed) && attempt < maxKeyAttempts {
			continue
		}
		return c, err
	}
}

func (w *Workspace) restore(ctx context.Context, ref string, kc *keyCall) (Commit, error) {
	src, err := w.resolve(ctx, ref)
	if err != nil {
		return Commit{}, err
	}
	c, same, restored, err := w.sameAsHead(ctx, src)
	if err != nil || same {
		if err == nil && kc != nil {
			id, _, err := w.threadID(ctx, false)
			if err != nil {
				return c, err
			}
			if err := kc.claimAlone(ctx, w.s, w.scope, id, c.Seq); err != nil {
				return c, err
			}
			if kc.replayed != nil {
				var rc Commit
				err := w.replayCommit(ctx, kc.replayed, writeOpts{report: &rc})
				return rc, err
			}
		}
		return c, err
	}
	if err := w.canRestore(ctx, ref, src); err != nil {
		return Commit{}, err
	}
	id, _, err := w.threadID(ctx, true)
	if err != nil {
		return Commit{}, err
	}
	bc, err := w.s.eng.Point(ctx, id, src, w.meta("restore", "restore to "+w.srcName(ref, src)), "", kc.claim(w.s, w.scope))
	if errors.Is(err, errArchivedHead) {
		return Commit{}, w.archived(err)
	}
	if errors.Is(err, backend.ErrNotRetained) {
		return Commit{}, errs.New(errs.ErrNotFound, "commit not found: %d is no longer retained", src.Seq)
	}
	if err != nil {
		return Commit{}, err
	}
	if err := w.learnRestored(ctx, restored); err != nil {
		return Commit{}, err
	}
	return w.s.commitOf(bc, nil), nil
}

// restoredPaths are the paths a restore changes, and the tree it restores.
type restoredPaths struct {
	at      *engine.Snapshot
	changes []engine.Change
}

// learnRestored tells the read ledger what a restore of the caller's own
// changed: each restored path as the restored commit has it (a file the
// restore removed is forgotten), as a change of its own would.
func (w *Workspace) learnRestored(ctx context.Context, r restoredPaths) error {
	if w.reads == nil {
		return nil
	}
	for _, c := range r.changes {
		if c.New == nil {
			w.reads.put(w.ledgerThread(), c.Path, nil)
			continue
		}
		content, err := r.at.Content(ctx, c.New)
		if err != nil {
			return err
		}
		w.reads.put(w.ledgerThread(), c.Path, hashed(content, layoutOf(c.New)))
	}
	return nil
}

// sameAsHead reports whether the head's files are those of src (a restore
// to it would change nothing), and returns the head's commit, Unchanged;
// when they differ, what a restore to src changes.
func (w *Workspace) sameAsHead(ctx context.Context, src backend.Commit) (Commit, bool, restoredPaths, error) {
	head, hc, err := w.head(ctx)
	if err != nil {
		return Commit{}, false, restoredPaths{}, err
	}
	at, err := w.s.eng.At(ctx, src)
	if err != nil {
		return Commit{}, false, restoredPaths{}, err
	}
	changes, err := w.s.eng.Diff(ctx, head, at)
	if err != nil || len(changes) > 0 {
		return Commit{}, false, restoredPaths{at, changes}, err
	}
	c := w.s.commitOf(hc, nil)
	c.Unchanged = true
	return c, true, restoredPaths{}, nil
}

// Fork makes a new thread of the same scope whose first commit is the tree
// of a retained commit of this one (ref as in At). Nothing is copied: it
// takes the same time whatever the workspace's size. Of the options,
// IdempotencyKey applies: a retry returns the thread the first call made.
func (w *Workspace) Fork(ctx context.Context, ref, newThread string, opts ...WriteOption) (*Workspace, error) {
	if w.rv != nil {
		rw, err := w.reading(ctx)
		if err != nil {
			return nil, err
		}
		return rw.Fork(ctx, ref, newThread, opts...)
	}
	if err := ValidThreadName(newThread); err != nil {
		return nil, err
	}
	kc, err := w.keyCall("fork", opts, ref, newThread)
	if err != nil {
		return nil, err
	}
	if kc == nil {
		return w.fork(ctx, ref, newThread)
	}
	kw := *w
	kw.key = kc.key
	var nw *Workspace
	_, err = kw.keyedCommit(ctx, kc, func() (Commit, error) {
		var err error
		nw, err = kw.fork(ctx, ref, newThread)
		return Commit{Seq: 1}, err
	})
	if err != nil {
		return nil, err
	}
	if nw == nil { // a retry: the thread the first call made
		return w.s.Workspace(ctx, w.scope, newThread, WorkspaceActor(w.actor), w.keepGate)
	}
	return nw, nil
}

func (w *Workspace) fork(ctx context.Context, ref, newThread string) (*Workspace, error) {
	if w.only {
		return nil, w.confined()
	}
	if _, ok, err := w.threadID(ctx, false); err != nil {
		return nil, err
	} else if !ok {
		return nil, errs.New(errs.ErrNotFound, "thread not found: %s", w.thread)
	}
	src, err := w.resolve(ctx, ref)
	if err != nil {
		return nil, err
	}
	var t backend.Thread
	if src.ID == 0 { // the empty tree: nothing to point at
		if t, err = w.s.b.CreateThread(ctx, w.scope, newThread); err == nil {
			w.s.eng.NewThread(t.ID)
		}
	} else {
		meta := w.meta("fork", fmt.Sprintf("fork of %s@%d", w.threadOf(ref, src), src.Seq))
		t, err = w.s.eng.Fork(ctx, w.scope, newThread, src, meta)
	}
	switch {
	case errors.Is(err, backend.ErrThreadExists):
		return nil, errs.New(errs.ErrExists, "thread %s already exists", newThread)
	case errors.Is(err, backend.ErrNotRetained):
		return nil, errs.New(errs.ErrNotFound, "commit not found: %d is no longer retained", src.Seq)
	case err != nil:
		return nil, forkQuotaError(err)
	}
	nw, err := w.s.Workspace(ctx, w.scope, newThread, WorkspaceActor(w.actor), w.keepGate)
	if err != nil {
		return nil, err
	}
	nw.ref.set(t.ID)
	return nw, nil
}

// forkQuotaError says, when a fork is refused by the files or bytes quota,
// why a fork that stores nothing new is charged: those quotas count what
// each thread's head holds, so a fork counts every file of its source
// (docs/decisions/0139-forks-and-the-files-quota.md).
func forkQuotaError(err error) error {
	var qe *backend.QuotaError
	if !errors.As(err, &qe) || qe.Counter != "files" && qe.Counter != "bytes" {
		return err
	}
	return &errs.Error{Kind: errs.ErrQuotaExceeded, Msg: qe.Error() +
		"; a fork counts every file of its source, as the files and bytes quotas count what each thread's head holds (the history-bytes quota counts what is stored)"}
}

// Policy is a retention policy (DESIGN §2.6); a zero field is unset. A
// commit is dropped only when every rule that is set allows it: older than
// MaxAge, not among the last MaxCommits, and, for a checkpoint, not among
// the newest MaxCheckpoints (checkpoints are kept when it is unset). The
// head is never dropped.
type Policy struct {
	MaxAge         time.Duration `json:"max_age,omitempty"`
	MaxCommits     int           `json:"max_commits,omitempty"`
	MaxCheckpoints int           `json:"max_checkpoints,omitempty"`
}

const retentionKey = "retention"

// PolicyInput is a retention policy as given by a user, each rule
// optional, validated by Valid.
type PolicyInput struct {
	MaxAge         *time.Duration
	MaxCommits     *int
	MaxCheckpoints *int
}

// Valid validates the rules that are set (DESIGN §2.6's messages).
func (p PolicyInput) Valid() (Policy, error) {
	var out Policy
	if p.MaxAge != nil {
		if *p.MaxAge <= 0 {
			return out, errs.New(errs.ErrInvalidArgument, "maxAge must be positive, was %s", *p.MaxAge)
		}
		out.MaxAge = *p.MaxAge
	}
	if p.MaxCommits != nil {
		if *p.MaxCommits < 1 {
			return out, errs.New(errs.ErrInvalidArgument, "maxCommits must be at least 1, was %d", *p.MaxCommits)
		}
		out.MaxCommits = *p.MaxCommits
	}
	if p.MaxCheckpoints != nil {
		if *p.MaxCheckpoints < 1 {
			return out, errs.New(errs.ErrInvalidArgument, "maxCheckpoints must be at least 1, was %d", *p.MaxCheckpoints)
		}
		out.MaxCheckpoints = *p.MaxCheckpoints
	}
	return out, nil
}

func (p Policy) check() error {
	switch {
	case p.MaxAge < 0:
		return errs.New(errs.ErrInvalidArgument, "maxAge must be positive, was %s", p.MaxAge)
	case p.MaxCommits < 0:
		return errs.New(errs.ErrInvalidArgument, "maxCommits must be at least 1, was %d", p.MaxCommits)
	case p.MaxCheckpoints < 0:
		return errs.New(errs.ErrInvalidArgument, "maxCheckpoints must be at least 1, was %d", p.MaxCheckpoints)
	}
	return nil
}

// SetRetention stores the thread's retention policy and applies it now:
// it returns how many commits were dropped from the log. Their storage is
// reclaimed by the next GC.
func (w *Workspace) SetRetention(ctx context.Context, p Policy) (int, error) {
	if w.rv != nil {
		return 0, w.refuseUnderReview("a retention policy")
	}
	if err := p.check(); err != nil {
		return 0, err
	}
	v, _ := json.Marshal(p)
	if err := w.s.b.PutSetting(ctx, w.scope, w.thread, retentionKey, v); err != nil {
		return 0, err
	}
	return w.applyRetention(ctx, p)
}

// Retention returns the thread's retention policy.
// A thread without a policy of its own has the default of its scope that
// was in force when it was created (Store.SetDefaultRetention); a thread
// not created yet, the scope's current default.
func (w *Workspace) Retention(ctx context.Context) (Policy, error) {
	t, err := w.s.b.Thread(ctx, w.scope, w.thread, false)
	if errors.Is(err, backend.ErrNoThread) {
		return w.s.retention(ctx, w.scope, w.thread, time.Time{})
	}
	if err != nil {
		return Policy{}, err
	}
	return w.s.retention(ctx, w.scope, w.thread, t.Created)
}

// retention returns the policy of a thread created at created (zero: not
// created yet): its own, else its scope's default of that time.
func (s *Store) retention(ctx context.Context, scope, thread string, created time.Time) (Policy, error) {
	var p Policy
	v, ok, err := s.b.Setting(ctx, scope, thread, retentionKey)
	if err != nil {
		return p, err
	}
	if ok || isSpillThread(thread) {
		// A spill area keeps its own policy (SaveSpill), never the
		// scope's default.
		if ok {
			err = json.Unmarshal(v, &p)
		}
		return p, err
	}
	l, err := s.defaultPolicies(ctx, scope)
	if err != nil || len(l) == 0 {
		return p, err
	}
	if created.IsZero() {
		return l[len(l)-1].Policy, nil
	}
	return defaultFor(l, created), nil
}

func (w *Workspace) applyRetention(ctx context.Context, p Policy) (int, error) {
	id, ok, err := w.threadID(ctx, false)
	if err != nil || !ok {
		return 0, err
	}
	return w.s.eng.Retain(ctx, id, engine.Policy(p))
}
