package collection

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite"

	"github.com/satchel-dev/satchel/internal/testenv"
)

func TestQuerySQL(t *testing.T) {
	s := queryStore(t)
	tests := []struct {
		where          string
		sqlite, pg     string
		sqlArgs, pgArg []any
	}{
		{"", "TRUE", "TRUE", nil, nil},
		{"id = 'a' AND n > 1.5",
			"json_extract(doc, '$.id') = ? AND json_extract(doc, '$.n') > ?",
			`(doc->>'id') COLLATE "C" = $3 AND ((doc->>'n')::float8) > $4`,
			[]any{"a", 1.5}, []any{"a", 1.5}},
		{"b = true AND b != false",
			"json_extract(doc, '$.b') = ? AND json_extract(doc, '$.b') IS NOT ?",
			`((doc->>'b')::boolean) = $3 AND ((doc->>'b')::boolean) IS DISTINCT FROM $4`,
			[]any{int64(1), int64(0)}, []any{true, false}},
		{"at >= '2026-01-01T01:00:00+01:00' AND at < '2026-02-01T00:00:00Z'",
			"json_extract(doc, '$.at') >= ? AND json_extract(doc, '$.at') < ?",
			`(doc->>'at') COLLATE "C" >= $3 AND (doc->>'at') COLLATE "C" < $4`,
			[]any{"2026-01-01T00:00:00.000000000Z", "2026-02-01T00:00:00.000000000Z"}, []any{"2026-01-01T00:00:00.000000000Z", "2026-02-01T00:00:00.000000000Z"}},
		{"status IN ['open', null] AND c IN ['x', 'y'] AND m.source IN [null]",
			"(json_extract(doc, '$.status') IN (?) OR json_extract(doc, '$.status') IS NULL) AND json_extract(doc, '$.c') IN (?, ?) AND json_extract(doc, '$.m.source') IS NULL",
			`((doc->>'status') COLLATE "C" IN ($3) OR doc->>'status' IS NULL) AND (doc->>'c') COLLATE "C" IN ($4, $5) AND doc->'m'->>'source' IS NULL`,
			[]any{"open", "x", "y"}, []any{"open", "x", "y"}},
		{"m = null AND tags != null AND m.score <= -2",
			"json_extract(doc, '$.m') IS NULL AND json_extract(doc, '$.tags') IS NOT NULL AND json_extract(doc, '$.m.score') <= ?",
			`doc->>'m' IS NULL AND doc->>'tags' IS NOT NULL AND ((doc->'m'->>'score')::float8) <= $3`,
			[]any{-2.0}, []any{-2.0}},
	}
	for _, tc := range tests {
		q, err := s.ParseQuery(tc.where)
		if err != nil {
			t.Fatal(err)
		}
		w, args := q.SQL(SQLite, "doc", 3)
		if w != tc.sqlite || !cmp.Equal(tc.sqlArgs, args) {
			t.Errorf("%q SQLite:\n got %s %#v\nwant %s %#v", tc.where, w, args, tc.sqlite, tc.sqlArgs)
		}
		w, args = q.SQL(Postgres, "doc", 3)
		if w != tc.pg || !cmp.Equal(tc.pgArg, args) {
			t.Errorf("%q Postgres:\n got %s %#v\nwant %s %#v", tc.where, w, args, tc.pg, tc.pgArg)
		}
	}
	// Field names that need quoting in a JSON path.
	p := mustLoad(t, map[string]string{"stores/h.json": `{"key": "{first-name}", "schema": {"first-name": {"type": "string"}, "o": {"type": "object", "fields": {"a-b": {"type": "number"}}}}, "indexes": ["o.a-b"]}`})
	q, err := p.Stores["h"].ParseQuery("first-name = 'x' AND o.a-b > 1")
	if err != nil {
		t.Fatal(err)
	}
	if w, _ := q.SQL(SQLite, "t.doc", 1); w != `json_extract(t.doc, '$."first-name"') = ? AND json_extract(t.doc, '$.o."a-b"') > ?` {
		t.Errorf("quoted SQLite path: %s", w)
	}
	if w, _ := q.SQL(Postgres, "t.doc", 1); w != `(t.doc->>'first-name') COLLATE "C" = $1 AND ((t.doc->'o'->>'a-b')::float8) > $2` {
		t.Errorf("quoted Postgres path: %s", w)
	}
	if got := p.Stores["h"].IndexExprs(SQLite, "doc"); !cmp.Equal(got, []string{`(json_extract(doc, '$.o."a-b"'))`}) {
		t.Errorf("IndexExprs = %q", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("SQL with a bad column name did not panic")
		}
	}()
	q.SQL(SQLite, "doc; DROP TABLE x", 1)
}

