-- satchel's PostgreSQL schema, version 3: a nonce on each commit.
--
-- A random number chosen by the process that appends the commit, so that
-- after losing its connection in the middle of an append it can tell its
-- own commit from another writer's of the same sequence number (identical
-- bytes are possible: two processes appending the same text to the same
-- head). NULL on the rows of earlier versions.
ALTER TABLE commits ADD COLUMN nonce bigint;
