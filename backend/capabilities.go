package backend

import (
	"context"
	"time"
)

// The optional capabilities of a backend. Backend (and Documents, for
// collections) is what every backend must implement; each interface below
// is something a backend may offer besides, found with As (as errors.As
// finds an error: on the Backend value, else on what a wrapper wraps).
// Every caller has a fallback for a backend without the capability, and
// the conformance suite (satcheltest.Run) runs each backend again with
// each capability it offers hidden, so a backend may implement any subset
// of them.
//
// A wrapper that embeds a Backend (as a test's fault injector does) hides
// every capability it does not itself declare, unless it also has a method
// Unwrap() Backend: As then looks below it. A Hider hides chosen
// capabilities of what it wraps; that is how the suite proves the
// fallbacks.

// Forker is implemented by backends for which creating a thread and
// appending its first commit in one transaction saves a round trip and a
// durable flush (PostgreSQL). Fork creates thread name in scope with c as
// its first commit (c.Thread is ignored; c.Seq is 1; c.Requires names the
// source): ErrThreadExists when the name is taken, ErrNotRetained when the
// source is not retained, and in either case nothing is created. Without
// it the engine calls CreateThread, then Append.
type Forker interface {
	Fork(ctx context.Context, scope, name string, c NewCommit) (Thread, Commit, error)
}

// CheckpointResolver is implemented by backends that find a checkpoint's
// commit in one query (PostgreSQL: one round trip instead of two).
// CheckpointCommit fails as CheckpointSeq then CommitAt would, which is
// what callers do without it.
type CheckpointResolver interface {
	CheckpointCommit(ctx context.Context, thread int64, name string) (Commit, error)
}

// PartsAppender is implemented by backends that keep packs in the
// process's memory (package memory). AppendParts is Append with commit i's
// pack given as packs[i] (its Pack field is empty): strings whose
// concatenation is the pack, the header and then each object, which the
// backend may keep as they are. The engine then neither copies a commit's
// objects (file content among them) into one buffer nor allocates it
// (docs/decisions/0012-memory-write-path.md). Without it the engine joins
// the parts into NewCommit.Pack and calls Append.
type PartsAppender interface {
	AppendParts(ctx context.Context, commits []NewCommit, packs [][]string) ([]AppendResult, error)
}

// PartsReader is implemented by the backends that implement PartsAppender:
// PackParts returns a pack as it is kept, the parts AppendParts was given
// (header first) or the pack as one string, without joining them. The
// engine then does not cache those packs: reading one is as cheap as a
// cache hit. Without it the engine reads Pack and caches what it decodes.
type PartsReader interface {
	PackParts(ctx context.Context, id int64) ([]string, error)
}

// PacksReader is implemented by backends for which reading many packs in
// one query saves a round trip for each (PostgreSQL): a walk of a whole
// tree (grep) reads the packs of every file it visits. Packs reads the
// packs of ids, named in any order and each read once however often it is
// named, and returns those it read by ID. An ID without a pack (never
// stored, or collected: Pack returns ErrNoPack) is in neither result.
// maxBytes bounds the bytes read at once: Packs returns in rest, unread,
// the IDs whose packs exist but would take the packs read past maxBytes,
// for the caller to ask for again; which ones is the backend's choice, but
// a call with IDs of existing packs reads at least one of them, whatever
// its size, so that asking again always makes progress. Without it the
// engine calls Pack for each pack (docs/decisions/0088-batched-pack-reads.md).
type PacksReader interface {
	Packs(ctx context.Context, ids []int64, maxBytes int64) (packs map[int64]string, rest []int64, err error)
}

// Vacuumer is implemented by backends that can give freed space back
// (SQLite's incremental vacuum). The engine calls Vacuum after a garbage
// collection that deleted or rewrote packs; without it, freed space is
// left for the backend to reuse.
type Vacuumer interface {
	Vacuum(ctx context.Context) error
}

