-- satchel's SQLite schema: per-scope quotas (docs/decisions/0051-quotas.md).
--
-- A scope has a row in scope_quotas only once a limit is set for it; its
-- usage counters are then updated by every change to the scope, in the
-- change's transaction. A limit of -1 bounds nothing. files and bytes on
-- a commit are the totals of its tree, NULL on the rows of earlier
-- versions: the deletion of a thread takes its head's off its scope's
-- counters.
CREATE TABLE scope_quotas (
	scope             TEXT    NOT NULL PRIMARY KEY,
	max_bytes         INTEGER NOT NULL,
	max_files         INTEGER NOT NULL,
	max_threads       INTEGER NOT NULL,
	max_documents     INTEGER NOT NULL,
	max_history_bytes INTEGER NOT NULL,
	bytes             INTEGER NOT NULL,
	files             INTEGER NOT NULL,
	threads           INTEGER NOT NULL,
	documents         INTEGER NOT NULL,
	history_bytes     INTEGER NOT NULL
) WITHOUT ROWID;

ALTER TABLE commits ADD COLUMN files INTEGER;
ALTER TABLE commits ADD COLUMN bytes INTEGER;
