package satchel

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/internal/engine"
	"github.com/satchel-dev/satchel/internal/errs"
	"github.com/satchel-dev/satchel/internal/lines"
	"github.com/satchel-dev/satchel/internal/vpath"
)

// Workspace is one thread's versioned file tree in one scope. Every
// mutation is a commit; reads see the thread's head. A Workspace is safe
// for concurrent use.
type Workspace struct {
	s      *Store
	scope  string
	thread string
	actor  Actor
	key    string      // the idempotency key of the call (a handle made for it)
	limits *limitsOnce // shared by the handles of one workspace (ForActor, arms)
	arm    *arm        // set for the arms of a fanout
	reads  *readLedger // set by TrackReads, shared by the handles
	only   bool        // OnlyThread: no reach to other threads
	gate   *gate       // the file rules it enforces (access.go); nil: none

	// Review (workspace_review.go): rv routes the changes of a workspace
	// opened with ForReview (shared by the handles); home is the thread a
	// handle routed to a review thread stands for (its caller's thread:
	// the read ledger's key); notes are the handle's notices.
	rv    *reviewer
	home  string
	notes *noteSink

	ref *threadRef // the backend's thread, shared by the handles of one workspace
}

// threadRef holds the backend's ID of a workspace's thread once known
// (0 until then).
type threadRef struct{ id atomic.Int64 }

func (r *threadRef) get() int64 { return r.id.Load() }

func (r *threadRef) set(id int64) { r.id.Store(id) }

// WorkspaceOption configures Store.Workspace.
type WorkspaceOption func(*Workspace)

// WorkspaceActor records actor in every commit the workspace makes
// (CollectionActor is the same for a collection's changes).
func WorkspaceActor(a Actor) WorkspaceOption { return func(w *Workspace) { w.actor = a } }

// limitsOnce holds a workspace's bounds, read on its first mutation.
type limitsOnce struct {
	mu     sync.Mutex
	loaded bool
	l      Limits
}

// Workspace returns the workspace of a scope's thread. The thread is
// created by its first mutation; until then it reads as empty. The bounds
// in force (Store.SetLimits) are read at the first mutation and kept for
// the handle's life. Opening a workspace touches no storage.
func (s *Store) Workspace(ctx context.Context, scope, thread string, opts ...WorkspaceOption) (*Workspace, error) {
	if err := ValidScope(scope); err != nil {
		return nil, err
	}
	if err := ValidThreadName(thread); err != nil {
		return nil, err
	}
	w := &Workspace{s: s, scope: scope, thread: thread, limits: &limitsOnce{}, ref: &threadRef{}, notes: &noteSink{}}
	for _, o := range opts {
		o(w)
	}
	return w, nil
}

// ForActor returns a handle on the same workspace whose commits record
// actor. It costs nothing (no database access): servers make one per call
// to record which tool made each commit. WorkspaceActor sets the actor of
// a workspace as it is opened.
func (w *Workspace) ForActor(a Actor) *Workspace {
	return &Workspace{s: w.s, scope: w.scope, thread: w.thread, actor: a, key: w.key, limits: w.limits, arm: w.arm, reads: w.reads, only: w.only, gate: w.gate, ref: w.ref,
		rv: w.rv, home: w.home, notes: &noteSink{}}
}

// Usage returns how many files the workspace's head holds and their bytes
// counted as DESIGN §2.4 counts them (what maxFiles and maxBytes bound).
func (w *Workspace) Usage(ctx context.Context) (files, bytes int64, err error) {
	if w.rv != nil {
		rw, err := w.reading(ctx)
		if err != nil {
			return 0, 0, err
		}
		return rw.Usage(ctx)
	}
	v, err := w.view(ctx)
	if err != nil {
		return 0, 0, err
	}
	return v.Totals(ctx)
}

// Scope returns the workspace's scope.
func (w *Workspace) Scope() string { return w.scope }

// Thread returns the workspace's thread name.
func (w *Workspace) Thread() string { return w.thread }

// Limits returns the bounds the workspace enforces.
func (w *Workspace) Limits(ctx context.Context) (Limits, error) {
	lo := w.limits
	lo.mu.Lock()
	defer lo.mu.Unlock()
	if !lo.loaded {
		l, err := w.s.LimitsOf(ctx, w.scope, w.thread)
		if err != nil {
			return Limits{}, err
		}
		lo.l, lo.loaded = l, true
	}
	return lo.l, nil
}

