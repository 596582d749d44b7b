// Package pgtest gives each PostgreSQL test a schema of its own, migrated
// and empty, without running the migrations for each test.
//
// Creating a schema and running every migration in it is mostly catalog
// work for the server (some sixty relations, each with its files), and
// dropping it is more; the tests made thousands a run, and that work was
// most of the time of the PostgreSQL packages under CI. So a schema a test
// is done with is emptied and kept, in the same database, for the next
// test of any process (docs/decisions/0155-pooled-test-schemas.md):
//
//   - when a test ends, its schema is renamed at once (a connection the
//     test left open loses it, as it would a dropped schema), every table
//     the test wrote is truncated (TRUNCATE gives it new, empty files, as
//     a new table has) and every sequence set back to its start;
//   - when a test asks for a schema, one is taken from the pool by
//     renaming it (two processes cannot both rename the same one), the
//     server's activity counters of its tables are reset, and it is
//     compared with a fresh schema: its definitions, the size and
//     statistics of every relation, its sequences and the rows of the
//     tables the migrations fill (Kind.Keep). Any difference, or a
//     pool that has none to give, and the test gets a fresh schema
//     instead; a schema that differs is dropped, as it used to be.
//
// The fresh schema each process compares with is the first it makes. The
// pool's schemas are named after a hash of it (satchel_pool_<hash>_...),
// so a process takes only those made by the same migrations; a few stay
// in the database after the tests, as many as ran at once.
package pgtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Kind says what a fresh schema holds.
type Kind struct {
	// Name tells kinds apart within a process.
	Name string
	// Migrate makes the empty schema that url's search_path names into
	// what a test starts from (it runs the migrations).
	Migrate func(ctx context.Context, url string) error
	// Keep maps each table whose rows Migrate writes and a test starts
	// with to a query of the rows that matter, compared with a fresh
	// schema's. Every other table is emptied between tests.
	Keep map[string]string
}

// Schema gives t the schema name on the server at url, as kind makes it
// and holding nothing else, and takes it back when t ends: it goes back
// to the pool, or is dropped if it no longer compares equal to a fresh
// one. A schema that already has that name is dropped first. url is a
// postgres:// URL without search_path.
func Schema(t testing.TB, url, name string, kind Kind) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := server(ctx, url, kind.Name)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	if err := s.acquire(ctx, name, kind); err != nil {
		t.Fatalf("pgtest: schema %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := s.release(ctx, name, kind); err != nil {
			t.Errorf("pgtest: drop schema %s: %v", name, err)
		}
	})
}

// WithSearchPath returns url with search_path set to schema.
func WithSearchPath(url, schema string) string {
	if strings.Contains(url, "?") {
		return url + "&search_path=" + schema
	}
	return url + "?search_path=" + schema
}

// Stats counts, for a test of this package, what Schema did in this process.
type Stats struct {
	Reused, Created, Pooled, Dropped int
}

// Counts returns what Schema did so far in this process, on every server.
func Counts() Stats {
	mu.Lock()
	defer mu.Unlock()
	var c Stats
	for _, s := range servers {
		s.mu.Lock()
		c.Reused += s.stats.Reused
		c.Created += s.stats.Created
		c.Pooled += s.stats.Pooled
		c.Dropped += s.stats.Dropped
		s.mu.Unlock()
	}
	return c
}

var (
	mu      sync.Mutex
	servers = map[string]*serverState{} // by kind and URL
)

// serverState is a process's connections to one server and the
// fingerprint of a fresh schema of one kind there.
type serverState struct {
	url  string
	pool *pgxpool.Pool

	refOnce sync.Mutex // held while the reference is made
	ref     string     // fingerprint of a fresh schema; "" until made
	prefix  string     // name prefix of the pool's schemas
	// The planner's figures of a fresh schema's indexes, by name.
	indexes indexStats

	mu    sync.Mutex
	stats Stats
}

