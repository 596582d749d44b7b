package satchel_test

import (
	"testing"
	"testing/fstest"

	"github.com/satchel-dev/satchel"
)

// TestAuditSharedStoreHasNoScope: a change to a shared store is audited
// without a scope, whichever scope the operator named, on each backend;
// a per-scope store's change keeps its scope.
func TestAuditSharedStoreHasNoScope(t *testing.T) {
	p, err := satchel.LoadProjectFS(fstest.MapFS{
		"stores/lib.json":   {Data: []byte(`{"name": "lib", "shared": true, "entity": {"name": "Book", "key": "{isbn}", "schema": {"isbn": {"type": "string"}}}}`)},
		"stores/notes.json": {Data: []byte(`{"name": "notes", "entity": {"name": "Note", "key": "{id}", "schema": {"id": {"type": "string"}}}}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, open := range exportBackends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			st := open(t)
			for _, c := range []struct{ store, field string }{{"lib", "isbn"}, {"notes", "id"}} {
				col, err := st.Collection(ctx, p, "acme", c.store, satchel.Force())
				if err != nil {
					t.Fatal(err)
				}
				if _, _, err := col.Set(ctx, map[string]any{c.field: "1"}); err != nil {
					t.Fatal(err)
				}
			}
			page, err := st.Audit(ctx, satchel.AuditQuery{})
			if err != nil {
				t.Fatal(err)
			}
			scopes := map[string]string{}
			for _, e := range page.Entries {
				scopes[e.Collection] = e.Scope
			}
			if s, ok := scopes["lib"]; !ok || s != "" || scopes["notes"] != "acme" {
				t.Errorf("scopes of the changes: %q, want lib \"\" and notes acme", scopes)
			}
			if page, _ := st.Audit(ctx, satchel.AuditQuery{Scope: "acme"}); len(page.Entries) != 1 {
				t.Errorf("audit of scope acme lists %d entries, want the note's only", len(page.Entries))
			}
		})
	}
}