// DocBatcher is implemented by Documents backends that store several
// document replacements in one transaction, so that concurrent sets share
// its durable flush (group commit of documents; decision 0071).
// ReplaceDocs applies rs in order, each exactly as ReplaceDoc would (its
// own Expect, Live, Archive, Keep and TTL), against the state the entries
// before it left (a later entry of the same key sees the earlier one's
// version), in one transaction, and returns one result per entry, in
// order, only once that transaction is durable: Err nil with the stored
// version, or ErrDocChanged with the current version, as ReplaceDoc
// returns them. A refused entry changes nothing and does not refuse the
// others. An error return means the whole call failed and nothing was
// stored. Every field of an entry (the document's operation data) is
// stored for that entry alone. Without it satchel calls ReplaceDoc for
// each set.
type DocBatcher interface {
	ReplaceDocs(ctx context.Context, rs []DocReplace) ([]DocResult, error)
}

// DocResult is the outcome of one entry of ReplaceDocs.
type DocResult struct {
	Doc Doc
	Err error
}

// Clock is a source of time: the wall clock, or a test's.
type Clock func() time.Time

// ClockSetter is implemented by backends whose clock can be replaced, so
// that tests of expiry, retention and grace periods move time instead of
// waiting for it. SetClock makes the backend read c wherever it reads its
// clock: always for documents (their Updated and Expires times, the
// expiry that get, query and remove see, and SweepExpired) and for
// idempotency keys (their times and expiry, Keys); and for Now,
// commit times and drops on a backend whose clock is the process's
// (memory, SQLite). A backend whose commits are stamped by a shared
// database's clock (PostgreSQL) keeps that clock for them. A nil c
// restores the backend's own clock.
type ClockSetter interface {
	SetClock(c Clock)
}

// Migrator is implemented by backends with a schema (SQLite, PostgreSQL).
// Migrate applies the expand migrations the database lacks (Open already
// does; satchel migrate calls it on its own); SchemaVersion returns the
// number of the last migration applied. Both refuse (ErrSchemaTooNew) a
// database with a contract migration newer than the program
// (docs/decisions/0061-expand-contract-migrations.md).
type Migrator interface {
	Migrate(ctx context.Context) error
	SchemaVersion(ctx context.Context) (int, error)
}

// ContractMigrator is implemented by the backends whose migrations may be
// destructive (SQLite, PostgreSQL). MigrateContract applies the migrations
// the database lacks, contract ones included, and refuses
// (ErrOlderProcesses) while a process that predates a pending contract
// migration is registered (satchel migrate --contract).
type ContractMigrator interface {
	MigrateContract(ctx context.Context) error
}

// DiskSizer is implemented by backends that store on disk. DiskSize
// returns the bytes the store occupies (SQLite: the file once its
// write-ahead log is checkpointed into it; PostgreSQL: the total size of
// satchel's tables with their indexes and TOAST). The benchmarks report it;
// without it they add up the packs, roots and metadata of retained commits.
type DiskSizer interface {
	DiskSize(ctx context.Context) (int64, error)
}

// ThreadHead is a thread with its newest commit.
type ThreadHead struct {
	Thread
	// Head is what Head returns for the thread, with at least ID, Thread,
	// Seq, Time and Meta set (Root may be nil); its Seq is 0 when the
	// thread has no commits.
	Head Commit
}

// HeadsLister is implemented by backends that list a scope's threads with
// their heads in one query (satchel threads list, the inspector). Without
// it, callers call Threads, then Head for each thread. ThreadHeads lists
// the threads as Threads does, by name.
type HeadsLister interface {
	ThreadHeads(ctx context.Context, scope string) ([]ThreadHead, error)
}

// ScopeDocs is the documents of one scope.
type ScopeDocs struct {
	// Scope is "" for the shared stores' documents.
	Scope string
	// Store is the store whose documents these are. A DocCounter that
	// counts a scope's stores together leaves it "": the documents of
	// that scope are then counted for no caller that may read some
	// stores only (an agent's view, Store.ScopeUsageAs).
	Store string
	// Docs counts the current documents, expired ones not yet swept
	// included.
	Docs int64
	// Updated is the newest of their update times.
	Updated time.Time
}

// DocCounter is implemented by Documents backends that count the
// documents of every scope in one pass (satchel scopes, scope purge's
// report). DocsByScope lists the scopes that hold documents, one entry
// for each store of each, by scope then store.
// Without it, the documents of a scope are not counted.
type DocCounter interface {
	DocsByScope(ctx context.Context) ([]ScopeDocs, error)
}