func server(ctx context.Context, url, kind string) (*serverState, error) {
	mu.Lock()
	defer mu.Unlock()
	key := kind + " " + url
	if s := servers[key]; s != nil {
		return s, nil
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = 4
	cfg.MinConns = 0
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	s := &serverState{url: url, pool: pool}
	servers[key] = s
	return s, nil
}

func (s *serverState) count(f func(*Stats)) {
	s.mu.Lock()
	f(&s.stats)
	s.mu.Unlock()
}

func ident(name string) string { return pgx.Identifier{name}.Sanitize() }

func randomSuffix() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// acquire makes name a schema equal to a fresh one: taken from the pool
// and checked, or new.
func (s *serverState) acquire(ctx context.Context, name string, kind Kind) error {
	if _, err := s.pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+ident(name)+" CASCADE"); err != nil {
		return err
	}
	if err := s.reference(ctx, kind); err != nil {
		return err
	}
	for {
		got, err := s.claim(ctx, name)
		if err != nil {
			return err
		}
		if !got {
			break
		}
		fp, err := s.checkable(ctx, name, kind)
		if err == nil && fp == s.ref {
			s.count(func(c *Stats) { c.Reused++ })
			return nil
		}
		// Not as fresh: dropped, and the next one tried.
		s.count(func(c *Stats) { c.Dropped++ })
		if _, err := s.pool.Exec(ctx, "DROP SCHEMA "+ident(name)+" CASCADE"); err != nil {
			return err
		}
	}
	s.count(func(c *Stats) { c.Created++ })
	return s.create(ctx, name, kind)
}

// reference makes the fingerprint of a fresh schema, once: a new schema,
// migrated and reset as a test's would be, then given to the pool.
func (s *serverState) reference(ctx context.Context, kind Kind) error {
	s.refOnce.Lock()
	defer s.refOnce.Unlock()
	if s.ref != "" {
		return nil
	}
	tmp := "satchel_reset_" + randomSuffix()
	if err := s.create(ctx, tmp, kind); err != nil {
		return err
	}
	rows, _ := s.pool.Query(ctx, `SELECT c.relname, c.relpages, c.reltuples, c.relallvisible
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1 AND c.relkind = 'i' ORDER BY c.relname`, tmp)
	for rows.Next() {
		var name string
		var pages, allVisible int32
		var tuples float32
		if err := rows.Scan(&name, &pages, &tuples, &allVisible); err != nil {
			rows.Close()
			return err
		}
		s.indexes.names = append(s.indexes.names, name)
		s.indexes.pages = append(s.indexes.pages, pages)
		s.indexes.tuples = append(s.indexes.tuples, tuples)
		s.indexes.allVisible = append(s.indexes.allVisible, allVisible)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if err := s.reset(ctx, tmp, kind); err != nil {
		return err
	}
	fp, err := s.checkable(ctx, tmp, kind)
	if err != nil {
		return err
	}
	sum := sha256.Sum256([]byte(fp))
	s.ref = fp
	s.prefix = "satchel_pool_" + hex.EncodeToString(sum[:6]) + "_"
	_, err = s.pool.Exec(ctx, "ALTER SCHEMA "+ident(tmp)+" RENAME TO "+ident(s.pooledName()))
	return err
}

// create makes name a new schema and migrates it.
func (s *serverState) create(ctx context.Context, name string, kind Kind) error {
	if _, err := s.pool.Exec(ctx, "CREATE SCHEMA "+ident(name)); err != nil {
		return err
	}
	return kind.Migrate(ctx, WithSearchPath(s.url, name))
}

// pooledName names a schema given to the pool: the prefix, then the time,
// so that the last given back is the first taken (its pages are the ones
// most likely still in the server's memory).
func (s *serverState) pooledName() string {
	return fmt.Sprintf("%s%016x_%s", s.prefix, time.Now().UnixNano(), randomSuffix()[:8])
}

// claim renames a schema of the pool to name, the last given back first,
// and reports whether there was one to take.
func (s *serverState) claim(ctx context.Context, name string) (bool, error) {
	rows, _ := s.pool.Query(ctx, "SELECT nspname FROM pg_namespace WHERE starts_with(nspname, $1) ORDER BY nspname DESC LIMIT 8", s.prefix)
	free, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return false, err
	}
	for _, f := range free {
		_, err := s.pool.Exec(ctx, "ALTER SCHEMA "+ident(f)+" RENAME TO "+ident(name))
		if err == nil {
			return true, nil
		}
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "3F000" { // taken by another
			return false, err
		}
	}
	return false, nil
}

