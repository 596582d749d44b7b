// Package backend is the storage contract of satchel: what a backend must
// store and answer so that the engine above it can keep versioned
// workspaces. It is plumbing, not user API: users open a store with
// satchel.Open and never call a backend directly, but anyone may write a
// backend of their own and prove it with the conformance suite in
// backend/backendtest.
//
// A backend is small and dumb. It keeps:
//
//   - threads: named logs of commits, per scope;
//   - commits: append-only rows, each carrying an opaque root reference, an
//     opaque metadata blob, and the pack of new objects the commit created
//     (the engine encodes packs; the backend never looks inside);
//   - checkpoints: names for commits of a thread;
//   - settings: small opaque values per scope and thread (bounds, retention).
//
// The one piece of cleverness asked of a backend is the compare-and-swap in
// Append: a commit with sequence number s is stored only if s is exactly one
// past the thread's head, atomically, even against other processes. All
// semantics (paths, lines, bounds, history, garbage collection decisions)
// live above the backend, in internal/engine and package satchel, written
// once.
package backend

import (
	"context"
	"errors"
	"time"

	"github.com/satchel-dev/satchel/internal/errs"
)

// ErrStale is returned (per entry, in AppendResult.Err) when a commit's
// sequence number is no longer one past the head: another writer committed
// first. The engine re-reads the head and retries.
var ErrStale = errors.New("backend: stale head")

// ErrNotRetained is returned when a commit that an append requires (the
// source of a fork or a restore) has been dropped from its log.
var ErrNotRetained = errors.New("backend: commit not retained")

// ErrReadOnly is wrapped by the error of every write to a backend opened
// for reading only, or whose storage cannot be written (a read-only file
// or mount).
var ErrReadOnly = errs.ErrReadOnly

// ErrSchemaTooNew: the database's schema has a contract migration this
// program does not know: it would not run correctly on it (upgrade it).
var ErrSchemaTooNew = errors.New("schema too new for this program")

// ErrOlderProcesses: a contract migration was refused because processes
// that predate it still use the database.
var ErrOlderProcesses = errors.New("older processes still connected")

// ErrNoThread is returned when a thread does not exist.
var ErrNoThread = errors.New("backend: no such thread")

// ErrLockBusy is returned by ThreadLocker.LockThread when the backend has
// no lock free to wait on: the caller goes on without the lock.
var ErrLockBusy = errors.New("backend: no thread lock free")

// ErrThreadExists is returned when creating a thread whose name is taken.
var ErrThreadExists = errors.New("backend: thread exists")

// ErrCheckpointExists is returned when a checkpoint name is taken in its thread.
var ErrCheckpointExists = errors.New("backend: checkpoint exists")

// ErrNoCheckpoint is returned when a checkpoint name is unknown.
var ErrNoCheckpoint = errors.New("backend: no such checkpoint")

// ErrNoCommit is returned when a sequence number is not in a thread's
// retained log.
var ErrNoCommit = errors.New("backend: no such commit")

// ErrNoPack is returned when a pack does not exist (it was collected).
var ErrNoPack = errors.New("backend: no such pack")

// Thread identifies a thread. ID is assigned by the backend, never reused.
type Thread struct {
	ID      int64
	Scope   string
	Name    string
	Created time.Time
}

// Commit is one entry of a thread's log.
type Commit struct {
	// ID identifies the commit and its pack, across all threads; IDs grow
	// with time and are never reused.
	ID     int64
	Thread int64
	// Seq is the commit's sequence number in its thread: 1, 2, 3, ...
	Seq int64
	// Root is the engine's reference to the commit's tree (opaque).
	Root []byte
	// Meta is the engine's metadata (opaque JSON).
	Meta []byte
	// Time is when the commit was stored, by the backend's clock.
	Time time.Time
}