func TestIndexExprs(t *testing.T) {
	s := queryStore(t)
	if diff := cmp.Diff([]string{
		"(json_extract(doc, '$.n'))", "(json_extract(doc, '$.m.source'))", "(json_extract(doc, '$.at'))", "(json_extract(doc, '$.status'))", "(json_extract(doc, '$.b'))",
	}, s.IndexExprs(SQLite, "doc")); diff != "" {
		t.Errorf("SQLite (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{
		`(((doc->>'n')::float8))`, `((doc->'m'->>'source') COLLATE "C") NULLS FIRST`, `((doc->>'at') COLLATE "C") NULLS FIRST`,
		`((doc->>'status') COLLATE "C") NULLS FIRST`, `(((doc->>'b')::boolean)) NULLS FIRST`,
	}, s.IndexExprs(Postgres, "doc")); diff != "" {
		t.Errorf("Postgres (-want +got):\n%s", diff)
	}
	// Every index expression appears verbatim in the WHERE of a query on
	// its field, so the planner can match them.
	for i, path := range s.Indexes {
		q, err := s.ParseQuery(path + " = null")
		if err != nil {
			t.Fatal(err)
		}
		op := map[string]string{TypeNumber: " > 1", TypeBoolean: " = true", TypeDatetime: " > '2026-01-01T00:00:00Z'", TypeEnum: " = 'open'", TypeString: " = 'x'"}[s.Field(path).Type]
		q, _ = s.ParseQuery(path + op)
		for _, d := range []Dialect{SQLite, Postgres} {
			w, _ := q.SQL(d, "doc", 1)
			e := strings.TrimSuffix(s.IndexExprs(d, "doc")[i], " NULLS FIRST")
			e = e[1 : len(e)-1] // the element's parentheses
			if !strings.HasPrefix(w, e) {
				t.Errorf("%s %v: WHERE %s does not use %s", path, d, w, e)
			}
		}
	}
}