// Remote is implemented by backends whose every call is a round trip to a
// server (PostgreSQL). On them the engine chains a commit to one of its
// thread still in flight whatever the chained commit stores again of its
// parents' changes (up to a bound): a round trip saved pays for it.
// Without it (an embedded database, whose Append is the writer's own work
// of microseconds) a commit is chained only while it stores again little
// of its parents' changes, as when each rewrites the same file
// (docs/decisions/0095-chains-that-pay.md).
type Remote interface {
	// Remote does nothing: implementing it is the declaration.
	Remote()
}

// ConcurrentAppender is implemented by backends that store several
// Appends at once to advantage: a server that runs transactions side by
// side on a pool of connections (PostgreSQL). AppendConcurrency is how
// many batches of commits the engine keeps in flight at once, each still
// a group commit of the mutations that queued while the others were being
// stored. Without it the engine sends one batch at a time, which is right
// for a database with a single writer (SQLite) and for one that stores a
// batch in memory in microseconds. Correctness never depends on it: each
// entry is compare-and-swapped on its own, and entries of concurrent
// batches for one thread are ordered by that compare-and-swap.
type ConcurrentAppender interface {
	AppendConcurrency() int
}

// Keys is implemented by backends that keep idempotency keys and the log
// of document changes (all of satchel's). A key is claimed in the
// transaction of the write it names: NewCommit.Key in Append, and
// DocChange.Key in ReplaceDoc (DocReplace.Change) and DeleteDocAs. A claim
// of a key that is live in its scope and thread (claimed, and not expired by the
// backend's clock) fails that write alone with ErrKeyUsed and writes
// nothing of it; a claim of an expired key takes its place. Without the
// capability satchel refuses idempotency keys and lists no document
// changes in its audit (commits still record their actor).
type Keys interface {
	// KeyRecord returns the live record of a key in scope and thread (the
	// caller's thread's name, KeyClaim.Thread); ok is false when there is
	// none (never claimed there, or expired).
	KeyRecord(ctx context.Context, scope, thread, key string) (r KeyRecord, ok bool, err error)
	// ClaimKey claims a key for a call that wrote nothing (its Thread and
	// Seq are taken from c): ErrKeyUsed when it is live.
	ClaimKey(ctx context.Context, c KeyClaim, thread, seq int64) error
	// SweepKeys deletes the expired keys of every scope and returns how
	// many it deleted.
	SweepKeys(ctx context.Context) (int64, error)
	// DeleteDocAs is DeleteDoc that also, in the same transaction, claims
	// ch.Key and records ch in the log of document changes (when a
	// document was deleted; a claim is made either way).
	DeleteDocAs(ctx context.Context, id DocID, ch DocChange) (d Doc, ok bool, err error)
	// DocChanges lists the logged document changes, newest first, that
	// match q.
	DocChanges(ctx context.Context, q DocChangeQuery) ([]DocChangeEntry, error)
}

// ThreadLocker is implemented by backends shared by several processes that
// can make the writers of one thread wait for each other across processes
// (PostgreSQL, with an advisory lock). The engine takes the lock only for
// a thread whose commits lost their compare-and-swap to another process
// lately: a writer that waits costs nothing, one that loses the race has
// built its commit for nothing and builds it again on the winner's head
// (docs/decisions/0077-lock-for-contended-threads.md). The lock never
// decides what lands: the head's compare-and-swap still does, so a writer
// that does not take it (an older process, one that has not yet seen the
// thread contended) is refused as stale as before, and a lock lost with its
// connection only lets two writers race again.
//
// LockThread blocks until this process holds the thread's lock, then
// returns the thread's head as Head would return it, read once the lock is
// held (found is false for a thread without commits), the head's pack as
// Pack would return it unless the head's ID is known (the caller has it:
// its own last commit) or its pack is empty, and unlock, which
// the caller must call exactly once to release the lock. Only one holder
// at a time, in any process, holds a thread's lock; another LockThread of
// the thread waits until unlock. When ctx ends first it returns ctx.Err()
// and holds nothing. It returns ErrLockBusy at once, holding nothing, when
// the backend has no lock free to wait on (a bound on the connections it
// keeps for them), and ErrNoThread when the thread does not exist; on any
// error nothing is held. Without it every writer is optimistic.
type ThreadLocker interface {
	LockThread(ctx context.Context, thread, known int64) (head Commit, found bool, pack string, unlock func(), err error)
}

