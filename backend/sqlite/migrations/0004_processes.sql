-- satchel's SQLite schema, version 4: the processes that use the file
-- (docs/decisions/0062-process-registry.md).
--
-- Each process that opens the file for writing registers one row, renewed
-- every 20 seconds and deleted when it closes; a row not seen for 60
-- seconds is forgotten. satchel migrate --contract refuses a contract
-- migration while a live row knows fewer migrations (schema_version) than
-- it. Times are unix nanoseconds of the processes' clock (one machine).
CREATE TABLE processes (
	id             INTEGER PRIMARY KEY,
	host           TEXT    NOT NULL,
	pid            INTEGER NOT NULL,
	program        TEXT    NOT NULL, -- the version of satchel it runs
	schema_version INTEGER NOT NULL, -- the number of migrations it knows
	started        INTEGER NOT NULL,
	seen           INTEGER NOT NULL
);