func TestPageSQL(t *testing.T) {
	s := queryStore(t)
	doc := decode(t, `{"id": "k1", "n": 3, "at": "2026-01-01T00:00:00Z", "m": {"source": "x", "score": 2}}`)
	tests := []struct {
		sort             string
		first            bool // no cursor
		sqlite, sqliteOB string
		pg, pgOB         string
		args             []any
	}{
		{"", true, "json_extract(doc, '$.n') > ?", "key ASC", `((doc->>'n')::float8) > $1`, `key COLLATE "C" ASC`, []any{1.0}},
		{"", false, "json_extract(doc, '$.n') > ? AND key > ?", "key ASC", `((doc->>'n')::float8) > $1 AND key COLLATE "C" > $2`, `key COLLATE "C" ASC`, []any{1.0, "k1"}},
		{"-n", false, "json_extract(doc, '$.n') > ? AND (json_extract(doc, '$.n'), key) < (?, ?)", "json_extract(doc, '$.n') DESC, key DESC",
			`((doc->>'n')::float8) > $1 AND (((doc->>'n')::float8), key COLLATE "C") < ($2, $3)`, `((doc->>'n')::float8) DESC, key COLLATE "C" DESC`, []any{1.0, 3.0, "k1"}},
		{"m.score", false, "json_extract(doc, '$.n') > ? AND (json_extract(doc, '$.m.score'), key) > (?, ?)", "json_extract(doc, '$.m.score') ASC, key ASC",
			`((doc->>'n')::float8) > $1 AND (((doc->'m'->>'score')::float8), key COLLATE "C") > ($2, $3)`, `((doc->'m'->>'score')::float8) ASC NULLS FIRST, key COLLATE "C" ASC`, []any{1.0, 2.0, "k1"}},
		{"-at", false, "json_extract(doc, '$.n') > ? AND ((json_extract(doc, '$.at'), key) < (?, ?) OR json_extract(doc, '$.at') IS NULL)", "json_extract(doc, '$.at') DESC, key DESC",
			`((doc->>'n')::float8) > $1 AND (((doc->>'at') COLLATE "C", key COLLATE "C") < ($2, $3) OR doc->>'at' IS NULL)`, `(doc->>'at') COLLATE "C" DESC NULLS LAST, key COLLATE "C" DESC`,
			[]any{1.0, "2026-01-01T00:00:00.000000000Z", "k1"}},
		{"status", false, "json_extract(doc, '$.n') > ? AND ((json_extract(doc, '$.status') IS NULL AND key > ?) OR json_extract(doc, '$.status') IS NOT NULL)", "json_extract(doc, '$.status') ASC, key ASC",
			`((doc->>'n')::float8) > $1 AND ((doc->>'status' IS NULL AND key COLLATE "C" > $2) OR doc->>'status' IS NOT NULL)`, `(doc->>'status') COLLATE "C" ASC NULLS FIRST, key COLLATE "C" ASC`, []any{1.0, "k1"}},
		{"-status", false, "json_extract(doc, '$.n') > ? AND (json_extract(doc, '$.status') IS NULL AND key < ?)", "json_extract(doc, '$.status') DESC, key DESC",
			`((doc->>'n')::float8) > $1 AND (doc->>'status' IS NULL AND key COLLATE "C" < $2)`, `(doc->>'status') COLLATE "C" DESC NULLS LAST, key COLLATE "C" DESC`, []any{1.0, "k1"}},
	}
	for _, tc := range tests {
		p, err := s.Page(PageRequest{Where: "n > 1", Sort: tc.sort})
		if err != nil {
			t.Fatal(err)
		}
		if !tc.first {
			if p, err = s.Page(PageRequest{Where: "n > 1", Sort: tc.sort, Cursor: p.Cursor("k1", doc)}); err != nil {
				t.Fatal(err)
			}
		}
		w, ob, args := p.SQL(SQLite, "doc", "key", 1)
		if w != tc.sqlite || ob != tc.sqliteOB {
			t.Errorf("sort %q SQLite:\n got %s ORDER BY %s\nwant %s ORDER BY %s", tc.sort, w, ob, tc.sqlite, tc.sqliteOB)
		}
		w, ob, pargs := p.SQL(Postgres, "doc", "key", 1)
		if w != tc.pg || ob != tc.pgOB {
			t.Errorf("sort %q Postgres:\n got %s ORDER BY %s\nwant %s ORDER BY %s", tc.sort, w, ob, tc.pg, tc.pgOB)
		}
		if !cmp.Equal(tc.args, pargs) || len(args) != len(pargs) {
			t.Errorf("sort %q args: sqlite %#v postgres %#v want %#v", tc.sort, args, pargs, tc.args)
		}
	}
}

type sqlRow struct {
	key string
	doc map[string]any
}

// pageCase is one page to fetch: the Page and the keys Go finds for it.
type pageCase struct {
	label string
	page  *Page
	want  []string
}

