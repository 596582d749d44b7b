package backend

import (
	"context"
	"time"
)

// Porter is implemented by backends that can take back exactly what an
// export of another store holds (satchel's Export and Import): the times
// that would otherwise come from the backend's clock, and documents with
// their versions as they were. satchel's Import refuses a file it could
// not restore exactly on a backend without it.
type Porter interface {
	// SetCommitTime sets the time of a retained commit (ErrNoCommit when
	// it is not retained).
	SetCommitTime(ctx context.Context, thread, seq int64, t time.Time) error
	// SetThreadCreated sets when a thread was created (ErrNoThread).
	SetThreadCreated(ctx context.Context, thread int64, t time.Time) error
	// PutDocVersions replaces a document and its history with versions,
	// stored as given: versions[0] is the current version (its Version,
	// Updated and Expires kept), the rest its history, newest first. Each
	// Doc carries both JSON and Map (the DocMaps backends keep Map).
	// versions must not be empty.
	PutDocVersions(ctx context.Context, id DocID, versions []Doc) error
	// DocScopes lists the scopes that hold documents of store (expired
	// ones included), in byte order; "" stands for a shared store's one
	// collection.
	DocScopes(ctx context.Context, store string) ([]string, error)
	// DocStores lists the stores that hold documents (expired ones
	// included), in byte order, so an export holds every document whether
	// or not a project defines its store.
	DocStores(ctx context.Context) ([]string, error)
}
