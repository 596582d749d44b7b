-- satchel's PostgreSQL schema, version 4: idempotency keys and the log of
-- document changes (docs/decisions/0054-idempotency-key-table.md).
--
-- As in SQLite. A key is claimed in the statement or transaction of the
-- write it names: an upsert that inserts it, or takes the place of an
-- expired one, or does nothing when it is live (the write is then
-- refused). thread_id and seq are the commit the write stored (thread_id
-- 0 and the version for a document change).
CREATE TABLE idem_keys (
	scope     text COLLATE "C" NOT NULL,
	key       text COLLATE "C" NOT NULL,
	hash      bytea NOT NULL,
	result    bytea NOT NULL,
	thread_id bigint NOT NULL,
	seq       bigint NOT NULL,
	time      timestamptz NOT NULL,
	expires   timestamptz NOT NULL,
	PRIMARY KEY (scope, key)
);

CREATE INDEX idem_keys_expires ON idem_keys (expires);

-- One row per document set or remove: who made it (meta, JSON), never the
-- document. scope is the caller's (a shared store's documents are kept
-- under scope '').
CREATE TABLE doc_changes (
	id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	time    timestamptz NOT NULL,
	store   text COLLATE "C" NOT NULL,
	scope   text COLLATE "C" NOT NULL,
	key     text COLLATE "C" NOT NULL,
	version bigint NOT NULL,
	op      text COLLATE "C" NOT NULL,
	meta    bytea NOT NULL
);

CREATE INDEX doc_changes_scope ON doc_changes (scope, id);