// differentialCases builds random documents and, for many queries, sorts
// and cursors, the page that Match, Compare and Limit give in Go.
func differentialCases(t *testing.T) (*Store, []sqlRow, []pageCase) {
	s := queryStore(t)
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(vals ...any) any { return vals[rng.IntN(len(vals))] }
	var rows []sqlRow
	for i := 0; i < 40; i++ {
		doc := map[string]any{
			"id":   fmt.Sprintf("k%02d", i),
			"n":    pick(json.Number("1"), json.Number("2.5"), json.Number("-3"), json.Number("1e2"), json.Number("0")),
			"tags": []any{},
		}
		if b := pick(true, false, nil, "absent"); b != "absent" {
			doc["b"] = b
		}
		if at := pick("2026-01-01T00:00:00Z", "2026-01-01T01:00:00.5+01:00", "2025-12-31T23:59:59.999999999-01:00", "2026-01-01T00:00:00.25Z", nil); at != nil || rng.IntN(2) == 0 {
			doc["at"] = at
		}
		doc["status"] = pick("open", "done", nil)
		switch rng.IntN(3) {
		case 0:
			doc["m"] = nil
		case 1:
			doc["m"] = map[string]any{"source": pick("web", "call", "a'b", "Web", "é"), "score": pick(json.Number("1"), json.Number("0.5"), nil)}
		}
		p, err := s.Prepare(doc, nil, timeZero)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, sqlRow{p.Key, p.Doc})
	}
	wheres := []string{"", "n > 0", "n >= 1 AND n <= 2.5", "b = true", "b != true", "b = null", "b != null",
		"at > '2026-01-01T00:00:00Z'", "at <= '2026-01-01T00:00:00.25Z'", "at = '2025-12-31T19:00:00+05:00'",
		"status IN ['open', null]", "status != 'open'", "m = null", "m.source = 'a''b'", "m.score < 1", "m.score = null",
		"status = 'done' AND n != 1"}
	sorts := []string{"", "n", "-n", "at", "-at", "m.score", "-m.score", "b", "-b", "status", "-status", "m.source", "-m.source"}
	limit := 3
	var cases []pageCase
	for _, w := range wheres {
		for _, so := range sorts {
			base, err := s.Page(PageRequest{Where: w, Sort: so, Limit: &limit})
			if err != nil {
				t.Fatal(err)
			}
			var all []sqlRow
			for _, r := range rows {
				if base.Match(r.key, r.doc) {
					all = append(all, r)
				}
			}
			slices.SortFunc(all, func(a, b sqlRow) int { return base.Compare(a.key, a.doc, b.key, b.doc) })
			for start := -1; start < len(all); start++ {
				p := base
				if start >= 0 {
					p, err = s.Page(PageRequest{Where: w, Sort: so, Limit: &limit, Cursor: base.Cursor(all[start].key, all[start].doc)})
					if err != nil {
						t.Fatal(err)
					}
				}
				keys := []string{}
				for _, r := range all[start+1:] {
					if len(keys) == limit {
						break
					}
					if !p.Match(r.key, r.doc) {
						t.Fatalf("where %q sort %q: %s after the cursor does not Match", w, so, r.key)
					}
					keys = append(keys, r.key)
				}
				cases = append(cases, pageCase{fmt.Sprintf("where %q sort %q after %d", w, so, start), p, keys})
			}
		}
	}
	return s, rows, cases
}

// compareRuns checks the pages a database returned, one list of keys a
// case.
func compareRuns(t *testing.T, cases []pageCase, got [][]string) {
	t.Helper()
	bad := 0
	for i, c := range cases {
		if g, w := strings.Join(got[i], ","), strings.Join(c.want, ","); g != w {
			t.Errorf("%s: SQL gave [%s], Go gave [%s]", c.label, g, w)
			if bad++; bad > 10 {
				t.Fatal("too many differences")
			}
		}
	}
	t.Logf("%d pages compared", len(cases))
}

// openSQLite opens an in-memory SQLite database (modernc, the driver the
// SQLite backend uses) on one connection, so that every statement sees the
// same database.
func openSQLite(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

// openPostgres connects to the test server (pgx, the driver the PostgreSQL
// backend uses); the tables a test creates are temporary, the
// connection's own.
func openPostgres(t *testing.T) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), testenv.PostgresURL(t))
	if err != nil {
		t.Fatalf("PostgreSQL at $SATCHEL_TEST_POSTGRES is not reachable: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// queryStrings runs a query of one text column and returns its rows.
func queryStrings(ctx context.Context, conn *pgx.Conn, q string, args ...any) ([]string, error) {
	rows, err := conn.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// TestSQLiteAgreesWithMatch runs the compiled SQL of many queries, sorts
// and cursors on SQLite, in this process, with their arguments bound as
// the backend binds them, and checks that every page holds exactly the
// documents that Match, Compare and Limit give in Go: the two evaluations
// of one representation must never differ.
func TestSQLiteAgreesWithMatch(t *testing.T) {
	db := openSQLite(t)
	ctx := t.Context()
	_, rows, cases := differentialCases(t)
	if _, err := db.ExecContext(ctx, "CREATE TABLE d(key TEXT PRIMARY KEY, doc TEXT)"); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		js, _ := json.Marshal(r.doc)
		if _, err := db.ExecContext(ctx, "INSERT INTO d VALUES (?, ?)", r.key, string(js)); err != nil {
			t.Fatal(err)
		}
	}
	got := make([][]string, len(cases))
	for i, c := range cases {
		where, orderBy, args := c.page.SQL(SQLite, "doc", "key", 1)
		q := fmt.Sprintf("SELECT key FROM d WHERE %s ORDER BY %s LIMIT %d", where, orderBy, c.page.Limit)
		rs, err := db.QueryContext(ctx, q, args...)
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.label, err, q)
		}
		got[i] = []string{}
		for rs.Next() {
			var k string
			if err := rs.Scan(&k); err != nil {
				t.Fatal(err)
			}
			got[i] = append(got[i], k)
		}
		if err := rs.Err(); err != nil {
			t.Fatalf("%s: %v", c.label, err)
		}
		rs.Close()
	}
	compareRuns(t, cases, got)
}

