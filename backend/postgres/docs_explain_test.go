package postgres_test

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/postgres"
	"github.com/satchel-dev/satchel/internal/bench"
	"github.com/satchel-dev/satchel/internal/collection"
)

// TestIndexedQueriesUseIndexes fills the W2 store twice, with and without
// "indexes", and asks PostgreSQL for the plan of the statements QueryDocs
// runs: a selective query on an indexed field scans that field's index,
// and the same query on the store without indexes cannot.
func TestIndexedQueriesUseIndexes(t *testing.T) {
	ctx := context.Background()
	b := openDocs(t)
	st := satchel.New(b)
	rename := func(def, name string) []byte {
		return []byte(strings.Replace(def, `"name": "research-notes"`, `"name": "`+name+`"`, 1))
	}
	fsys := fstest.MapFS{
		"stores/notes.json":    {Data: rename(bench.W2StoreDefinition(), "notes")},
		"stores/notes-ix.json": {Data: rename(bench.W2StoreDefinitionIndexed(), "notes-ix")},
	}
	p, err := satchel.LoadProjectFS(fsys)
	if err != nil {
		t.Fatal(err)
	}
	dp, err := collection.LoadProjectFS(fsys)
	if err != nil {
		t.Fatal(err)
	}
	const n = 3000
	for _, name := range []string{"notes", "notes-ix"} {
		c, err := st.Collection(ctx, p, "s1", name)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			if _, _, err := c.Set(ctx, bench.W2Doc(1, i, 0)); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The statistics of a table this young come from ANALYZE (autovacuum
	// would run it soon).
	if err := postgres.Analyze(ctx, b); err != nil {
		t.Fatal(err)
	}
	plan := func(store, where, sort string) string {
		s, err := dp.Store(store)
		if err != nil {
			t.Fatal(err)
		}
		pg, err := s.Page(collection.PageRequest{Where: where, Sort: sort})
		if err != nil {
			t.Fatal(err)
		}
		q := backend.DocQuery{Store: store, Scope: "s1", Limit: pg.Limit + 1,
			SQL: func(_, jsonCol, keyCol string, argStart int) (string, string, []any) {
				return pg.SQL(collection.Postgres, jsonCol, keyCol, argStart)
			}}
		out, err := postgres.ExplainDocs(ctx, b, q)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	indexName := func(field string) string {
		s, _ := dp.Store("notes-ix")
		for i, f := range s.Indexes {
			if f == field {
				return postgres.IndexName("notes-ix", s.IndexExprs(collection.Postgres, "doc")[i])
			}
		}
		t.Fatalf("no index on %s", field)
		return ""
	}
	for _, tc := range []struct{ where, sort, index string }{
		{"company_id = 'c0042'", "", "company_id"},
		{"topic = 't002' AND confidence > 0.99", "", "topic"},
		{"confidence > 0.99", "-confidence", "confidence"},
		{"", "-confidence", "confidence"},
	} {
		got := plan("notes-ix", tc.where, tc.sort)
		if !strings.Contains(got, indexName(tc.index)) {
			t.Errorf("indexed store, where %q sort %q: the plan does not use the %s index:\n%s", tc.where, tc.sort, tc.index, got)
		}
		if got := plan("notes", tc.where, tc.sort); strings.Contains(got, "docs_") && !strings.Contains(got, "docs_store_scope_key") {
			t.Errorf("store without indexes, where %q: %s", tc.where, got)
		}
	}
}
