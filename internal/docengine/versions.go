package docengine

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/satchel-dev/satchel/backend"
)

// The rules of a document's versions (DESIGN §3), written once above the
// backends, which store what these functions decide (backend.Documents):
//
//   - a set of a key with no current version stores version 1;
//   - a set that replaces a current version stores the next version and
//     moves the old one into the history, which keeps the store's
//     history.versions newest entries;
//   - an expired document counts as absent, for every read and for a
//     set: its version restarts at 1 and its history goes with it;
//   - a remove of an expired document removes it, and reports that there
//     was none.

// maxSetAttempts bounds the replacements one set tries: each failed one
// lost to a set or remove of the same key that succeeded.
const maxSetAttempts = 1000

// put stores r (its document, TTL and identity) under the rules above
// and returns the stored version. The first attempt replaces the version
// this process last stored for the key (hints) or, without one, assumes a
// new key; a backend that refuses it returns the current version, from
// which the next attempt is decided, without a read of its own.
func put(ctx context.Context, db replacer, hints *versionHints, r backend.DocReplace, versions int) (backend.Doc, error) {
	r = replacing(r, backend.Doc{Version: hints.get(r.DocID)}, versions)
	for range maxSetAttempts {
		d, err := db.ReplaceDoc(ctx, r)
		if err == nil {
			hints.put(r.DocID, d)
		}
		if !errors.Is(err, backend.ErrDocChanged) {
			return d, err
		}
		if err := ctx.Err(); err != nil {
			return backend.Doc{}, err
		}
		r = replacing(r, d, versions)
	}
	return backend.Doc{}, fmt.Errorf("set %s: the document kept changing during %d attempts", r.Key, maxSetAttempts)
}

// replacer stores one conditional replacement: a backend's
// Documents, or the committer that batches them (committer.go).
type replacer interface {
	ReplaceDoc(ctx context.Context, r backend.DocReplace) (backend.Doc, error)
}

// versionHints remembers the version this process last stored for a key,
// so that a set of a key it set before replaces it in one attempt (what a
// backend refuses when another writer came between costs one more). Only
// versions without an expiry are remembered: one that expires becomes
// absent without a change of version. The map is bounded: when full, it
// starts again empty.
type versionHints struct {
	mu sync.Mutex
	m  map[backend.DocID]int64
}

const maxVersionHints = 1 << 16

func (h *versionHints) get(id backend.DocID) int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.m[id]
}

func (h *versionHints) put(id backend.DocID, d backend.Doc) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !d.Expires.IsZero() {
		delete(h.m, id)
		return
	}
	if h.m == nil || len(h.m) >= maxVersionHints {
		h.m = make(map[backend.DocID]int64)
	}
	h.m[id] = d.Version
}

func (h *versionHints) forget(id backend.DocID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.m, id)
}

// replacing returns r made to replace cur, the current version (Version 0:
// none), in a store that keeps versions previous versions.
func replacing(r backend.DocReplace, cur backend.Doc, versions int) backend.DocReplace {
	r.Expect = cur.Version
	switch {
	case cur.Version == 0 || cur.Expired:
		// Absent, or as good as absent: version 1, no history.
		r.Version, r.Archive, r.Keep, r.Live = 1, false, 0, false
	default:
		// Only while it has not expired meanwhile.
		r.Version, r.Archive, r.Keep, r.Live = cur.Version+1, versions > 0, versions, true
	}
	return r
}

// visible reports whether a current version a read found counts as
// present: not expired, unless an operator asked for expired ones too.
func visible(d backend.Doc, includeExpired bool) bool { return includeExpired || !d.Expired }