// TestPostgresAgreesWithMatch is TestSQLiteAgreesWithMatch on PostgreSQL
// through pgx, the $N parameters bound by the server.
func TestPostgresAgreesWithMatch(t *testing.T) {
	conn := openPostgres(t)
	ctx := t.Context()
	_, rows, cases := differentialCases(t)
	if _, err := conn.Exec(ctx, `CREATE TEMP TABLE d(key text COLLATE "C" PRIMARY KEY, doc jsonb NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		js, _ := json.Marshal(r.doc)
		if _, err := conn.Exec(ctx, "INSERT INTO d VALUES ($1, $2)", r.key, string(js)); err != nil {
			t.Fatal(err)
		}
	}
	got := make([][]string, len(cases))
	for i, c := range cases {
		where, orderBy, args := c.page.SQL(Postgres, "doc", "key", 1)
		q := fmt.Sprintf("SELECT key FROM d WHERE %s ORDER BY %s LIMIT %d", where, orderBy, c.page.Limit)
		keys, err := queryStrings(ctx, conn, q, args...)
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.label, err, q)
		}
		got[i] = append([]string{}, keys...)
	}
	compareRuns(t, cases, got)
}

// TestIndexesAreUsed creates the indexes of IndexExprs and asks each
// database's planner whether a query on an indexed field uses them.
func TestIndexesAreUsed(t *testing.T) {
	s := queryStore(t)
	queries := []string{"n > 1", "m.source = 'x'", "at >= '2026-01-01T00:00:00Z'", "status IN ['open', 'done']", "b = true"}
	t.Run("sqlite", func(t *testing.T) {
		db := openSQLite(t)
		ctx := t.Context()
		if _, err := db.ExecContext(ctx, "CREATE TABLE d(key TEXT PRIMARY KEY, doc TEXT)"); err != nil {
			t.Fatal(err)
		}
		for i, e := range s.IndexExprs(SQLite, "doc") {
			if _, err := db.ExecContext(ctx, fmt.Sprintf("CREATE INDEX i%d ON d(%s)", i, e)); err != nil {
				t.Fatal(err)
			}
		}
		for _, w := range queries {
			q, _ := s.ParseQuery(w)
			where, args := q.SQL(SQLite, "doc", 1)
			rs, err := db.QueryContext(ctx, "EXPLAIN QUERY PLAN SELECT key FROM d WHERE "+where, args...)
			if err != nil {
				t.Fatalf("%s: %v", w, err)
			}
			var plan strings.Builder
			for rs.Next() {
				var id, parent, unused int
				var detail string
				if err := rs.Scan(&id, &parent, &unused, &detail); err != nil {
					t.Fatal(err)
				}
				plan.WriteString(detail + "\n")
			}
			rs.Close()
			if !strings.Contains(plan.String(), "USING INDEX i") {
				t.Errorf("%s uses no index:\n%s", w, plan.String())
			}
		}
	})
	t.Run("postgres", func(t *testing.T) {
		conn := openPostgres(t)
		ctx := t.Context()
		if _, err := conn.Exec(ctx, `CREATE TEMP TABLE d(key text COLLATE "C" PRIMARY KEY, doc jsonb NOT NULL)`); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, "SET enable_seqscan = off"); err != nil {
			t.Fatal(err)
		}
		for i, e := range s.IndexExprs(Postgres, "doc") {
			if _, err := conn.Exec(ctx, fmt.Sprintf("CREATE INDEX i%d ON d(%s)", i, e)); err != nil {
				t.Fatal(err)
			}
		}
		for _, w := range queries {
			q, _ := s.ParseQuery(w)
			where, args := q.SQL(Postgres, "doc", 1)
			lines, err := queryStrings(ctx, conn, "EXPLAIN (COSTS OFF) SELECT key FROM d WHERE "+where, args...)
			if err != nil {
				t.Fatalf("%s: %v", w, err)
			}
			if plan := strings.Join(lines, "\n"); !strings.Contains(plan, "Index Cond") {
				t.Errorf("%s uses no index:\n%s", w, plan)
			}
		}
	})
}
