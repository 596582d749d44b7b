package pgtest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/satchel-dev/satchel/internal/pgtest"
	"github.com/satchel-dev/satchel/internal/testenv"
)

// kind is a small schema of the tests' own: a table with an identity and
// an index, one whose rows Migrate writes and a test starts with, and a
// sequence.
var kind = pgtest.Kind{
	Name: "pgtest",
	Migrate: func(ctx context.Context, url string) error {
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, `CREATE TABLE pgtest_items (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, v text NOT NULL);
			CREATE INDEX pgtest_items_v ON pgtest_items (v);
			CREATE TABLE pgtest_info (k text PRIMARY KEY, v text NOT NULL);
			INSERT INTO pgtest_info VALUES ('version', '1');
			CREATE SEQUENCE pgtest_seq;`)
		return err
	},
	Keep: map[string]string{"pgtest_info": "SELECT k, v FROM pgtest_info ORDER BY k"},
}

// schema gives t a schema of kind and a connection to it.
func schema(t *testing.T) *pgx.Conn {
	t.Helper()
	url := testenv.PostgresURL(t)
	name := "pgtest_" + strings.ReplaceAll(strings.ToLower(t.Name()), "/", "_")
	pgtest.Schema(t, url, name, kind)
	conn, err := pgx.Connect(t.Context(), pgtest.WithSearchPath(url, name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func exec(t *testing.T, conn *pgx.Conn, sql string) {
	t.Helper()
	if _, err := conn.Exec(t.Context(), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// wantFresh checks that conn's schema holds what a fresh one holds: no
// items, the identity and the sequence at their start, the kept row, no
// statistics, no other column.
func wantFresh(t *testing.T, conn *pgx.Conn) {
	t.Helper()
	ctx := t.Context()
	var items, stats, cols int
	var info string
	var id, next int64
	err := conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM pgtest_items),
		(SELECT string_agg(k || '=' || v, ',') FROM pgtest_info),
		(SELECT count(*) FROM pg_stats WHERE schemaname = current_schema()),
		(SELECT count(*) FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'pgtest_items')`).
		Scan(&items, &info, &stats, &cols)
	if err != nil {
		t.Fatal(err)
	}
	if items != 0 || info != "version=1" || stats != 0 || cols != 2 {
		t.Errorf("schema holds %d items, info %q, %d statistics, %d columns; want 0, version=1, 0, 2", items, info, stats, cols)
	}
	if err := conn.QueryRow(ctx, "INSERT INTO pgtest_items (v) VALUES ('a') RETURNING id").Scan(&id); err != nil || id != 1 {
		t.Errorf("first item id %d (%v), want 1", id, err)
	}
	if err := conn.QueryRow(ctx, "SELECT nextval('pgtest_seq')").Scan(&next); err != nil || next != 1 {
		t.Errorf("first nextval %d (%v), want 1", next, err)
	}
}

// next runs dirty in a schema, then check in the next schema the pool
// gives, and reports whether that was the schema dirty left ("reused") or
// whether the schema dirty left was refused and dropped ("dropped"). Another
// schema of the pool may come first (another process gives them back
// too): then it tries again, 5 times at most.
func next(t *testing.T, dirty, check func(t *testing.T, conn *pgx.Conn)) string {
	t.Helper()
	for range 5 {
		var left, got uint32
		t.Run("dirty", func(t *testing.T) {
			conn := schema(t)
			left = schemaOID(t, conn)
			dirty(t, conn)
		})
		var gone bool
		t.Run("next", func(t *testing.T) {
			conn := schema(t)
			got = schemaOID(t, conn)
			if err := conn.QueryRow(t.Context(), "SELECT NOT EXISTS (SELECT 1 FROM pg_namespace WHERE oid = $1)", left).Scan(&gone); err != nil {
				t.Fatal(err)
			}
			check(t, conn)
		})
		switch {
		case got == left:
			return "reused"
		case gone:
			return "dropped"
		}
	}
	t.Fatal("the pool never gave the schema back in 5 tries")
	return ""
}

// schemaOID returns the OID of conn's schema, which a rename keeps.
func schemaOID(t *testing.T, conn *pgx.Conn) uint32 {
	t.Helper()
	var oid uint32
	if err := conn.QueryRow(t.Context(), "SELECT current_schema()::regnamespace::oid").Scan(&oid); err != nil {
		t.Fatal(err)
	}
	return oid
}

// TestReusedIsFresh: a schema given back after rows, sequence values and
// planner statistics is handed out again as a fresh one.
func TestReusedIsFresh(t *testing.T) {
	got := next(t, func(t *testing.T, conn *pgx.Conn) {
		exec(t, conn, "INSERT INTO pgtest_items (v) SELECT 'x' || i FROM generate_series(1, 500) i")
		exec(t, conn, "SELECT nextval('pgtest_seq')")
		exec(t, conn, "DELETE FROM pgtest_items WHERE id % 2 = 0")
	}, wantFresh)
	if got != "reused" {
		t.Errorf("the schema was %s, want reused", got)
	}
}

// TestAnalyzedIsNotReused: statistics that TRUNCATE keeps make a schema
// that is not handed out again.
func TestAnalyzedIsNotReused(t *testing.T) {
	got := next(t, func(t *testing.T, conn *pgx.Conn) {
		exec(t, conn, "INSERT INTO pgtest_items (v) VALUES ('a'), ('b')")
		exec(t, conn, "ANALYZE pgtest_items")
	}, wantFresh)
	if got != "dropped" {
		t.Errorf("the schema was %s, want dropped", got)
	}
}

// TestChangedIsNotReused: a schema whose definitions or kept rows a test
// changed is dropped, not handed out again.
func TestChangedIsNotReused(t *testing.T) {
	for _, change := range []string{
		"ALTER TABLE pgtest_items ADD COLUMN w int",
		"DROP INDEX pgtest_items_v",
		"UPDATE pgtest_info SET v = '2'",
		"CREATE TABLE pgtest_other (k int)",
		"ALTER SEQUENCE pgtest_seq INCREMENT BY 2",
	} {
		t.Run(strings.Fields(change)[0], func(t *testing.T) {
			got := next(t, func(t *testing.T, conn *pgx.Conn) { exec(t, conn, change) }, func(t *testing.T, conn *pgx.Conn) {
				var others int
				if err := conn.QueryRow(t.Context(), "SELECT count(*) FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relname = 'pgtest_other'").Scan(&others); err != nil || others != 0 {
					t.Errorf("%d tables pgtest_other (%v), want none", others, err)
				}
				var idx int
				if err := conn.QueryRow(t.Context(), "SELECT count(*) FROM pg_indexes WHERE schemaname = current_schema() AND indexname = 'pgtest_items_v'").Scan(&idx); err != nil || idx != 1 {
					t.Errorf("%d indexes pgtest_items_v (%v), want 1", idx, err)
				}
				wantFresh(t, conn)
			})
			if got != "dropped" {
				t.Errorf("the schema was %s, want dropped", got)
			}
		})
	}
}

// TestLeftOpenLosesSchema: a connection that a test leaves open no longer
// reaches its schema once the test has ended, as if it were dropped.
func TestLeftOpenLosesSchema(t *testing.T) {
	var left *pgx.Conn
	t.Run("leaves", func(t *testing.T) {
		url := testenv.PostgresURL(t)
		pgtest.Schema(t, url, "pgtest_left_open", kind)
		var err error
		if left, err = pgx.Connect(context.Background(), pgtest.WithSearchPath(url, "pgtest_left_open")); err != nil {
			t.Fatal(err)
		}
		exec(t, left, "INSERT INTO pgtest_items (v) VALUES ('a')")
	})
	if left == nil {
		return
	}
	defer left.Close(context.Background())
	if _, err := left.Exec(t.Context(), "INSERT INTO pgtest_items (v) VALUES ('b')"); err == nil {
		t.Error("a connection left open still writes to its test's schema")
	}
}
