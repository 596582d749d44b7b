-- satchel's SQLite schema, version 3: a commit's (thread, seq) index entry
-- is written later, in bulk (docs/decisions/0015-deferred-commit-index.md).
--
-- The UNIQUE (thread_id, seq) index of version 1 made every commit write a
-- leaf of that index, one per thread of a group commit's batch: over half
-- of a transaction's pages. Now a commit writes its row, appended at a
-- growing id, and one entry of commits_recent, also appended; the entries
-- of commit_seq, ordered by thread, are inserted by the Append that finds
-- more than a few hundred commits above seq_indexed.upto, all at once. The
-- view thread_commits joins the two halves. Uniqueness of (thread, seq)
-- is the compare-and-swap on the thread's newest seq, under the write
-- lock.

-- commits is rebuilt without the constraint (SQLite cannot drop one). Its
-- AUTOINCREMENT counter is carried over: ids are never given twice, even
-- when the newest rows were collected.
CREATE TABLE commits_v3 (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	thread_id  INTEGER NOT NULL,
	seq        INTEGER NOT NULL,
	time       INTEGER NOT NULL,
	dropped_at INTEGER,
	scope      TEXT    NOT NULL,
	root       BLOB    NOT NULL,
	meta       BLOB    NOT NULL,
	pack       BLOB    NOT NULL
);
INSERT INTO commits_v3 (id, thread_id, seq, time, dropped_at, scope, root, meta, pack)
	SELECT id, thread_id, seq, time, dropped_at, scope, root, meta, pack FROM commits ORDER BY id;
DELETE FROM sqlite_sequence WHERE name = 'commits_v3';
INSERT INTO sqlite_sequence (name, seq)
	SELECT 'commits_v3', max(seq) FROM sqlite_sequence WHERE name = 'commits' HAVING count(*) > 0;
DROP TABLE commits;
ALTER TABLE commits_v3 RENAME TO commits;

CREATE INDEX commits_dropped ON commits (scope, dropped_at) WHERE dropped_at IS NOT NULL;

-- commits_recent finds the commits above seq_indexed.upto without reading
-- the table's pages (which hold the packs).
CREATE INDEX commits_recent ON commits (id, thread_id, seq);

CREATE TABLE commit_seq (
	thread_id INTEGER NOT NULL,
	seq       INTEGER NOT NULL,
	id        INTEGER NOT NULL,
	PRIMARY KEY (thread_id, seq)
) WITHOUT ROWID;
INSERT INTO commit_seq (thread_id, seq, id) SELECT thread_id, seq, id FROM commits;

-- Every commit with an id up to upto has its entry in commit_seq.
CREATE TABLE seq_indexed (upto INTEGER NOT NULL);
INSERT INTO seq_indexed (upto) SELECT coalesce(max(id), 0) FROM commits;

-- Every commit of every thread, by (thread_id, seq): a query that names
-- both lets SQLite seek commit_seq and scan the few recent entries.
CREATE VIEW thread_commits AS
	SELECT thread_id, seq, id FROM commit_seq
	UNION ALL
	SELECT thread_id, seq, id FROM commits WHERE id > (SELECT upto FROM seq_indexed);
