-- satchel's SQLite schema: the map of satchel commits to git commits
-- (backend.GitMapper; docs/decisions/0147-git-map-stored.md).
--
-- git_commits holds, per thread and satchel commit, the git commit's hash
-- and its tree's (hex), and the thread's oldest retained commit when it
-- was mapped (root: every hash after it depends on it). git_trees holds
-- the thread's git tree objects by hash, so that a process maps the next
-- commits from the stored tree of the last one, reading only the
-- directories they change. Both are a cache of what can be computed from
-- the history, deleted with their thread. Only adds (an expand).
CREATE TABLE git_commits (
	thread_id INTEGER NOT NULL,
	seq       INTEGER NOT NULL,
	root      INTEGER NOT NULL,
	hash      TEXT    NOT NULL,
	tree      TEXT    NOT NULL,
	PRIMARY KEY (thread_id, seq)
) WITHOUT ROWID;

CREATE INDEX git_commits_hash ON git_commits (thread_id, hash);

CREATE TABLE git_trees (
	thread_id INTEGER NOT NULL,
	hash      TEXT    NOT NULL,
	object    BLOB    NOT NULL,
	PRIMARY KEY (thread_id, hash)
) WITHOUT ROWID;