// threadID resolves the backend thread; create makes it when missing. ok is
// false when it does not exist (and create is false).
func (w *Workspace) threadID(ctx context.Context, create bool) (int64, bool, error) {
	if id := w.ref.get(); id != 0 {
		return id, true, nil
	}
	t, err := w.s.b.Thread(ctx, w.scope, w.thread, create)
	if errors.Is(err, backend.ErrNoThread) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	w.ref.set(t.ID)
	return t.ID, true, nil
}

func (w *Workspace) forget() {
	w.ref.set(0)
}

// head returns the snapshot at the head (empty when the thread is new).
func (w *Workspace) head(ctx context.Context) (*engine.Snapshot, backend.Commit, error) {
	for attempt := 0; ; attempt++ {
		id, ok, err := w.threadID(ctx, false)
		if err != nil || !ok {
			return w.s.eng.Empty(), backend.Commit{}, err
		}
		snap, c, _, err := w.s.eng.Head(ctx, id)
		if errors.Is(err, backend.ErrNoThread) && attempt == 0 {
			w.forget() // deleted (and perhaps recreated) by someone else
			continue
		}
		return snap, c, err
	}
}

// Batch applies several mutations as one commit. Its operations have the
// semantics of the Workspace methods of the same names; they apply in call
// order, each against the state the previous one left, and are visible to
// the batch's own reads.
type Batch struct {
	w          *Workspace
	tx         *engine.Tx
	limits     Limits
	ops        []opNote // what the commit's summary names
	op1        [1]opNote
	claimed    []string  // fanout claims to undo if the commit fails
	checkpoint string    // a name for the commit (WithCheckpoint)
	reports    []*Commit // where to report the commit (Committed)

	// The read ledger's part (workspace_stale.go): the paths the batch
	// changed, what the ledger learns when it commits, and the stale
	// changes WarnStale let through.
	own         map[string]bool
	learned     []ledgerOp
	staleWarned []*staleFail
	warnStale   func(error)

	// meta, when set, is the commit's metadata instead of the one its
	// operations make (a merge names its second parent).
	meta    []byte
	summary string // Summarize's
	// git and gitSummary, when set (SetGit), make the commit's metadata.
	git        *GitOrigin
	gitSummary string
}

// Batch runs fn and commits everything it did as one commit. If fn returns
// an error, nothing is committed.
//
// fn may run more than once: when another writer commits to the thread
// between fn's reads and the commit (a lost compare-and-swap), the batch
// is discarded and fn runs again against the new head, until it commits or
// the workspace gives up with ErrConflict. So fn must do nothing but its
// work on b, with no effects outside it that a second run would repeat
// (sending a message, counting, appending to a slice of the caller's: do
// those after Batch returns).
func (w *Workspace) Batch(ctx context.Context, fn func(ctx context.Context, b *Batch) error) error {
	if w.rv != nil {
		_, err := reviewed(ctx, w, func(rw *Workspace) (struct{}, error) { return struct{}{}, rw.Batch(ctx, fn) })
		return err
	}
	return w.mutate(ctx, "batch", nil, func(b *Batch) error { return fn(ctx, b) })
}

// update runs fn as one commit, retrying against a new head when another
// writer wins; the commit's summary names the batch's operations. Under
// an idempotency key (kc), a retry of a call that was made already runs
// nothing and sets kc.replayed; otherwise the commit claims the key.
func (w *Workspace) update(ctx context.Context, op string, kc *keyCall, fn func(b *Batch) error) (backend.Commit, error) {
	if kc == nil {
		return w.update1(ctx, op, nil, fn)
	}
	kw := *w
	kw.key = kc.key
	for attempt := 0; ; attempt++ {
		if ok, err := kc.lookup(ctx, w.s, w.scope); err != nil || ok {
			return backend.Commit{}, err
		}
		c, err := kw.update1(ctx, op, kc, fn)
		if errors.Is(err, backend.ErrKeyUsed) && attempt < maxKeyAttempts {
			continue // another call claimed it first: look again
		}
		return c, err
	}
}

