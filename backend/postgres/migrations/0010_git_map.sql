-- satchel's PostgreSQL schema, version 10: the map of satchel commits to
-- git commits (backend.GitMapper; docs/decisions/0147-git-map-stored.md).
--
-- As in SQLite. git_commits holds, per thread and satchel commit, the
-- git commit's hash and its tree's (hex), and the thread's oldest
-- retained commit when it was mapped (root: every hash after it depends
-- on it). git_trees holds the thread's git tree objects by hash. Both are
-- a cache of what can be computed from the history; they go with their
-- thread (ON DELETE CASCADE). Only adds (an expand).
CREATE TABLE git_commits (
	thread_id bigint NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
	seq       bigint NOT NULL,
	root      bigint NOT NULL,
	hash      text COLLATE "C" NOT NULL,
	tree      text COLLATE "C" NOT NULL,
	PRIMARY KEY (thread_id, seq)
);

CREATE INDEX git_commits_hash ON git_commits (thread_id, hash);

CREATE TABLE git_trees (
	thread_id bigint NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
	hash      text COLLATE "C" NOT NULL,
	object    bytea NOT NULL,
	PRIMARY KEY (thread_id, hash)
);