// release takes name back from its test: renamed at once, reset, then
// given to the pool; dropped if it cannot be reset.
func (s *serverState) release(ctx context.Context, name string, kind Kind) error {
	if s.prefix == "" {
		return s.drop(ctx, name)
	}
	tmp := "satchel_reset_" + randomSuffix()
	if _, err := s.pool.Exec(ctx, "ALTER SCHEMA "+ident(name)+" RENAME TO "+ident(tmp)); err != nil {
		return s.drop(ctx, name)
	}
	if err := s.reset(ctx, tmp, kind); err != nil {
		return s.drop(ctx, tmp)
	}
	if _, err := s.pool.Exec(ctx, "ALTER SCHEMA "+ident(tmp)+" RENAME TO "+ident(s.pooledName())); err != nil {
		return s.drop(ctx, tmp)
	}
	s.count(func(c *Stats) { c.Pooled++ })
	return nil
}

func (s *serverState) drop(ctx context.Context, name string) error {
	s.count(func(c *Stats) { c.Dropped++ })
	_, err := s.pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+ident(name)+" CASCADE")
	return err
}

// indexStats are the planner's figures of indexes in pg_class.
type indexStats struct {
	names             []string
	pages, allVisible []int32
	tuples            []float32
}

// reset truncates the tables of schema that hold rows or ever did (a
// non-empty file), but for those of kind.Keep, and sets every sequence back
// to its start. It waits at most 10 s for a lock: a test that left a
// transaction open gets its schema dropped instead.
func (s *serverState) reset(ctx context.Context, schema string, kind Kind) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL lock_timeout = '10s'"); err != nil {
			return err
		}
		rows, _ := tx.Query(ctx, `SELECT c.relname FROM pg_depend d JOIN pg_class c ON c.oid = d.objid
			WHERE d.refclassid = 'pg_namespace'::regclass AND d.refobjid = $1::regnamespace AND d.refobjsubid = 0
				AND d.classid = 'pg_class'::regclass AND c.relkind = 'r' AND pg_relation_size(c.oid) > 0
			ORDER BY c.relname`, ident(schema))
		used, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		var names []string
		for _, u := range used {
			if _, keep := kind.Keep[u]; !keep {
				names = append(names, ident(schema)+"."+ident(u))
			}
		}
		if len(names) > 0 {
			if _, err := tx.Exec(ctx, "TRUNCATE "+strings.Join(names, ", ")+" CASCADE"); err != nil {
				return err
			}
			// TRUNCATE rebuilds the indexes without the planner's figures
			// (pages and tuples unknown) that CREATE INDEX gives a new
			// one: they are set back (which takes a superuser).
			ix := s.indexes
			if _, err := tx.Exec(ctx, `UPDATE pg_class c SET relpages = r.pages, reltuples = r.tuples, relallvisible = r.allvisible
				FROM unnest($2::text[], $3::int4[], $4::float4[], $5::int4[]) AS r(name, pages, tuples, allvisible)
				WHERE c.relnamespace = $1::regnamespace AND c.relkind = 'i' AND c.relname = r.name
					AND (c.relpages, c.reltuples, c.relallvisible) IS DISTINCT FROM (r.pages, r.tuples, r.allvisible)`,
				ident(schema), ix.names, ix.pages, ix.tuples, ix.allVisible); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `SELECT setval(c.oid, s.seqstart, false) FROM pg_sequence s
			JOIN pg_class c ON c.oid = s.seqrelid WHERE c.relnamespace = $1::regnamespace`, ident(schema)); err != nil {
			return err
		}
		// The truncations' counts reach the server's counters before the
		// schema is taken again (PostgreSQL 15).
		_, err = tx.Exec(ctx, "SELECT pg_stat_force_next_flush()")
		return err
	})
}