func (w *Workspace) update1(ctx context.Context, op string, kc *keyCall, fn func(b *Batch) error) (backend.Commit, error) {
	limits, err := w.Limits(ctx)
	if err != nil {
		return backend.Commit{}, err
	}
	for attempt := 0; ; attempt++ {
		id, _, err := w.threadID(ctx, true)
		if err != nil {
			return backend.Commit{}, err
		}
		var bt *Batch
		c, changed, err := w.s.eng.Update(ctx, id, func(tx *engine.Tx) (engine.CommitInfo, error) {
			if bt != nil {
				bt.abandon() // a retry: the previous attempt's claims are void
			}
			bt = &Batch{w: w, tx: tx, limits: limits}
			if err := fn(bt); err != nil {
				return engine.CommitInfo{}, err
			}
			meta := bt.meta
			switch {
			case bt.git != nil:
				meta = bt.gitMeta(op)
			case meta == nil && bt.summary != "":
				meta = w.meta(op, bt.summary)
			}
			if meta == nil {
				meta = w.metaOps(op, bt.ops)
			}
			return engine.CommitInfo{Meta: meta, Checkpoint: bt.checkpoint, Key: kc.claim(w.s, w.scope)}, nil
		})
		if errors.Is(err, backend.ErrNoThread) && attempt == 0 {
			w.forget()
			continue
		}
		if err != nil && bt != nil {
			bt.abandon()
		}
		if err != nil && w.gate != nil {
			w.countRefusal(err)
		}
		if errors.Is(err, errArchivedHead) {
			return c, w.archived(err)
		}
		if errors.Is(err, engine.ErrConflict) {
			return c, errs.New(errs.ErrConflict, "conflict: other writers kept changing thread %s; try again", w.thread)
		}
		if errors.Is(err, backend.ErrCheckpointExists) && bt != nil {
			return c, w.checkpointErr(bt.checkpoint, err)
		}
		if err != nil && w.reads != nil {
			return c, w.asStale(ctx, err)
		}
		if err == nil && bt != nil && (bt.learned != nil || bt.staleWarned != nil) {
			bt.settle(ctx)
		}
		if err == nil && !changed && kc != nil {
			// Nothing to commit: the key is claimed on its own.
			if err := kc.claimAlone(ctx, w.s, w.scope, id, c.Seq); err != nil || kc.replayed != nil {
				return c, err
			}
		}
		if err == nil && !changed && bt != nil {
			return c, bt.unchanged(ctx)
		}
		if err == nil && bt != nil {
			for _, r := range bt.reports {
				*r = w.s.commitOf(c, checkpointNames(bt.checkpoint))
			}
		}
		return c, err
	}
}

// unchanged finishes a batch that changed nothing: no commit was made, but
// a checkpoint it asked for names the head, and what it reports is the
// head's commit, Unchanged.
func (b *Batch) unchanged(ctx context.Context) error {
	var c Commit
	if b.checkpoint != "" {
		var err error
		if c, err = b.w.Checkpoint(ctx, b.checkpoint); err != nil {
			return err
		}
	} else if len(b.reports) > 0 {
		_, hc, err := b.w.head(ctx)
		if err != nil {
			return err
		}
		c = b.w.s.commitOf(hc, nil)
	}
	c.Unchanged = true
	for _, r := range b.reports {
		*r = c
	}
	return nil
}

func checkpointNames(name string) []string {
	if name == "" {
		return nil
	}
	return []string{name}
}

// mutate runs fn as one commit (see update); a call under an idempotency
// key that was made already reports its first commit (o.report).
func (w *Workspace) mutate(ctx context.Context, op string, kc *keyCall, fn func(b *Batch) error, opts ...WriteOption) error {
	_, err := w.update(ctx, op, kc, fn)
	if err == nil && kc != nil && kc.replayed != nil {
		return w.replayCommit(ctx, kc.replayed, collect(opts))
	}
	return err
}

// keyCall starts a call of op under the key opts give (nil without one).
func (w *Workspace) keyCall(op string, opts []WriteOption, args ...string) (*keyCall, error) {
	if len(opts) == 0 {
		return nil, nil
	}
	return w.s.newKeyCall(collect(opts), w.scope, w.thread, op, append([]string{w.thread}, args...)...)
}

// WriteOption is a precondition or flag of a mutation.
type WriteOption func(*writeOpts)

type writeOpts struct {
	key        string // IdempotencyKey (store_idempotency.go)
	ifHash     string
	overwrite  bool
	checkpoint string
	report     *Commit
	warnStale  func(error)
}

// IfHash makes a mutation apply only if the file's content hash (as Stat
// reports it) is still h: optimistic concurrency for callers that read,
// think, then edit. Otherwise the mutation is refused with ErrConflict.
func IfHash(h string) WriteOption { return func(o *writeOpts) { o.ifHash = h } }