// NewCommit is a commit to append.
type NewCommit struct {
	Thread int64
	// Seq must be exactly one past the thread's head (1 for an empty thread),
	// else the append of this entry fails with ErrStale.
	Seq  int64
	Root []byte
	Meta []byte
	// Pack holds the objects the commit created (opaque, may be empty). The
	// caller never modifies it after Append, so a backend may keep it
	// without copying.
	Pack []byte
	// Requires, when set, names a commit that must still be retained when
	// this one is stored (the source of a fork or a restore), else the
	// append fails with ErrNotRetained. A concurrent Drop of that commit
	// must either happen entirely before (and fail this append) or after.
	Requires *CommitID
	// Checkpoint, when not empty, names the new commit in the same
	// transaction (ErrCheckpointExists if taken).
	Checkpoint string
	// Files and Bytes are the totals of the commit's tree (DESIGN §2.4),
	// stored with it; DeltaFiles and DeltaBytes what the commit adds to
	// them over the head it is compare-and-swapped against (Seq-1): what
	// it adds to its scope's usage (see Quotas).
	Files, Bytes           int64
	DeltaFiles, DeltaBytes int64
	// Key, when set, is an idempotency key the commit claims in the same
	// transaction, recording the commit's thread and seq (ErrKeyUsed when
	// it is live). Only backends that implement Keys are given one.
	Key *KeyClaim
	// Chained says that the commit was built on the entry just before it
	// in the same Append, which is for the same thread at Seq-1, before
	// that entry was stored: it is stored only if that entry is, else it
	// fails with ErrStale, and never lands on another writer's commit at
	// Seq-1. An entry marked Chained that does not follow such an entry
	// fails with ErrStale.
	Chained bool
}

// CommitID names a commit by thread and sequence number.
type CommitID struct {
	Thread int64
	Seq    int64
}

// AppendResult is the outcome of one NewCommit of an Append.
type AppendResult struct {
	Commit Commit
	Err    error
	// Head, with ErrStale, may be the thread's newest commit as the append
	// saw it, newer than the entry's base (Seq >= the entry's Seq), with
	// Root and Meta, so that the engine rebuilds on it without reading the
	// head again: a round trip saved per lost race on a server. A zero Head
	// says nothing (a backend need not fill it).
	Head Commit
	// Contended is set by a ThreadLocker backend on an entry appended
	// while a LockThread (of any process) held or waited for the thread's
	// lock, and only then: writers wait to write the thread, and this one,
	// which did not take the lock, should take it too. Other backends
	// leave it false.
	Contended bool
}

// Checkpoint is a named commit.
type Checkpoint struct {
	Name string
	Seq  int64
}

// GCSnapshot is what a garbage collection reads, consistently, in one
// snapshot of a scope: the roots of every retained commit, and the packs of
// commits dropped before a cutoff.
type GCSnapshot struct {
	// Retained lists every retained commit of the scope, with at least ID,
	// Thread, Seq and Root set (a root may be relative to its commit's ID).
	Retained []Commit
	// Dropped are the IDs of packs whose commits were dropped from their log
	// before the cutoff. Only these may be deleted or rewritten.
	Dropped []int64
}