// checkable resets the activity counters of schema's tables (which a
// fresh table starts without) and returns its fingerprint.
func (s *serverState) checkable(ctx context.Context, schema string, kind Kind) (string, error) {
	var fp string
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL search_path = "+ident(schema)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `WITH tables AS (SELECT d.objid AS oid FROM pg_depend d
				WHERE d.refclassid = 'pg_namespace'::regclass AND d.refobjid = current_schema()::regnamespace
					AND d.refobjsubid = 0 AND d.classid = 'pg_class'::regclass)
			SELECT pg_stat_reset_single_table_counters(r.oid)
			FROM (SELECT oid FROM tables UNION ALL SELECT i.indexrelid FROM tables t JOIN pg_index i ON i.indrelid = t.oid) r`); err != nil {
			return err
		}
		var err error
		fp, err = fingerprint(ctx, tx, kind)
		return err
	})
	return fp, err
}

// fingerprintSQL describes the first schema of the search path: what
// fresh and reused schemas must have alike. Names of other schemas'
// objects are left out (OIDs, the schema's own name, the names of the
// internal triggers of foreign keys), as are the times of the rows that
// Keep's queries leave out, and the pg_attver option this server gives
// every column (a number of its own for each table).
const fingerprintSQL = `
WITH ns AS (SELECT oid, nspowner, nspacl FROM pg_namespace WHERE nspname = current_schema()),
owned AS (SELECT d.classid, d.objid FROM pg_depend d JOIN ns ON d.refobjid = ns.oid
	WHERE d.refclassid = 'pg_namespace'::regclass AND d.refobjsubid = 0),
tables AS (SELECT c.* FROM owned o JOIN pg_class c ON c.oid = o.objid WHERE o.classid = 'pg_class'::regclass),
rels AS (SELECT * FROM tables UNION ALL
	SELECT c.* FROM tables t JOIN pg_index i ON i.indrelid = t.oid JOIN pg_class c ON c.oid = i.indexrelid)
