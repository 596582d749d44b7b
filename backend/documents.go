package backend

import (
	"context"
	"time"
)

// Documents is the storage of collections (DESIGN §1.2, §3): per store and
// scope, JSON documents by key, each with a version, an optional expiry and
// its previous versions. A backend that implements it, next to Backend,
// gives satchel's collections.
//
// Like the rest of the contract it is dumb. Documents arrive validated,
// normalized and keyed (package satchel does that, written once in
// internal/docs); a backend never parses the query language: SQL backends
// receive the WHERE and ORDER BY of a query already compiled, with its
// values as bound arguments (DocQuery.SQL), and a backend that evaluates
// in Go receives the predicate and the order (DocQuery.Match, Compare).
// What a backend owns is the transaction of a set, expiry by its own clock,
// and indexes.
//
// Shared stores keep one collection for every scope: callers pass scope
// "" for them (no scope name is empty).
type Documents interface {
	// PutDoc stores a document, in one transaction: the current version
	// (if any, and not expired) moves into the history, the history keeps
	// the newest put.Versions entries, and the new version (one past the
	// old, or 1) becomes current, with Updated = now and, when put.TTL > 0,
	// Expires = now + TTL, now read from the backend's clock (Now). A
	// current document that has expired counts as absent: it is replaced
	// with its history, and the new one is version 1.
	PutDoc(ctx context.Context, put DocPut) (Doc, error)
	// GetDoc returns the current version of a document; ok is false when
	// there is none, or when it has expired and includeExpired is false.
	// With history, h holds its previous versions newest first, read in the
	// same snapshot.
	GetDoc(ctx context.Context, id DocID, history, includeExpired bool) (d Doc, h []Doc, ok bool, err error)
	// QueryDocs returns at most q.Limit documents of a store and scope that
	// match the query, in its order (see DocQuery).
	QueryDocs(ctx context.Context, q DocQuery) ([]Doc, error)
	// RemoveDoc deletes a document and its history; ok is false when there
	// was none (an expired document counts as none, and is deleted too).
	RemoveDoc(ctx context.Context, id DocID) (ok bool, err error)
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
	// JSON is the document as put (DocPut.JSON).
	JSON []byte
	// Map is the document as put (DocPut.Doc), returned instead of JSON
	// by a backend that keeps maps (DocMaps). Callers must not modify it.
	Map map[string]any
}

// DocMaps is implemented by a Documents backend that keeps documents as
// Go maps, like the memory backend: PutDoc then receives DocPut.JSON nil,
// and reads return Doc.Map instead of Doc.JSON. It spares such a backend
// an encoding per set, which would otherwise be most of its cost.
type DocMaps interface {
	Documents
	// KeepsDocMaps does nothing: its presence says the backend keeps maps.
	KeepsDocMaps()
}

// DocPut is a document to store.
type DocPut struct {
	DocID
	// Doc is the normalized document and JSON its encoding, the bytes
	// that reads return (nil for a backend that keeps maps, DocMaps). Doc
	// is owned by the backend once passed (the caller keeps no reference
	// to it): the memory backend keeps it to evaluate queries.
	Doc  map[string]any
	JSON []byte
	// TTL is the document's time to live from now; 0 means never.
	TTL time.Duration
	// Versions is how many previous versions the store keeps.
	Versions int
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
