package sqlite

import (
	"sync"

	"github.com/satchel-dev/satchel/backend"
)

// readHeads keeps the heads Head read, each valid while the WAL index's
// header (walindex_unix.go) is the one read before the query that found
// it: while that header stands, nothing has been committed to the
// database by any connection of any process, so the head is still the
// newest commit. A Head that finds the header unchanged answers from
// here without a query; the query's read transaction was most of a
// read's cost in the server (decision 0090).
//
// Why it holds: the header is read before the query, and the query's
// read transaction begins after, at that header or a later one; so the
// head it finds is at least as new as the header. When a later Head
// reads the same header again, no commit came between the two reads,
// and the head found in between is the newest. A header that two
// goroutines read at different times is kept by the last to store: an
// older one is then never seen again (a commit never takes the header
// back), so its heads are dropped unused.
type readHeads struct {
	idx *walIndex

	mu    sync.Mutex
	hdr   walHeader
	heads map[int64]backend.Commit
}

// maxReadHeads bounds the heads kept for one header; beyond it they are
// forgotten and kept again from the next read on.
const maxReadHeads = 4096

// current returns the header to read under, and false when none can be
// trusted (every read then asks SQLite).
func (r *readHeads) current() (walHeader, bool) {
	if r.idx == nil {
		return walHeader{}, false
	}
	return r.idx.header()
}

// get returns the head of thread kept under hdr.
func (r *readHeads) get(hdr walHeader, thread int64) (backend.Commit, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.hdr != hdr || r.heads == nil {
		return backend.Commit{}, false
	}
	c, ok := r.heads[thread]
	return c, ok
}

// put keeps c, a head that a query begun after hdr was read found.
func (r *readHeads) put(hdr walHeader, c backend.Commit) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.hdr != hdr || r.heads == nil || len(r.heads) >= maxReadHeads {
		r.hdr = hdr
		r.heads = make(map[int64]backend.Commit)
	}
	r.heads[c.Thread] = c
}
