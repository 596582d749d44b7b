package sqlite_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/sqlite"
	"github.com/satchel-dev/satchel/internal/bench"
	"github.com/satchel-dev/satchel/internal/collection"
)

// TestIndexedQueriesUseIndexes fills the W2 store twice, with and without
// "indexes", and asks SQLite for the plan of the statements QueryDocs
// runs: a query on an indexed field searches that field's index, the same
// query on the store without indexes cannot, and a list walks the key
// order.
func TestIndexedQueriesUseIndexes(t *testing.T) {
	ctx := context.Background()
	b, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "satchel.db"))
	if err != nil {
		t.Fatal(err)
	}
	st := satchel.New(b)
	defer st.Close()
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
	for _, name := range []string{"notes", "notes-ix"} {
		c, err := st.Collection(ctx, p, "s1", name)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2000; i++ {
			if _, _, err := c.Set(ctx, bench.W2Doc(1, i, 0)); err != nil {
				t.Fatal(err)
			}
		}
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
				return pg.SQL(collection.SQLite, jsonCol, keyCol, argStart)
			}}
		out, err := sqlite.ExplainDocs(ctx, b, q)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, tc := range []struct{ where, sort, index string }{
		{"company_id = 'c0042'", "", "company_id"},
		{"topic IN ['t001','t002'] AND confidence > 0.5", "", "topic"},
		{"confidence > 0.9 AND company_id = 'c0001'", "", "company_id"},
		{"", "-confidence", "confidence"},
		{"company_id = 'c0001'", "-updated_at", "company_id"},
	} {
		got := plan("notes-ix", tc.where, tc.sort)
		if !strings.Contains(got, "USING INDEX docs/notes-ix/"+tc.index+"/") {
			t.Errorf("indexed store, where %q sort %q: the plan does not use the %s index:\n%s", tc.where, tc.sort, tc.index, got)
		}
		if got := plan("notes", tc.where, tc.sort); strings.Contains(got, "docs/") {
			t.Errorf("store without indexes, where %q: %s", tc.where, got)
		}
	}
	if got := plan("notes-ix", "", ""); !strings.Contains(got, "sqlite_autoindex_docs_1") || strings.Contains(got, "TEMP B-TREE") {
		t.Errorf("a list should walk the key order without sorting:\n%s", got)
	}
}