// WithCheckpoint names the commit the mutation makes, in the same
// transaction: a step and its checkpoint are one durable write instead of
// two. The name follows Checkpoint's rules.
func WithCheckpoint(name string) WriteOption { return func(o *writeOpts) { o.checkpoint = name } }

// Committed makes a mutation report in *c the commit it went into. A
// mutation that changes nothing (a write of the content the file has, an
// edit whose replacement leaves the file as it was) makes no commit: *c is
// then the head's commit, with Unchanged set.
func Committed(c *Commit) WriteOption { return func(o *writeOpts) { o.report = c } }

// Overwrite lets Move replace an existing file at the destination.
func Overwrite() WriteOption { return func(o *writeOpts) { o.overwrite = true } }

func collect(opts []WriteOption) writeOpts {
	if len(opts) == 0 {
		return writeOpts{} // before o, which the options' pointer puts on the heap
	}
	var o writeOpts
	for _, f := range opts {
		f(&o)
	}
	return o
}

// options applies a mutation's options that concern the whole commit.
func (b *Batch) options(opts []WriteOption) (writeOpts, error) {
	o := collect(opts)
	if o.checkpoint != "" {
		if err := ValidCheckpointName(o.checkpoint); err != nil {
			return o, err
		}
		if b.checkpoint != "" && b.checkpoint != o.checkpoint {
			return o, errs.New(errs.ErrInvalidArgument, "one commit takes one checkpoint name: %s, then %s", b.checkpoint, o.checkpoint)
		}
		b.checkpoint = o.checkpoint
	}
	if o.report != nil {
		b.reports = append(b.reports, o.report)
	}
	if o.warnStale != nil {
		b.warnStale = o.warnStale
	}
	return o, nil
}

// Hash returns the content hash that Stat reports and IfHash expects: the
// SHA-256 of the content, in lowercase hex.
func Hash(content string) string {
	h := sha256.Sum256([]byte(content))
	return hex.EncodeToString(h[:])
}

// Write creates or replaces the file at path. Writing the content the file
// already has changes nothing and makes no commit (see Committed).
func (w *Workspace) Write(ctx context.Context, path, content string, opts ...WriteOption) error {
	if w.rv != nil {
		_, err := reviewed(ctx, w, func(rw *Workspace) (struct{}, error) { return struct{}{}, rw.Write(ctx, path, content, opts...) })
		return err
	}
	kc, err := w.keyCall("write", opts, path, content)
	if err != nil {
		return err
	}
	return w.mutate(ctx, "write", kc, func(b *Batch) error { return b.Write(ctx, path, content, opts...) }, opts...)
}

// Append adds text at the end of the file at path, creating it if missing.
// Appends are atomic; concurrent appends (and appends from fanout arms) all
// land, in some order. Of the options, IdempotencyKey and Committed apply.
func (w *Workspace) Append(ctx context.Context, path, text string, opts ...WriteOption) error {
	if w.rv != nil {
		_, err := reviewed(ctx, w, func(rw *Workspace) (struct{}, error) { return struct{}{}, rw.Append(ctx, path, text, opts...) })
		return err
	}
	kc, err := w.keyCall("append", opts, path, text)
	if err != nil {
		return err
	}
	return w.mutate(ctx, "append", kc, func(b *Batch) error {
		if len(opts) > 0 {
			if _, err := b.options(opts); err != nil {
				return err
			}
		}
		return b.Append(ctx, path, text)
	}, opts...)
}

// StrReplace replaces old with new in the file at path and returns how
// many occurrences it replaced. Without replaceAll, old must occur exactly
// once. A replacement that leaves the file as it was (new equal to old)
// makes no commit (see Committed).
func (w *Workspace) StrReplace(ctx context.Context, path, old, new string, replaceAll bool, opts ...WriteOption) (int, error) {
	if w.rv != nil {
		return reviewed(ctx, w, func(rw *Workspace) (int, error) { return rw.StrReplace(ctx, path, old, new, replaceAll, opts...) })
	}
	kc, err := w.keyCall("edit", opts, path, old, new, boolArg(replaceAll))
	if err != nil {
		return 0, err
	}
	var n int
	err = w.mutate(ctx, "edit", kc, func(b *Batch) error {
		var err error
		n, err = b.StrReplace(ctx, path, old, new, replaceAll, opts...)
		if kc != nil {
			kc.result = strconv.AppendInt(kc.result[:0], int64(n), 10)
		}
		return err
	}, opts...)
	if kc != nil && kc.replayed != nil {
		n, _ = strconv.Atoi(string(kc.replayed.Result))
	}
	return n, err
}

