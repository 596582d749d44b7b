package backend

import (
	"errors"
	"time"
)

// ErrKeyUsed is returned (as an entry's AppendResult.Err, or by ReplaceDoc,
// DeleteDocAs and ClaimKey) when a write claims an idempotency key that is
// live in its scope and thread: nothing of that write was stored. The caller reads the
// key's record (Keys.KeyRecord) and answers from it.
var ErrKeyUsed = errors.New("backend: idempotency key used")

// KeyClaim is an idempotency key, claimed by the write that carries it in
// that write's transaction (see Keys).
type KeyClaim struct {
	Scope string
	// Thread is the name of the caller's thread ("" for a caller bound
	// to none): a key is claimed in its scope and thread, so that a key
	// claimed on one thread does not exist for another.
	Thread string
	Key    string
	// Hash identifies the call's arguments (opaque to the backend).
	Hash []byte
	// Result is what the caller keeps to answer a retry (opaque).
	Result []byte
	// TTL is how long the key stays live from now, by the backend's clock.
	TTL time.Duration
}

// KeyRecord is a claimed key: what its claim carried, and what the write
// stored (for a commit its thread and seq; for a document change thread
// 0 and the version).
type KeyRecord struct {
	Hash    []byte
	Result  []byte
	Thread  int64
	Seq     int64
	Time    time.Time
	Expires time.Time
}

// DocChange is what a change of a document records in the log of
// document changes (Keys): the caller's metadata (opaque JSON: who made
// it, through what) and, optionally, an idempotency key to claim.
type DocChange struct {
	// Op is "set" or "remove".
	Op string
	// Scope is the caller's scope (a shared store's documents are kept
	// under scope "").
	Scope string
	Meta  []byte
	Key   *KeyClaim
}

// DocChangeEntry is one logged document change.
type DocChangeEntry struct {
	// ID orders the entries: it grows with time.
	ID    int64
	Time  time.Time
	Store string
	// Scope is DocChange.Scope, the caller's.
	Scope   string
	Key     string
	Version int64
	Op      string
	Meta    []byte
}

// DocChangeQuery selects logged document changes: of one scope (Scope
// set; "" is every scope, shared stores included), since a time (zero:
// any), with ID < Before (0: from the newest), at most Limit (0: all).
type DocChangeQuery struct {
	Scope  string
	Since  time.Time
	Before int64
	Limit  int
}
