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

-- Documents are counted by triggers, so that every statement that makes
-- or removes one (a set, a remove, a sweep) keeps its scope's counter in
-- its own transaction; a new document over the limit aborts its statement.
CREATE TRIGGER docs_quota_check BEFORE INSERT ON docs
WHEN EXISTS (SELECT 1 FROM scope_quotas q WHERE q.scope = NEW.scope AND q.max_documents <> -1 AND q.documents + 1 > q.max_documents)
	AND NOT EXISTS (SELECT 1 FROM docs d WHERE d.store = NEW.store AND d.scope = NEW.scope AND d.key = NEW.key)
BEGIN
	SELECT RAISE(ABORT, 'satchel: documents quota exceeded');
END;

CREATE TRIGGER docs_quota_insert AFTER INSERT ON docs
BEGIN
	UPDATE scope_quotas SET documents = documents + 1 WHERE scope = NEW.scope;
END;

CREATE TRIGGER docs_quota_delete AFTER DELETE ON docs
BEGIN
	UPDATE scope_quotas SET documents = documents - 1 WHERE scope = OLD.scope;
END;
