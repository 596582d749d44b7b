-- satchel's PostgreSQL schema, version 9: idempotency keys per scope and
-- thread (docs/decisions/0115-idempotency-keys-per-thread.md).
--
-- As in SQLite. A key is claimed in the scope and the thread of its
-- caller (thread is the name of the caller's thread, '' for a caller
-- bound to none): a key claimed on one thread does not exist for
-- another. Otherwise as idem_keys (0006_idem.sql), which this table
-- replaces: a process of an earlier release, still running during an
-- upgrade, keeps using that one, so this migration only adds (an expand).
CREATE TABLE idem_thread_keys (
	scope     text COLLATE "C" NOT NULL,
	thread    text COLLATE "C" NOT NULL,
	key       text COLLATE "C" NOT NULL,
	hash      bytea NOT NULL,
	result    bytea NOT NULL,
	thread_id bigint NOT NULL,
	seq       bigint NOT NULL,
	time      timestamptz NOT NULL,
	expires   timestamptz NOT NULL,
	PRIMARY KEY (scope, thread, key)
);

CREATE INDEX idem_thread_keys_expires ON idem_thread_keys (expires);
