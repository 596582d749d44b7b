-- satchel's PostgreSQL schema, version 4: the processes that use the
-- database (docs/decisions/0062-process-registry.md).
--
-- Each process that opens the database registers one row, renewed every
-- 20 seconds and deleted when it closes; a row not seen for 60 seconds is
-- forgotten. satchel migrate --contract refuses a contract migration while
-- a live row knows fewer migrations (schema_version) than it.
CREATE TABLE processes (
	id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	host           text COLLATE "C" NOT NULL,
	pid            integer NOT NULL,
	program        text COLLATE "C" NOT NULL, -- the version of satchel it runs
	schema_version integer NOT NULL, -- the number of migrations it knows
	started        timestamptz NOT NULL DEFAULT now(),
	seen           timestamptz NOT NULL DEFAULT now()
);
