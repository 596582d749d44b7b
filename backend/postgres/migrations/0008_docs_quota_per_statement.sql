-- satchel's PostgreSQL schema, version 8: documents counted once a
-- statement, not once a row.
--
-- The trigger of version 5 ran for each document inserted or deleted: a
-- PL/pgSQL call and a query of scope_quotas per row, about a fifth of
-- the server's time for a batch of 16 new documents (decision 0103).
-- These run once per statement, over the rows it inserted or deleted
-- (transition tables), with the same effect: the scope's counter moves
-- in the statement's transaction, the row of a scope with a quota is
-- locked, and a statement that would take a scope past its limit aborts
-- (SQLSTATE SQ001), as the first of its rows past the limit did. Rows are
-- locked in scope order, so that two statements of several scopes wait
-- for one another rather than deadlock.
DROP TRIGGER docs_quota ON docs;
DROP FUNCTION satchel_docs_quota();

CREATE FUNCTION satchel_docs_quota_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM 1 FROM scope_quotas WHERE scope IN (SELECT scope FROM new_docs) ORDER BY scope FOR UPDATE;
	IF NOT FOUND THEN
		RETURN NULL; -- no scope of these documents has a quota
	END IF;
	UPDATE scope_quotas q SET documents = q.documents + c.n
	FROM (SELECT scope, count(*) AS n FROM new_docs GROUP BY scope) c
	WHERE q.scope = c.scope;
	IF EXISTS (SELECT 1 FROM scope_quotas q WHERE q.scope IN (SELECT scope FROM new_docs)
		AND q.max_documents <> -1 AND q.documents > q.max_documents) THEN
		RAISE EXCEPTION 'satchel: documents quota exceeded' USING ERRCODE = 'SQ001';
	END IF;
	RETURN NULL;
END
$$;

CREATE FUNCTION satchel_docs_quota_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM 1 FROM scope_quotas WHERE scope IN (SELECT scope FROM old_docs) ORDER BY scope FOR UPDATE;
	IF NOT FOUND THEN
		RETURN NULL;
	END IF;
	UPDATE scope_quotas q SET documents = q.documents - c.n
	FROM (SELECT scope, count(*) AS n FROM old_docs GROUP BY scope) c
	WHERE q.scope = c.scope;
	RETURN NULL;
END
$$;

CREATE TRIGGER docs_quota_insert AFTER INSERT ON docs
	REFERENCING NEW TABLE AS new_docs
	FOR EACH STATEMENT EXECUTE FUNCTION satchel_docs_quota_insert();
CREATE TRIGGER docs_quota_delete AFTER DELETE ON docs
	REFERENCING OLD TABLE AS old_docs
	FOR EACH STATEMENT EXECUTE FUNCTION satchel_docs_quota_delete();