SELECT concat_ws(E'\n--\n',
	(SELECT nspowner::regrole::text || ' ' || coalesce(nspacl::text, '') FROM ns),
	(SELECT string_agg(concat_ws(' ', c.relname, c.relkind, c.relpages, c.reltuples, c.relallvisible,
		c.relpersistence, c.relowner::regrole, c.relacl, c.reloptions, c.relhasindex, c.relhastriggers,
		c.relhasrules, c.relrowsecurity, c.relforcerowsecurity, c.relreplident, c.relchecks, c.relnatts,
		c.relam, c.reltoastrelid <> 0,
		CASE WHEN c.relkind IN ('r', 'i', 'S', 'm') THEN pg_relation_size(c.oid) END,
		CASE WHEN c.relkind IN ('r', 'm') THEN pg_total_relation_size(c.oid) END,
		(SELECT concat_ws(' ', t.relpages, t.reltuples, t.relallvisible) FROM pg_class t WHERE t.oid = c.reltoastrelid)),
		E'\n' ORDER BY c.relname) FROM rels c),
	(SELECT string_agg(concat_ws(' ', c.relname, a.attnum, a.attname, format_type(a.atttypid, a.atttypmod),
		a.attnotnull, a.atthasdef, a.atthasmissing, a.attidentity, a.attgenerated, a.attisdropped,
		a.attcollation, a.attcompression, a.attstattarget, a.attstorage, a.attacl,
		(SELECT array_agg(o ORDER BY o) FROM unnest(a.attoptions) o WHERE o NOT LIKE 'pg_attver=%'),
		pg_get_expr(d.adbin, d.adrelid)), E'\n' ORDER BY c.relname, a.attnum)
		FROM rels c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0
		LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum),
	(SELECT string_agg(x, E'\n' ORDER BY x) FROM (SELECT concat_ws(' ', pg_get_indexdef(i.indexrelid), i.indisvalid,
		i.indisready, i.indislive, i.indisclustered, i.indisreplident) AS x
		FROM pg_index i JOIN rels c ON c.oid = i.indrelid) q),
	(SELECT string_agg(concat_ws(' ', co.conname, co.contype, pg_get_constraintdef(co.oid), co.convalidated,
		co.condeferrable, co.condeferred), E'\n' ORDER BY co.conname)
		FROM pg_constraint co JOIN rels c ON co.conrelid = c.oid),
	(SELECT string_agg(x, E'\n' ORDER BY x) FROM (SELECT CASE WHEN tg.tgisinternal
			THEN concat_ws(' ', c.relname, tg.tgfoid::regproc, tg.tgtype, tg.tgenabled)
			ELSE concat_ws(' ', pg_get_triggerdef(tg.oid), tg.tgenabled) END AS x
		FROM pg_trigger tg JOIN rels c ON c.oid = tg.tgrelid) q),
	(SELECT string_agg(x, E'\n' ORDER BY x) FROM (SELECT concat_ws(' ', p.proname,
		pg_get_function_identity_arguments(p.oid), p.prorettype::regtype, p.prokind, p.prolang, p.provolatile,
		p.prosecdef, p.proconfig, p.proacl, md5(p.prosrc)) AS x
		FROM owned o JOIN pg_proc p ON p.oid = o.objid WHERE o.classid = 'pg_proc'::regclass) q),
	(SELECT string_agg(concat_ws(' ', t.typname, t.typtype, t.typacl, a.typname, a.typacl), E'\n' ORDER BY t.typname)
		FROM (SELECT c.reltype AS oid FROM rels c WHERE c.reltype <> 0
			UNION SELECT o.objid FROM owned o WHERE o.classid = 'pg_type'::regclass) y
		JOIN pg_type t ON t.oid = y.oid LEFT JOIN pg_type a ON a.oid = t.typarray),
	(SELECT string_agg(concat_ws(' ', c.relname, s.seqtypid::regtype, s.seqstart, s.seqincrement, s.seqmax,
		s.seqmin, s.seqcache, s.seqcycle, pg_sequence_last_value(c.oid)), E'\n' ORDER BY c.relname)
		FROM rels c JOIN pg_sequence s ON s.seqrelid = c.oid),
	(SELECT string_agg(concat_ws(' ', c.relname, r.rulename, r.ev_type, r.ev_enabled), E'\n' ORDER BY c.relname, r.rulename)
		FROM pg_rewrite r JOIN rels c ON c.oid = r.ev_class),
	(SELECT string_agg(concat_ws(' ', c.relname, p.polname, p.polcmd, p.polpermissive), E'\n' ORDER BY c.relname, p.polname)
		FROM pg_policy p JOIN rels c ON c.oid = p.polrelid),
	(SELECT string_agg(concat_ws(' ', x.stxname, x.stxkind), E'\n' ORDER BY x.stxname)
		FROM pg_statistic_ext x JOIN rels c ON x.stxrelid = c.oid),
	(SELECT count(*) FROM pg_statistic s JOIN rels c ON c.oid = s.starelid),
	(SELECT string_agg(concat_ws(' ', c.relname, pg_stat_get_numscans(c.oid), pg_stat_get_tuples_returned(c.oid),
		pg_stat_get_tuples_fetched(c.oid), pg_stat_get_tuples_inserted(c.oid), pg_stat_get_tuples_updated(c.oid),
		pg_stat_get_tuples_deleted(c.oid), pg_stat_get_tuples_hot_updated(c.oid), pg_stat_get_live_tuples(c.oid),
		pg_stat_get_dead_tuples(c.oid), pg_stat_get_mod_since_analyze(c.oid), pg_stat_get_ins_since_vacuum(c.oid),
		pg_stat_get_last_vacuum_time(c.oid), pg_stat_get_last_autovacuum_time(c.oid),
		pg_stat_get_last_analyze_time(c.oid), pg_stat_get_last_autoanalyze_time(c.oid),
		pg_stat_get_vacuum_count(c.oid), pg_stat_get_autovacuum_count(c.oid), pg_stat_get_analyze_count(c.oid),
		pg_stat_get_autoanalyze_count(c.oid)), E'\n' ORDER BY c.relname) FROM rels c)), quote_ident(current_schema())`

// fingerprint returns the description of the search path's first schema
// that a fresh one and a reused one must share, with the rows of the
// tables of kind.Keep.
func fingerprint(ctx context.Context, tx pgx.Tx, kind Kind) (string, error) {
	var b strings.Builder
	var fp string
	var schema string
	if err := tx.QueryRow(ctx, fingerprintSQL).Scan(&fp, &schema); err != nil {
		return "", err
	}
	// Index and trigger definitions name their table with its schema
	// (quoted as quote_ident quotes it).
	b.WriteString(strings.ReplaceAll(fp, schema+".", ""))
	tables := make([]string, 0, len(kind.Keep))
	for t := range kind.Keep {
		tables = append(tables, t)
	}
	slices.Sort(tables)
	for _, t := range tables {
		rows, err := tx.Query(ctx, kind.Keep[t], pgx.QueryExecModeSimpleProtocol)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "\n-- %s\n", t)
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				rows.Close()
				return "", err
			}
			fmt.Fprintln(&b, vals...)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return "", err
		}
	}
	return b.String(), nil
}
