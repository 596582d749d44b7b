// Package docengine is the document engine: what package internal/engine
// is for files, it is for the documents of collections. It owns the rules
// of a document's versions, history and expiry (versions.go), the group
// commit of concurrent sets (committer.go) and the fallbacks for a
// backend without a capability (backend.DocBatcher, backend.DocMaps,
// backend.Keys), over the storage contract alone. Package satchel's
// collections call it, not backend.Documents; what they ask it is already
// validated and keyed (package collection).
package docengine

import (
	"context"
	"sync"

	"github.com/satchel-dev/satchel/backend"
)

// Engine stores the documents of one store. Its zero value is ready for
// Init.
type Engine struct {
	once   sync.Once
	db     backend.Documents
	keys   backend.Keys // nil: no idempotency keys, no log of changes
	maps   bool         // the backend keeps documents as maps (backend.DocMaps)
	commit committer
	hints  versionHints
}

// Init binds the engine to the documents of b, db (found with
// backend.As[backend.Documents]); the capabilities are looked up on b,
// so that a wrapper that hides one is obeyed. Later calls do nothing.
func (e *Engine) Init(b backend.Backend, db backend.Documents) {
	e.once.Do(func() {
		e.db = db
		e.keys, _ = backend.As[backend.Keys](b)
		_, e.maps = backend.As[backend.DocMaps](b)
		e.commit.init(b, db)
	})
}

// Maps reports whether the backend keeps documents as Go maps
// (backend.DocMaps): a replacement then carries no JSON, and reads return
// Doc.Map.
func (e *Engine) Maps() bool { return e.maps }

// Logs reports whether the backend keeps idempotency keys and the log of
// document changes (backend.Keys).
func (e *Engine) Logs() bool { return e.keys != nil }

// Begin and End bracket a set in progress, from its validation to its
// result, so that a leader of the group commit knows who is about to
// queue.
func (e *Engine) Begin() { e.commit.begin() }

// End: see Begin.
func (e *Engine) End() { e.commit.end() }

// Put stores r (its document, TTL and identity) under the rules of
// versions.go, in the group commit, and returns the stored version; a
// store keeps versions previous versions in a document's history.
func (e *Engine) Put(ctx context.Context, r backend.DocReplace, versions int) (backend.Doc, error) {
	return put(ctx, &e.commit, &e.hints, r, versions)
}

// Get returns the current version of a document and, with history, its
// previous versions, newest first. ok is false when there is none, or
// when it has expired and includeExpired is false: an expired document
// counts as absent.
func (e *Engine) Get(ctx context.Context, id backend.DocID, history, includeExpired bool) (d backend.Doc, h []backend.Doc, ok bool, err error) {
	d, h, ok, err = e.db.GetDoc(ctx, id, history)
	if err != nil || !ok || !visible(d, includeExpired) {
		return backend.Doc{}, nil, false, err
	}
	return d, h, true, nil
}

// Query returns the documents that match q (expired ones only with
// q.IncludeExpired).
func (e *Engine) Query(ctx context.Context, q backend.DocQuery) ([]backend.Doc, error) {
	return e.db.QueryDocs(ctx, q)
}

// Remove deletes a document and its history and reports whether there was
// one: a remove of an expired document removes it, and reports that there
// was none. With ch (the change, with its idempotency key, when Logs) the
// key is claimed and the change logged in the same transaction;
// backend.ErrKeyUsed is returned when the key is live.
func (e *Engine) Remove(ctx context.Context, id backend.DocID, ch *backend.DocChange) (bool, error) {
	e.hints.forget(id)
	var d backend.Doc
	var ok bool
	var err error
	if e.keys != nil && ch != nil {
		d, ok, err = e.keys.DeleteDocAs(ctx, id, *ch)
	} else {
		d, ok, err = e.db.DeleteDoc(ctx, id)
	}
	return ok && visible(d, false), err
}

// Forget drops what the engine remembers of a document's version: a
// writer outside it (an import) replaced or removed it.
func (e *Engine) Forget(id backend.DocID) { e.hints.forget(id) }

// SweepExpired deletes the expired documents of every store and returns
// how many it deleted.
func (e *Engine) SweepExpired(ctx context.Context) (int64, error) {
	return e.db.SweepExpired(ctx)
}

// EnsureIndexes creates the indexes of a store's definition that the
// backend lacks.
func (e *Engine) EnsureIndexes(ctx context.Context, store string, ixs []backend.DocIndex) error {
	return e.db.EnsureIndexes(ctx, store, ixs)
}

// Queued returns how many sets wait in the group commit, for tests that
// watch it.
func (e *Engine) Queued() int {
	e.commit.mu.Lock()
	defer e.commit.mu.Unlock()
	return len(e.commit.queue)
}