// Backend stores threads, commits with their packs, checkpoints and
// settings. Implementations must be safe for concurrent use, and correct
// when several processes share one database: nothing may depend on one
// process's memory.
type Backend interface {
	// Now returns the backend's clock (the database's, for shared databases),
	// used for commit times, retention ages and grace periods.
	Now(ctx context.Context) (time.Time, error)

	// Scopes lists the scopes that have at least one thread.
	Scopes(ctx context.Context) ([]string, error)
	// Thread returns a thread by scope and name; with create, it is created
	// (empty) when missing. Without create, a missing thread is ErrNoThread.
	Thread(ctx context.Context, scope, name string, create bool) (Thread, error)
	// CreateThread creates an empty thread, or fails with ErrThreadExists.
	CreateThread(ctx context.Context, scope, name string) (Thread, error)
	// Threads lists a scope's threads by name.
	Threads(ctx context.Context, scope string) ([]Thread, error)
	// DeleteThread removes a thread; its commits are dropped (their packs
	// stay until collected, since forks may share them). Its checkpoints and
	// settings go with it.
	DeleteThread(ctx context.Context, thread int64) error
	// PurgeScope removes every thread, commit, pack and setting of a scope,
	// and, for backends that store documents, the scope's documents.
	PurgeScope(ctx context.Context, scope string) error

	// Head returns the newest commit of a thread; ok is false when the thread
	// has no commits.
	Head(ctx context.Context, thread int64) (c Commit, ok bool, err error)
	// CommitAt returns a retained commit by sequence number, or ErrNoCommit.
	CommitAt(ctx context.Context, thread, seq int64) (Commit, error)
	// Log lists retained commits newest first, with Seq < before (before <= 0
	// means from the head), at most limit (limit <= 0: all).
	Log(ctx context.Context, thread, before int64, limit int) ([]Commit, error)
	// Append stores commits, each independently compare-and-swapped against
	// its thread's head (see NewCommit). It returns one result per entry, in
	// order; an error return means the whole call failed and nothing was
	// stored. Entries for different threads may share one transaction (group
	// commit); results are returned only once durable.
	Append(ctx context.Context, commits []NewCommit) ([]AppendResult, error)
	// Pack returns the pack stored with a commit (even a dropped one, until
	// it is collected), or ErrNoPack.
	Pack(ctx context.Context, id int64) (string, error)

	// SetCheckpoint names a retained commit (ErrCheckpointExists,
	// ErrNoCommit).
	SetCheckpoint(ctx context.Context, thread int64, name string, seq int64) error
	// Checkpoints lists a thread's checkpoints, newest commit first.
	Checkpoints(ctx context.Context, thread int64) ([]Checkpoint, error)
	// CheckpointSeq resolves a checkpoint name (ErrNoCheckpoint).
	CheckpointSeq(ctx context.Context, thread int64, name string) (int64, error)

	// Drop removes the listed commits from a thread's log (retention).
	// Which commits go is decided above (engine.Retain): callers never
	// list the head, and a backend may rely on it. Checkpoints naming
	// dropped commits go with them in the same transaction, so that a
	// concurrent SetCheckpoint either names a commit that stays or fails
	// with ErrNoCommit. Dropped packs stay readable until collected.
	Drop(ctx context.Context, thread int64, seqs []int64) error
	// GCSnapshot reads, in one consistent snapshot of a scope, the roots of
	// all retained commits and the packs dropped before cutoff.
	GCSnapshot(ctx context.Context, scope string, cutoff time.Time) (GCSnapshot, error)
	// DeletePacks deletes dropped packs; RewritePack replaces a dropped pack's
	// bytes (the engine blanks the objects nothing reaches). Both must leave
	// a retained commit's pack untouched.
	DeletePacks(ctx context.Context, ids []int64) error
	RewritePack(ctx context.Context, id int64, pack []byte) error

	// Setting reads a small value by scope, thread name ("" for the whole
	// scope) and key; ok is false when unset. PutSetting writes one (nil
	// deletes it).
	Setting(ctx context.Context, scope, thread, key string) (v []byte, ok bool, err error)
	PutSetting(ctx context.Context, scope, thread, key string, v []byte) error
	// Settings lists the settings of a scope and thread whose keys start
	// with prefix, by key. Scope "" is a global namespace (no scope name is
	// empty): satchel keeps its access tokens there.
	Settings(ctx context.Context, scope, thread, prefix string) (map[string][]byte, error)

	// Quotas keeps per-scope quotas and their usage counters.
	Quotas

	// Close releases the backend's resources.
	Close() error
}

// ChainHolds reports whether entry i of an Append, marked Chained, may be
// stored: it follows an entry of the same thread at Seq-1 that was stored
// (res holds the results of the entries before i). For backends that
// decide the entries one after the other.
func ChainHolds(ncs []NewCommit, res []AppendResult, i int) bool {
	if i == 0 {
		return false
	}
	prev := &ncs[i-1]
	return prev.Thread == ncs[i].Thread && prev.Seq == ncs[i].Seq-1 && res[i-1].Err == nil
}