// Delete removes the file at path. Deleting a missing file is not an error.
func (w *Workspace) Delete(ctx context.Context, path string, opts ...WriteOption) error {
	if w.rv != nil {
		_, err := reviewed(ctx, w, func(rw *Workspace) (struct{}, error) { return struct{}{}, rw.Delete(ctx, path, opts...) })
		return err
	}
	kc, err := w.keyCall("delete", opts, path)
	if err != nil {
		return err
	}
	return w.mutate(ctx, "delete", kc, func(b *Batch) error { return b.Delete(ctx, path, opts...) }, opts...)
}

// Move renames a file. It refuses to replace an existing file unless
// given Overwrite(). IfHash applies to the source.
func (w *Workspace) Move(ctx context.Context, from, to string, opts ...WriteOption) error {
	if w.rv != nil {
		_, err := reviewed(ctx, w, func(rw *Workspace) (struct{}, error) { return struct{}{}, rw.Move(ctx, from, to, opts...) })
		return err
	}
	kc, err := w.keyCall("move", opts, from, to)
	if err != nil {
		return err
	}
	return w.mutate(ctx, "move", kc, func(b *Batch) error { return b.Move(ctx, from, to, opts...) }, opts...)
}

// note records an operation for the commit's summary.
func (b *Batch) note(op, path, to string) {
	if b.ops == nil {
		b.ops = b.op1[:0] // most commits make one
	}
	b.ops = append(b.ops, opNote{op, path, to})
}

// checkPrecondition refuses when the file's hash is not o.ifHash; ent is
// the file (nil: there is none).
func (b *Batch) checkPrecondition(ctx context.Context, path string, ent *engine.Entry, o writeOpts) error {
	if o.ifHash == "" {
		return nil
	}
	if ent == nil {
		return errs.New(errs.ErrConflict, "conflict: %s does not exist (expected hash %s)", path, o.ifHash)
	}
	content, err := b.tx.Content(ctx, ent)
	if err != nil {
		return err
	}
	if h := Hash(content); h != o.ifHash {
		return errs.New(errs.ErrConflict, "conflict: %s has changed since hash %s (its hash is now %s); read it again", path, o.ifHash, h)
	}
	return nil
}

// entryOrNil returns ent when ok, else nil.
func entryOrNil(ent *engine.Entry, ok bool) *engine.Entry {
	if !ok {
		return nil
	}
	return ent
}

// isDir reports whether any file lies under path.
func isDir(ctx context.Context, v engine.View, path string) (bool, error) {
	if tx, ok := v.(*engine.Tx); ok {
		return tx.HasUnder(ctx, path)
	}
	found := false
	err := v.ScanPaths(ctx, path+"/", path+"0", func(string) (bool, error) {
		found = true
		return false, nil
	})
	return found, err
}

// needFile returns the file at path, or the error that says why there is none.
func needFile(ctx context.Context, v engine.View, path string) (engine.Entry, error) {
	ent, ok, err := v.Get(ctx, path)
	if err != nil || ok {
		return ent, err
	}
	dir, err := isDir(ctx, v, path)
	if err != nil {
		return ent, err
	}
	if dir {
		return ent, errs.New(errs.ErrIsDirectory, "%s is a directory", path)
	}
	return ent, errs.New(errs.ErrNotFound, "file not found: %s", path)
}

// checkCreatable refuses a new file where a directory is, or under a file.
func (b *Batch) checkCreatable(ctx context.Context, path string) error {
	dir, err := isDir(ctx, b.tx, path)
	if err != nil {
		return err
	}
	if dir {
		return errs.New(errs.ErrIsDirectory, "%s is a directory", path)
	}
	for i := strings.IndexByte(path, '/'); i >= 0; i = next(path, i) {
		parent := path[:i]
		_, ok, err := b.tx.Get(ctx, parent)
		if err != nil {
			return err
		}
		if ok {
			return errs.New(errs.ErrExists, "cannot create %s: %s is a file", path, parent)
		}
	}
	return nil
}

