-- satchel's SQLite schema, version 1.
--
-- Every commit is ONE row of commits, appended at a growing key (the
-- AUTOINCREMENT id) plus one entry of the (thread_id, seq) index: the
-- fewest B-tree pages a commit can touch. AUTOINCREMENT (not a plain rowid)
-- so that an id is never given twice, even after the newest rows are
-- deleted: the engine caches packs by id.

CREATE TABLE threads (
	id      INTEGER PRIMARY KEY AUTOINCREMENT,
	scope   TEXT    NOT NULL,
	name    TEXT    NOT NULL,
	created INTEGER NOT NULL, -- unix nanoseconds
	UNIQUE (scope, name)
);

-- Column order matters: the small columns come first so that reading a
-- commit (Head, Log) never touches the overflow pages that hold its pack.
CREATE TABLE commits (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	thread_id  INTEGER NOT NULL,         -- no foreign key: a deleted thread's commits stay, dropped
	seq        INTEGER NOT NULL,
	time       INTEGER NOT NULL,         -- unix nanoseconds
	dropped_at INTEGER,                  -- unix nanoseconds; NULL while retained
	scope      TEXT    NOT NULL,         -- for PurgeScope and GC once the thread is gone
	root       BLOB    NOT NULL,
	meta       BLOB    NOT NULL,
	pack       BLOB    NOT NULL,
	UNIQUE (thread_id, seq)
);

-- Only dropped rows are indexed, so appends never touch this index.
CREATE INDEX commits_dropped ON commits (scope, dropped_at) WHERE dropped_at IS NOT NULL;

CREATE TABLE checkpoints (
	thread_id INTEGER NOT NULL,
	name      TEXT    NOT NULL,
	seq       INTEGER NOT NULL,
	PRIMARY KEY (thread_id, name)
) WITHOUT ROWID;

CREATE TABLE settings (
	scope  TEXT NOT NULL,
	thread TEXT NOT NULL, -- a thread name, '' for the whole scope
	key    TEXT NOT NULL,
	value  BLOB NOT NULL,
	PRIMARY KEY (scope, thread, key)
) WITHOUT ROWID;
