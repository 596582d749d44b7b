package satchel

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"time"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/internal/errs"
)

// Idempotency keys (docs/operations.md, decision 0054). A mutating call
// given IdempotencyKey(k) claims k in its scope and its caller's thread
// (decision 0115) in the same transaction as
// its change, with a hash of its arguments and what it returned. A retry
// with the same key and arguments within the retention finds the claim
// and returns the first call's result, changing nothing; the same key
// with other arguments is refused with ErrIdempotencyKeyReused. The keys
// live in a table of the backend (backend.Keys), not in commit metadata:
// they are per scope and caller's thread, across collections, and a
// lookup is one indexed read.

// DefaultIdempotencyRetention is how long a key is kept by default.
const DefaultIdempotencyRetention = 24 * time.Hour

// maxKeyLen bounds an idempotency key.
const maxKeyLen = 128

// IdempotencyKey makes a mutation of a Workspace (Write, Append,
// StrReplace, Delete, Move, Restore, Checkpoint, Fork) or of a Collection
// (Set, Remove) idempotent under key k: see the package's operations
// guide. Within a Batch it is ignored (a batch is one call of its own).
func IdempotencyKey(k string) WriteOption { return func(o *writeOpts) { o.key = k } }

// IdempotencyRetention sets how long idempotency keys are kept (default
// 24 hours): a retry after that applies again.
func IdempotencyRetention(d time.Duration) Option { return func(c *config) { c.keyTTL = d } }

// ValidIdempotencyKey reports whether k is a valid idempotency key: 1 to
// 128 printable ASCII characters, no spaces.
func ValidIdempotencyKey(k string) error {
	ok := len(k) >= 1 && len(k) <= maxKeyLen
	for i := 0; ok && i < len(k); i++ {
		ok = k[i] > ' ' && k[i] < 0x7f
	}
	if !ok {
		return errs.New(errs.ErrInvalidArgument, "invalid idempotency key %q: must be 1 to %d printable ASCII characters without spaces", k, maxKeyLen)
	}
	return nil
}

// keyReused is the refusal of a key given again with other arguments.
func keyReused(k string) error {
	return errs.New(errs.ErrKeyReused, "idempotency key %s was already used with different arguments", k)
}

// keyCall is one call under an idempotency key.
type keyCall struct {
	key    string
	thread string // the caller's thread: the key's namespace within its scope
	hash   []byte
	result []byte // what the call returns besides its commit (set by the call)

	// replayed is the record of the first call when this one is a retry.
	replayed *backend.KeyRecord
}

// argHash hashes a call's arguments: each is length-prefixed, so that no
// two lists of arguments give the same bytes.
func argHash(args ...string) []byte {
	h := sha256.New()
	var n [8]byte
	for _, a := range args {
		binary.BigEndian.PutUint64(n[:], uint64(len(a)))
		h.Write(n[:])
		h.Write([]byte(a))
	}
	return h.Sum(nil)
}

func boolArg(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// keys returns the backend's store of keys, or the refusal of a key
// without one.
func (s *Store) keys() (backend.Keys, error) {
	k, ok := backend.As[backend.Keys](s.b)
	if !ok {
		return nil, errs.New(errs.ErrInvalidArgument, "this backend keeps no idempotency keys")
	}
	return k, nil
}

func (s *Store) keyTTL() time.Duration {
	if s.keyRetention > 0 {
		return s.keyRetention
	}
	return DefaultIdempotencyRetention
}

// newKeyCall starts a call under o's key (nil without one) by a caller on
// thread ("" for a caller bound to none), hashing the scope, the
// operation and its arguments.
func (s *Store) newKeyCall(o writeOpts, scope, thread, op string, args ...string) (*keyCall, error) {
	if o.key == "" {
		return nil, nil
	}
	if err := ValidIdempotencyKey(o.key); err != nil {
		return nil, err
	}
	if _, err := s.keys(); err != nil {
		return nil, err
	}
	all := append([]string{scope, op, o.ifHash, boolArg(o.overwrite), o.checkpoint}, args...)
	return &keyCall{key: o.key, thread: thread, hash: argHash(all...)}, nil
}

// claim is the claim of k's key in scope and k's thread.
func (k *keyCall) claim(s *Store, scope string) *backend.KeyClaim {
	if k == nil {
		return nil
	}
	return &backend.KeyClaim{Scope: scope, Thread: k.thread, Key: k.key, Hash: k.hash, Result: k.result, TTL: s.keyTTL()}
}

// lookup reads the key's record: found and the same arguments, the call
// is a retry (k.replayed is set); other arguments, it is refused.
func (k *keyCall) lookup(ctx context.Context, s *Store, scope string) (bool, error) {
	ks, err := s.keys()
	if err != nil {
		return false, err
	}
	rec, ok, err := ks.KeyRecord(ctx, scope, k.thread, k.key)
	if err != nil || !ok {
		return false, err
	}
	if string(rec.Hash) != string(k.hash) {
		return false, keyReused(k.key)
	}
	k.replayed = &rec
	return true, nil
}

// claimAlone claims the key of a call that wrote nothing (thread and seq
// name what it returned). A key claimed meanwhile by another call is
// looked up again: a retry of the same call, or a refusal.
func (k *keyCall) claimAlone(ctx context.Context, s *Store, scope string, thread, seq int64) error {
	ks, err := s.keys()
	if err != nil {
		return err
	}
	err = ks.ClaimKey(ctx, *k.claim(s, scope), thread, seq)
	if errors.Is(err, backend.ErrKeyUsed) {
		if ok, err := k.lookup(ctx, s, scope); err != nil || ok {
			return err
		}
		return errs.New(errs.ErrConflict, "conflict: idempotency key %s was claimed and released meanwhile; try again", k.key)
	}
	return err
}

// maxKeyAttempts bounds how often a keyed call looks its key up again
// after losing its claim to another call.
const maxKeyAttempts = 3

// replayCommit reports the commit of a replayed call to the Committed
// option: the commit its record names (as far as it is still retained).
func (w *Workspace) replayCommit(ctx context.Context, rec *backend.KeyRecord, o writeOpts) error {
	if o.report == nil {
		return nil
	}
	c := Commit{Seq: rec.Seq, Time: rec.Time}
	if rec.Thread != 0 {
		bc, err := w.s.eng.CommitAt(ctx, rec.Thread, rec.Seq)
		switch {
		case err == nil:
			c = w.s.commitOf(bc, nil)
		case !errors.Is(err, backend.ErrNoCommit) && !errors.Is(err, backend.ErrNoThread):
			return err
		}
	}
	*o.report = c
	return nil
}

// SweepIdempotencyKeys deletes the expired idempotency keys of every scope
// and returns how many it deleted (GC runs it; expired keys are ignored
// until then).
func (s *Store) SweepIdempotencyKeys(ctx context.Context) (int64, error) {
	ks, ok := backend.As[backend.Keys](s.b)
	if !ok {
		return 0, nil
	}
	return ks.SweepKeys(ctx)
}
