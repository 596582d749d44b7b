-- satchel's PostgreSQL schema, version 7: packs compressed with lz4.
--
-- A pack of more than about 2 KB is compressed when it is stored out of
-- line (TOAST). PostgreSQL's default method, pglz, was the largest single
-- cost of the server's CPU under many writers (about a tenth of it); lz4
-- compresses text about as well at a fraction of the cost. Only new packs
-- take it: a stored pack keeps its method, and both read back alike. A
-- server built without lz4 (or older than PostgreSQL 14) keeps pglz.
DO $$
BEGIN
	ALTER TABLE commits ALTER COLUMN pack SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported OR syntax_error OR invalid_parameter_value THEN
	NULL;
END
$$;
