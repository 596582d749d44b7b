-- satchel's PostgreSQL schema: per-scope quotas (docs/decisions/0051-quotas.md).
--
-- As in SQLite: a scope has a row in scope_quotas only once a limit is set
-- for it, and only then does a change to the scope lock and update it. A
-- limit of -1 bounds nothing. files and bytes on a commit are the totals
-- of its tree, NULL on the rows of earlier versions.
CREATE TABLE scope_quotas (
	scope             text COLLATE "C" PRIMARY KEY,
	max_bytes         bigint NOT NULL,
	max_files         bigint NOT NULL,
	max_threads       bigint NOT NULL,
	max_documents     bigint NOT NULL,
	max_history_bytes bigint NOT NULL,
	bytes             bigint NOT NULL,
	files             bigint NOT NULL,
	threads           bigint NOT NULL,
	documents         bigint NOT NULL,
	history_bytes     bigint NOT NULL
);

ALTER TABLE commits ADD COLUMN files bigint;
ALTER TABLE commits ADD COLUMN bytes bigint;
