package backend

import (
	"context"
	"errors"
	"time"
)

// ErrDocChanged is returned by ReplaceDoc when the document's current
// version is not the one the replacement expects: another writer set or
// removed it first. Nothing was written; the caller decides again from the
// current version that ReplaceDoc returns with it.
var ErrDocChanged = errors.New("backend: document changed")

// Documents is the storage of collections (DESIGN §1.2, §3): per store and
// scope, JSON documents by key, each with a version, an optional expiry and
// its previous versions. A backend that implements it, next to Backend,
// gives satchel's collections.
//
// Like the rest of the contract it is dumb: it stores and filters, and
// package satchel decides. Documents arrive validated, normalized and
// keyed, and the rules of versions, history and expiry (the next version
// number, how many previous versions a store keeps, that an expired
// document counts as absent and its version restarts at 1) are applied
// above, once (internal/docengine); a backend offers a conditional replace,
// history append and trim, delete, and scans filtered by its clock. A
// backend never parses the query language either: SQL backends receive
// the WHERE and ORDER BY of a query already compiled, with its values as
// bound arguments (DocQuery.SQL), and a backend that evaluates in Go
// receives the predicate and the order (DocQuery.Match, Compare).
//
// The backend's clock (Now; ClockSetter) stamps and expires documents, so
// that every process sharing a database agrees on what has expired.
//
// Shared stores keep one collection for every scope: callers pass scope
// "" for them (no scope name is empty).
type Documents interface {
	// ReplaceDoc stores r as the current version of its document if the
	// current version is r.Expect (0: there is none) and, with r.Live, has
	// not expired, in one transaction:
	// with r.Archive the replaced version moves into the history; the
	// history then keeps only the versions from r.Version-r.Keep to
	// r.Version-1; the new version is r.Version, with Updated = now and,
	// when r.TTL > 0, Expires = now + TTL, now read from the backend's
	// clock. Otherwise nothing is written and ReplaceDoc
	// returns ErrDocChanged with the current version's Key,
	// Version (0 when there is none), Updated, Expires and Expired.
	ReplaceDoc(ctx context.Context, r DocReplace) (Doc, error)
	// GetDoc returns the current version of a document, expired or not
	// (Doc.Expired says which, by the backend's clock); ok is false when
	// there is none. With history, h holds its previous versions below
	// the current one, newest first, read in the same snapshot.
	GetDoc(ctx context.Context, id DocID, history bool) (d Doc, h []Doc, ok bool, err error)
	// QueryDocs returns at most q.Limit documents of a store and scope that
	// match the query, in its order, leaving out the expired ones unless
	// q.IncludeExpired (see DocQuery).
	QueryDocs(ctx context.Context, q DocQuery) ([]Doc, error)
	// DeleteDoc deletes a document and its history, and returns the
	// version it deleted (with Expired); ok is false when there was none.
	DeleteDoc(ctx context.Context, id DocID) (d Doc, ok bool, err error)
	// SweepExpired deletes every document (of every store and scope) whose
	// expiry is at or before the backend's clock, with its history, and
	// returns how many it deleted.
	SweepExpired(ctx context.Context) (int64, error)
	// EnsureIndexes makes queries of store on the fields of indexes use an
	// index: SQL backends create the expression indexes (and drop those of
	// the store that are no longer asked for), the memory backend builds
	// maps by value. It is idempotent, and safe to call from several
	// processes at once.
	EnsureIndexes(ctx context.Context, store string, indexes []DocIndex) error
}

// DocID names one document.
type DocID struct {
	Store string
	// Scope is the partition: "" for a shared store.
	Scope string
	Key   string
}

// Doc is one stored version of a document.
type Doc struct {
	Key     string
	Version int64
	// Updated is when this version was put, by the backend's clock.
	Updated time.Time
	// Expires is when it expires; the zero time means never. History
	// entries have no expiry.
	Expires time.Time
	// Expired reports, on a current version a read returns, whether its
	// expiry is at or before the backend's clock.
	Expired bool
	// JSON is the document as stored (DocReplace.JSON).
	JSON []byte
	// Map is the document as stored (DocReplace.Doc), returned instead of
	// JSON by a backend that keeps maps (DocMaps). Callers must not
	// modify it.
	Map map[string]any
}