func next(s string, i int) int {
	j := strings.IndexByte(s[i+1:], '/')
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

// checkBounds refuses the state the batch has reached if it exceeds the
// workspace's bounds (DESIGN §2.4).
func (b *Batch) checkBounds(ctx context.Context, path string, size int64) error {
	l := b.limits
	if size > l.MaxFileBytes {
		return &errs.Error{Kind: errs.ErrLimitExceeded, Msg: errs.FileLimitMessage(path, "would be", size, l.MaxFileBytes)}
	}
	files, bytes, err := b.tx.Totals(ctx)
	if err != nil {
		return err
	}
	if files > l.MaxFiles {
		return &errs.Error{Kind: errs.ErrLimitExceeded, Msg: errs.LimitMessage("files", files, l.MaxFiles, false)}
	}
	if bytes > l.MaxBytes {
		return &errs.Error{Kind: errs.ErrLimitExceeded, Msg: errs.LimitMessage("bytes", bytes, l.MaxBytes, false)}
	}
	return nil
}

// Write is Workspace.Write within the batch.
func (b *Batch) Write(ctx context.Context, path, content string, opts ...WriteOption) error {
	if err := vpath.Validate(path); err != nil {
		return err
	}
	if err := b.w.canWrite("write", path); err != nil {
		return err
	}
	o, err := b.options(opts)
	if err != nil {
		return err
	}
	if err := b.claim(path, claimWrite); err != nil {
		return err
	}
	ent, ok, err := b.tx.Get(ctx, path)
	if err != nil {
		return err
	}
	if err := b.checkPrecondition(ctx, path, entryOrNil(&ent, ok), o); err != nil {
		return err
	}
	if !ok {
		if err := b.checkCreatable(ctx, path); err != nil {
			return err
		}
	}
	if int64(len(content)) > b.limits.MaxFileBytes {
		return b.checkBounds(ctx, path, int64(len(content)))
	}
	var old string // the file's content, when read already
	hasOld := false
	if ok && ent.Size == int64(len(content)) {
		// The same content again changes nothing: no commit.
		if old, err = b.tx.Content(ctx, &ent); err != nil {
			return err
		}
		if old == content {
			b.learn(path, b.hashed(content))
			return nil
		}
		hasOld = true
	}
	if ok {
		if err := b.checkSeen(ctx, path, &ent, old, hasOld); err != nil {
			return err
		}
	}
	if err := b.tx.Put(ctx, path, content); err != nil {
		return err
	}
	b.learn(path, b.hashed(content))
	b.note("write", path, "")
	return b.checkBounds(ctx, path, int64(len(content)))
}

// Append is Workspace.Append within the batch.
func (b *Batch) Append(ctx context.Context, path, text string) error {
	if err := vpath.Validate(path); err != nil {
		return err
	}
	if err := b.w.canWrite("append", path); err != nil {
		return err
	}
	if err := b.claim(path, claimAppend); err != nil {
		return err
	}
	ent, ok, err := b.tx.Get(ctx, path)
	if err != nil {
		return err
	}
	if !ok {
		if err := b.checkCreatable(ctx, path); err != nil {
			return err
		}
	}
	if size := ent.Size + int64(len(text)); size > b.limits.MaxFileBytes {
		return b.checkBounds(ctx, path, size)
	}
	// The ledger learns before the append, while the old content can be read.
	if err := b.learnAppend(ctx, path, entryOrNil(&ent, ok), text); err != nil {
		return err
	}
	if err := b.tx.Append(ctx, path, text); err != nil {
		return err
	}
	b.note("append", path, "")
	return b.checkBounds(ctx, path, ent.Size+int64(len(text)))
}

// StrReplace is Workspace.StrReplace within the batch.
func (b *Batch) StrReplace(ctx context.Context, path, old, new string, replaceAll bool, opts ...WriteOption) (int, error) {
	if err := vpath.Validate(path); err != nil {
		return 0, err
	}
	if old == "" {
		return 0, errs.New(errs.ErrInvalidArgument, "anchor must not be empty")
	}
	if err := b.w.canChange("edit", path); err != nil {
		return 0, err
	}
	o, err := b.options(opts)
	if err != nil {
		return 0, err
	}
	if err := b.claim(path, claimWrite); err != nil {
		return 0, err
	}
	ent, err := needFile(ctx, b.tx, path)
	if err != nil {
		return 0, err
	}
	if err := b.checkPrecondition(ctx, path, &ent, o); err != nil {
		return 0, err
	}
	content, err := b.tx.Content(ctx, &ent)
	if err != nil {
		return 0, err
	}
	out, n, err := lines.Replace(path, content, old, new, replaceAll)
	if err != nil {
		return 0, err
	}
	if err := b.checkSeen(ctx, path, &ent, content, true); err != nil {
		return 0, err
	}
	if int64(len(out)) > b.limits.MaxFileBytes {
		return 0, b.checkBounds(ctx, path, int64(len(out)))
	}
	if out == content {
		return n, nil // the replacement leaves the file as it was: no commit
	}
	if err := b.tx.Put(ctx, path, out); err != nil {
		return 0, err
	}
	b.learn(path, b.hashed(out))
	b.note("edit", path, "")
	return n, b.checkBounds(ctx, path, int64(len(out)))
}

// Delete is Workspace.Delete within the batch.
func (b *Batch) Delete(ctx context.Context, path string, opts ...WriteOption) error {
	if err := vpath.Validate(path); err != nil {
		return err
	}
	if err := b.w.canWrite("delete", path); err != nil {
		return err
	}
	o, err := b.options(opts)
	if err != nil {
		return err
	}
	if err := b.claim(path, claimWrite); err != nil {
		return err
	}
	ent, ok, err := b.tx.Get(ctx, path)
	if err != nil {
		return err
	}
	if !ok {
		if dir, err := isDir(ctx, b.tx, path); err != nil {
			return err
		} else if dir {
			return errs.New(errs.ErrIsDirectory, "%s is a directory", path)
		}
		return b.checkPrecondition(ctx, path, nil, o) // else idempotent
	}
	if err := b.checkPrecondition(ctx, path, &ent, o); err != nil {
		return err
	}
	if err := b.checkSeen(ctx, path, &ent, "", false); err != nil {
		return err
	}
	b.learn(path, nil)
	b.note("delete", path, "")
	return b.tx.Delete(ctx, path)
}

// Move is Workspace.Move within the batch.
func (b *Batch) Move(ctx context.Context, from, to string, opts ...WriteOption) error {
	if err := vpath.Validate(from); err != nil {
		return err
	}
	if err := vpath.Validate(to); err != nil {
		return err
	}
	if err := b.w.canChange("move", from); err != nil {
		return err
	}
	if err := b.w.canWrite("move", to); err != nil {
		return err
	}
	o, err := b.options(opts)
	if err != nil {
		return err
	}
	if err := b.claim(from, claimWrite); err != nil {
		return err
	}
	if err := b.claim(to, claimWrite); err != nil {
		return err
	}
	ent, err := needFile(ctx, b.tx, from)
	if err != nil {
		return err
	}
	if err := b.checkPrecondition(ctx, from, &ent, o); err != nil {
		return err
	}
	if from == to {
		return nil
	}
	toEnt, exists, err := b.tx.Get(ctx, to)
	if err != nil {
		return err
	}
	if exists && !o.overwrite {
		return errs.New(errs.ErrExists, "cannot move %s to %s: %s exists (overwrite not requested)", from, to, to)
	}
	if err := b.checkSeen(ctx, from, &ent, "", false); err != nil {
		return err
	}
	if exists {
		if err := b.checkSeen(ctx, to, &toEnt, "", false); err != nil {
			return err
		}
	}
	moved := b.seenOf(from)
	if err := b.tx.Rename(ctx, from, to); err != nil {
		return err
	}
	b.learn(from, nil)
	b.learn(to, moved)
	if !exists {
		if err := b.checkCreatable(ctx, to); err != nil {
			return err
		}
	}
	b.note("move", from, to)
	return b.checkBounds(ctx, to, 0)
}

// Summarize gives the batch's commit the summary s instead of the list of
// its operations ("write a.md; write b.md; ..."), for a batch that says
// better what it does: "import 112 files under docs/". A caller whose
// file rules hide a path sees the commit's summary empty: the text is
// the caller's, not a list the store wrote, whatever it reads like.
func (b *Batch) Summarize(s string) { b.summary = s }

// Read reads path within the batch (seeing the batch's own changes).
func (b *Batch) Read(ctx context.Context, path string, bounds ...int) (string, error) {
	return readView(ctx, b.w.filter(b.tx), path, false, bounds)
}

// Exists reports whether path is a file, within the batch.
func (b *Batch) Exists(ctx context.Context, path string) (bool, error) {
	return existsView(ctx, b.w.filter(b.tx), path)
}
