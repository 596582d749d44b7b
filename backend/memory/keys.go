package memory

import (
	"context"
	"slices"
	"time"

	"github.com/satchel-dev/satchel/backend"
)

var _ backend.Keys = (*Backend)(nil)

// keyStore holds idempotency keys and the log of document changes. Its
// lock is taken last, inside the commits' or the documents' lock, so that
// a key is claimed in the same critical section as its write.
type keyStore struct {
	keys    map[keyName]backend.KeyRecord
	changes []backend.DocChangeEntry // oldest first
	nextID  int64
}

// keyName is a key in its scope and thread.
type keyName struct{ scope, thread, key string }

// live reports whether a key is claimed and not expired at now.
func (s *keyStore) live(scope, thread, key string, now time.Time) (backend.KeyRecord, bool) {
	r, ok := s.keys[keyName{scope, thread, key}]
	if !ok || !r.Expires.After(now) {
		return backend.KeyRecord{}, false
	}
	return r, true
}

func (s *keyStore) claim(c *backend.KeyClaim, thread, seq int64, now time.Time) {
	if s.keys == nil {
		s.keys = map[keyName]backend.KeyRecord{}
	}
	s.keys[keyName{c.Scope, c.Thread, c.Key}] = backend.KeyRecord{
		Hash: slices.Clone(c.Hash), Result: slices.Clone(c.Result),
		Thread: thread, Seq: seq, Time: now, Expires: now.Add(c.TTL),
	}
}

func (s *keyStore) log(ch *backend.DocChange, id backend.DocID, version int64, now time.Time) {
	s.nextID++
	s.changes = append(s.changes, backend.DocChangeEntry{
		ID: s.nextID, Time: now, Store: id.Store, Scope: ch.Scope, Key: id.Key,
		Version: version, Op: ch.Op, Meta: slices.Clone(ch.Meta),
	})
}

func (b *Backend) KeyRecord(ctx context.Context, scope, thread, key string) (backend.KeyRecord, bool, error) {
	b.keysMu.Lock()
	defer b.keysMu.Unlock()
	r, ok := b.keys.live(scope, thread, key, b.now())
	return r, ok, nil
}

func (b *Backend) ClaimKey(ctx context.Context, c backend.KeyClaim, thread, seq int64) error {
	b.keysMu.Lock()
	defer b.keysMu.Unlock()
	now := b.now()
	if _, ok := b.keys.live(c.Scope, c.Thread, c.Key, now); ok {
		return backend.ErrKeyUsed
	}
	b.keys.claim(&c, thread, seq, now)
	return nil
}

func (b *Backend) SweepKeys(ctx context.Context) (int64, error) {
	b.keysMu.Lock()
	defer b.keysMu.Unlock()
	now := b.now()
	var n int64
	for k, r := range b.keys.keys {
		if !r.Expires.After(now) {
			delete(b.keys.keys, k)
			n++
		}
	}
	return n, nil
}

func (b *Backend) DocChanges(ctx context.Context, q backend.DocChangeQuery) ([]backend.DocChangeEntry, error) {
	b.keysMu.Lock()
	defer b.keysMu.Unlock()
	var out []backend.DocChangeEntry
	for i := len(b.keys.changes) - 1; i >= 0; i-- {
		e := b.keys.changes[i]
		if q.Before > 0 && e.ID >= q.Before || q.Scope != "" && e.Scope != q.Scope {
			continue
		}
		if !q.Since.IsZero() && e.Time.Before(q.Since) {
			break
		}
		e.Meta = slices.Clone(e.Meta)
		out = append(out, e)
		if q.Limit > 0 && len(out) == q.Limit {
			break
		}
	}
	return out, nil
}

func (b *Backend) DeleteDocAs(ctx context.Context, id backend.DocID, ch backend.DocChange) (backend.Doc, bool, error) {
	defer b.changed.Notify("")
	return b.deleteDoc(id, &ch)
}