// DocMaps is implemented by a Documents backend that keeps documents as
// Go maps, like the memory backend: ReplaceDoc then receives JSON nil,
// and reads return Doc.Map instead of Doc.JSON. It spares such a backend
// an encoding per set, which would otherwise be most of its cost.
type DocMaps interface {
	Documents
	// KeepsDocMaps does nothing: its presence says the backend keeps maps.
	KeepsDocMaps()
}

// DocReplace is a conditional replacement of a document's current version
// (ReplaceDoc).
type DocReplace struct {
	DocID
	// Doc is the normalized document and JSON its encoding, the bytes
	// that reads return (nil for a backend that keeps maps, DocMaps). Doc
	// is owned by the backend once passed (the caller keeps no reference
	// to it): the memory backend keeps it to evaluate queries.
	Doc  map[string]any
	JSON []byte
	// TTL is the document's time to live from now; 0 means never.
	TTL time.Duration
	// Version is the new version's number.
	Version int64
	// Expect is the version that must be current (0: none may be).
	Expect int64
	// Live also requires the expected version not to have expired, by
	// the backend's clock.
	Live bool
	// Archive moves the replaced version into the history.
	Archive bool
	// Keep bounds the history: afterwards it holds only the versions from
	// Version-Keep to Version-1 (Keep 0: none).
	Keep int
	// Change, when set, is recorded in the log of document changes, and
	// its key claimed, in the same transaction as the replacement (only
	// for backends that implement Keys; ErrKeyUsed when the key is live).
	Change *DocChange
}

// DocQuery is one page of a query (or a list, which is a query with no
// conditions in key order), compiled twice: to SQL and to Go.
type DocQuery struct {
	Store string
	// Scope is the partition: "" for a shared store.
	Scope string
	// Limit is the most documents to return.
	Limit int
	// IncludeExpired returns expired documents too (operators only).
	IncludeExpired bool

	// SQL returns, for the dialect ("sqlite" or "postgres") and the
	// backend's JSON and key columns, the WHERE expression (the query and
	// the position after the cursor), the ORDER BY list and the arguments
	// of the WHERE's placeholders, numbered from argStart in Postgres. The
	// backend adds its own conditions (store, scope, expiry) and LIMIT.
	SQL func(dialect, jsonCol, keyCol string, argStart int) (where, orderBy string, args []any)

	// Match reports whether a document matches and comes after the
	// cursor; Compare orders two documents (negative when a comes first).
	// A backend that evaluates in Go keeps the documents that Match, in
	// Compare's order, the first Limit of them.
	Match   func(key string, doc map[string]any) bool
	Compare func(keyA string, docA map[string]any, keyB string, docB map[string]any) int

	// Hints that a Go backend may use to avoid a full scan; they never
	// change the result. Eq lists conditions on indexed fields that every
	// match satisfies (the field equals one of the values). KeyOrder is 1
	// when the order is by key ascending, -1 descending, 0 otherwise;
	// After is then the key the page starts after ("" on the first page).
	Eq       []DocEq
	KeyOrder int
	After    string
}

// DocEq says that a field (a dotted path) of every matching document
// equals one of Values: strings (datetimes in their normalized form),
// float64, bool, or nil for null or absent.
type DocEq struct {
	Field  string
	Values []any
}

// DocIndex is one index of a store.
type DocIndex struct {
	// Field is the field path ("company_id", "metadata.source").
	Field string
	// Expr returns the index expression for an SQL dialect ("sqlite" or
	// "postgres") and the backend's JSON column: exactly the expression
	// that DocQuery.SQL compares and sorts on.
	Expr func(dialect, jsonCol string) string
}
