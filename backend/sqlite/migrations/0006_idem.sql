-- satchel's SQLite schema, version 4: idempotency keys and the log of
-- document changes (docs/decisions/0054-idempotency-key-table.md).
--
-- A key is claimed by an upsert in the transaction of the write it names:
-- it inserts the key, or takes the place of an expired one, or does
-- nothing when the key is live (the write is then refused). thread_id and
-- seq are the commit the write stored (thread_id 0 and the version for a
-- document change). Times are unix nanoseconds.
CREATE TABLE idem_keys (
	scope     TEXT    NOT NULL,
	key       TEXT    NOT NULL,
	hash      BLOB    NOT NULL,
	result    BLOB    NOT NULL,
	thread_id INTEGER NOT NULL,
	seq       INTEGER NOT NULL,
	time      INTEGER NOT NULL,
	expires   INTEGER NOT NULL,
	PRIMARY KEY (scope, key)
) WITHOUT ROWID;

CREATE INDEX idem_keys_expires ON idem_keys (expires);

-- One row per document set or remove: who made it (meta, JSON), never the
-- document. scope is the caller's (a shared store's documents are kept
-- under scope '').
CREATE TABLE doc_changes (
	id      INTEGER PRIMARY KEY,
	time    INTEGER NOT NULL,
	store   TEXT    NOT NULL,
	scope   TEXT    NOT NULL,
	key     TEXT    NOT NULL,
	version INTEGER NOT NULL,
	op      TEXT    NOT NULL,
	meta    BLOB    NOT NULL
);

CREATE INDEX doc_changes_scope ON doc_changes (scope, id);
