-- satchel's SQLite schema, version 2: the documents of collections.
--
-- One table for the current versions of every store's documents, one for
-- their previous versions. A set is one transaction that touches few
-- pages: the row of docs (appended at a growing rowid for a new key,
-- rewritten in place for an update) and its entry in the (store, scope,
-- key) index; an update also appends one history row. Expression indexes
-- for a store's "indexes" are partial indexes on docs (WHERE store =
-- '<name>'), created at run time by EnsureIndexes
-- (docs/decisions/0008-collections-storage.md).

CREATE TABLE docs (
	id      INTEGER PRIMARY KEY,
	store   TEXT    NOT NULL,
	scope   TEXT    NOT NULL, -- '' for a shared store
	key     TEXT    NOT NULL,
	version INTEGER NOT NULL,
	updated INTEGER NOT NULL, -- unix nanoseconds
	expires INTEGER,          -- unix nanoseconds; NULL: never
	doc     TEXT    NOT NULL, -- JSON, normalized
	UNIQUE (store, scope, key)
);

-- Only documents that expire are in it, so that sets of stores without a
-- ttl never touch it.
CREATE INDEX docs_expires ON docs (expires) WHERE expires IS NOT NULL;

CREATE TABLE doc_history (
	id      INTEGER PRIMARY KEY,
	store   TEXT    NOT NULL,
	scope   TEXT    NOT NULL,
	key     TEXT    NOT NULL,
	version INTEGER NOT NULL,
	updated INTEGER NOT NULL,
	doc     TEXT    NOT NULL,
	UNIQUE (store, scope, key, version)
);
