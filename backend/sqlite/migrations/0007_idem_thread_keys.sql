-- satchel's SQLite schema: idempotency keys per scope and thread
-- (docs/decisions/0115-idempotency-keys-per-thread.md).
--
-- A key is claimed in the scope and the thread of its caller (thread is
-- the name of the caller's thread, '' for a caller bound to none): a key
-- claimed on one thread does not exist for another. Otherwise as
-- idem_keys (0006_idem.sql), which this table replaces: a process of an
-- earlier release, still running during an upgrade, keeps using that
-- one, so this migration only adds (an expand).
CREATE TABLE idem_thread_keys (
	scope     TEXT    NOT NULL,
	thread    TEXT    NOT NULL,
	key       TEXT    NOT NULL,
	hash      BLOB    NOT NULL,
	result    BLOB    NOT NULL,
	thread_id INTEGER NOT NULL,
	seq       INTEGER NOT NULL,
	time      INTEGER NOT NULL,
	expires   INTEGER NOT NULL,
	PRIMARY KEY (scope, thread, key)
) WITHOUT ROWID;

CREATE INDEX idem_thread_keys_expires ON idem_thread_keys (expires);
