-- satchel's PostgreSQL schema, version 2: the documents of collections.
--
-- As in SQLite: one table for the current versions of every store's
-- documents, one for their previous versions; a set is one statement (see
-- docs.go). The document is json, not jsonb: json keeps the text satchel
-- wrote (its member order, its numbers as sent), which reads return as
-- they are, and the ->/->> operators and expression indexes work on it
-- alike. Expression indexes for a store's "indexes" are partial indexes on
-- docs (WHERE store = '<name>'), created at run time by EnsureIndexes.

CREATE TABLE docs (
	id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	store   text COLLATE "C" NOT NULL,
	scope   text COLLATE "C" NOT NULL, -- '' for a shared store
	key     text COLLATE "C" NOT NULL,
	version bigint NOT NULL,
	updated timestamptz NOT NULL,
	expires timestamptz,                -- NULL: never
	doc     json NOT NULL,
	UNIQUE (store, scope, key)
);

CREATE INDEX docs_expires ON docs (expires) WHERE expires IS NOT NULL;

CREATE TABLE doc_history (
	id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	store   text COLLATE "C" NOT NULL,
	scope   text COLLATE "C" NOT NULL,
	key     text COLLATE "C" NOT NULL,
	version bigint NOT NULL,
	updated timestamptz NOT NULL,
	doc     json NOT NULL,
	UNIQUE (store, scope, key, version)
);
