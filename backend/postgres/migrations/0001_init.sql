-- satchel's PostgreSQL schema, version 1.
--
-- Like SQLite's: a commit is ONE row of commits plus one entry of the
-- (thread_id, seq) unique index, which is also what arbitrates two writers
-- of the same sequence number. Identity columns are never reused; every
-- text column that is sorted or compared by range is COLLATE "C" (byte
-- order, whatever the database's locale). Times come from the database's
-- clock (now()), never from the processes.

CREATE TABLE threads (
	id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	scope   text COLLATE "C" NOT NULL,
	name    text COLLATE "C" NOT NULL,
	created timestamptz NOT NULL DEFAULT now(),
	UNIQUE (scope, name)
);

-- No foreign key to threads: a deleted thread's commits stay, dropped,
-- until garbage collection deletes them (forks may share their objects).
CREATE TABLE commits (
	id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	thread_id  bigint NOT NULL,
	seq        bigint NOT NULL,
	time       timestamptz NOT NULL DEFAULT now(),
	dropped_at timestamptz,             -- NULL while retained
	scope      text COLLATE "C" NOT NULL, -- for PurgeScope and GC once the thread is gone
	root       bytea NOT NULL,
	meta       bytea NOT NULL,
	pack       bytea NOT NULL,
	UNIQUE (thread_id, seq)
);

-- Only dropped rows are indexed, so appends never touch this index.
CREATE INDEX commits_dropped ON commits (scope, dropped_at) WHERE dropped_at IS NOT NULL;

CREATE TABLE checkpoints (
	thread_id bigint NOT NULL,
	name      text COLLATE "C" NOT NULL,
	seq       bigint NOT NULL,
	PRIMARY KEY (thread_id, name)
);

CREATE TABLE settings (
	scope  text COLLATE "C" NOT NULL,
	thread text COLLATE "C" NOT NULL, -- a thread name, '' for the whole scope
	key    text COLLATE "C" NOT NULL,
	value  bytea NOT NULL,
	PRIMARY KEY (scope, thread, key)
);
