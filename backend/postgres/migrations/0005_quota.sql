-- satchel's PostgreSQL schema: per-scope quotas (docs/decisions/0051-quotas.md).
--
-- As in SQLite: a scope has a row in scope_quotas only once a limit is set
-- for it, and only then does a change to the scope lock and update it. A
-- limit of -1 bounds nothing. files and bytes on a commit are the totals
-- of its tree, NULL on the rows of earlier versions.
CREATE TABLE scope_quotas (
	scope             text COLLATE "C" PRIMARY KEY,
	max_bytes         bigint NOT NULL,
	max_files         bigint NOT NULL,
	max_threads       bigint NOT NULL,
	max_documents     bigint NOT NULL,
	max_history_bytes bigint NOT NULL,
	bytes             bigint NOT NULL,
	files             bigint NOT NULL,
	threads           bigint NOT NULL,
	documents         bigint NOT NULL,
	history_bytes     bigint NOT NULL
);

ALTER TABLE commits ADD COLUMN files bigint;
ALTER TABLE commits ADD COLUMN bytes bigint;

-- Documents are counted by a trigger, so that every statement that makes
-- or removes one keeps its scope's counter in its own transaction. The
-- row of a scope with a quota is locked (FOR UPDATE): two transactions
-- racing to the limit cannot both pass it. A new document over the limit
-- aborts its statement (SQLSTATE SQ001).
CREATE FUNCTION satchel_docs_quota() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
	q scope_quotas;
BEGIN
	IF TG_OP = 'INSERT' THEN
		SELECT * INTO q FROM scope_quotas WHERE scope = NEW.scope FOR UPDATE;
		IF FOUND THEN
			IF q.max_documents <> -1 AND q.documents + 1 > q.max_documents THEN
				RAISE EXCEPTION 'satchel: documents quota exceeded' USING ERRCODE = 'SQ001';
			END IF;
			UPDATE scope_quotas SET documents = documents + 1 WHERE scope = NEW.scope;
		END IF;
		RETURN NEW;
	END IF;
	UPDATE scope_quotas SET documents = documents - 1 WHERE scope = OLD.scope;
	RETURN OLD;
END
$$;

CREATE TRIGGER docs_quota AFTER INSERT OR DELETE ON docs
	FOR EACH ROW EXECUTE FUNCTION satchel_docs_quota();