// HeadPackReader is implemented by backends whose every query is a network
// round trip (PostgreSQL): HeadPack is Head, and in the same round trip
// the head's pack as Pack would return it, unless the head is commit known
// (whose pack the caller has) or its pack is empty. A reader of a thread
// that another process wrote needs the new head's pack first (its root is
// there), so this saves the round trip of each such read; a thread only
// this process writes costs nothing more (its head is the one known).
type HeadPackReader interface {
	HeadPack(ctx context.Context, thread, known int64) (head Commit, found bool, pack string, err error)
}

// PoolReporter is implemented by backends that reach their server through
// a pool of connections (PostgreSQL). Its figures tell an operator whether
// a process waits for connections, and so whether its pool is too small
// for its distance to the server; `satchel serve --http` exports them at
// /metrics.
type PoolReporter interface {
	PoolStats() PoolStats
}

// PoolStats is a pool's state now and its counts since it was opened.
type PoolStats struct {
	// Max bounds the connections; InUse are taken now; Idle are open and
	// free.
	Max, InUse, Idle int32
	// Acquires counts the connections taken; Waits those of them taken
	// after waiting, none being free; Waited is the time Waits waited,
	// in all.
	Acquires, Waits int64
	Waited          time.Duration
}

// ChangeWatcher is implemented by backends that can tell a process, soon
// after it lands, that a commit or a document write was made, by this
// process or another on the same database: memory in process, SQLite by
// polling its WAL index or data_version (a read of a counter, every
// ChangePollInterval) and in process, PostgreSQL with LISTEN and a
// NOTIFY each write sends once it has committed. WatchChanges starts
// watching and returns; from then until ctx ends it calls changed, from
// goroutines of its own, soon after each change: with the change's scope
// when the backend knows it, else "" (some scope changed). Calls may be
// merged and may come without a change (after a lost connection, say);
// changed must return quickly. The store's change feed (Store.Watch)
// reads what changed from the store itself, so a signal is all it needs.
// Without it the feed polls every watched scope every
// ChangePollInterval.
type ChangeWatcher interface {
	WatchChanges(ctx context.Context, changed func(scope string)) error
}

// ChangePollInterval is how often a change is looked for where nothing
// signals it: SQLite's data_version, and the store's feed on a backend
// without ChangeWatcher.
const ChangePollInterval = 100 * time.Millisecond

// GitCommit is one entry of a thread's git map (package gitrepo): the git
// commit that satchel commit Seq of the thread maps to.
type GitCommit struct {
	Seq int64
	// Root is the sequence number of the thread's oldest retained commit
	// when the entry was made: the mapping's root, on which every hash
	// after it depends.
	Root int64
	// Hash and Tree are the git commit's hash and its tree's, in hex.
	Hash, Tree string
}

// GitTree is a git tree object of a thread's git map: its hash in hex
// and its content (the object without git's header).
type GitTree struct {
	Hash   string
	Object []byte
}

// GitMapper is implemented by backends that keep the map of satchel
// commits to git commits (all of satchel's), so that a process that did
// not map a thread itself serves a fetch of N new commits in proportion to
// N and to the files they changed: it finds the hashes of the commits the
// client has, and starts the new commits' trees from the stored tree of
// the last one, reading only the directories they change
// (docs/decisions/0147-git-map-stored.md). The map is a cache of what
// gitrepo computes from the history: every entry can be computed again.
// It is deleted with its thread. Without it gitrepo maps a thread from its
// oldest retained commit in every process that serves it.
type GitMapper interface {
	// PutGitMap stores the entries of thread (an entry replaces the one of
	// its Seq) and the tree objects (by hash: a tree already stored is
	// kept), in one transaction. A thread that does not exist (deleted
	// since) stores nothing and is no error.
	PutGitMap(ctx context.Context, thread int64, commits []GitCommit, trees []GitTree) error
	// GitLast returns the entry of thread with the greatest Seq; ok is
	// false when it has none.
	GitLast(ctx context.Context, thread int64) (c GitCommit, ok bool, err error)
	// GitCommits returns the entries of thread whose Seq is one of seqs or
	// whose Hash is one of hashes, in Seq order.
	GitCommits(ctx context.Context, thread int64, seqs []int64, hashes []string) ([]GitCommit, error)
	// GitTrees returns the stored tree objects of thread among hashes, by
	// hash; a hash not stored is absent.
	GitTrees(ctx context.Context, thread int64, hashes []string) (map[string][]byte, error)
}
