package backendtest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel/backend"
)

// checkDocsByScope: a backend.DocCounter counts the current documents of
// every store of every scope (a shared store's under scope ""), with the
// newest update time, and a purged scope's are gone from the count.
// Other backends skip it.
func checkDocsByScope(t *testing.T, b backend.Backend) {
	dc, ok := backend.As[backend.DocCounter](b)
	db, ok2 := backend.As[backend.Documents](b)
	if !ok || !ok2 {
		t.Skip("not a backend.DocCounter")
	}
	ctx := t.Context()
	put := func(store, scope, key string) backend.Doc {
		t.Helper()
		d, err := db.ReplaceDoc(ctx, backend.DocReplace{DocID: backend.DocID{Store: store, Scope: scope, Key: key},
			Doc: map[string]any{"k": key}, JSON: []byte(`{"k":"` + key + `"}`), Version: 1})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	put("notes", "a", "1")
	put("notes", "a", "2")
	last := put("facts", "a", "3")
	put("notes", "b", "1")
	put("shared", "", "1")
	// A new version of a document is still one document.
	if _, err := db.ReplaceDoc(ctx, backend.DocReplace{DocID: backend.DocID{Store: "notes", Scope: "b", Key: "1"},
		Doc: map[string]any{"k": "again"}, JSON: []byte(`{"k":"again"}`), Version: 2, Expect: 1}); err != nil {
		t.Fatal(err)
	}
	l, err := dc.DocsByScope(ctx)
	if err != nil {
		t.Fatalf("DocsByScope: %v", err)
	}
	var got []string
	for _, d := range l {
		got = append(got, fmt.Sprintf("%s/%s: %d", d.Scope, d.Store, d.Docs))
		if d.Scope == "a" && d.Store == "facts" && d.Updated.Before(last.Updated) {
			t.Errorf("DocsByScope: store facts of scope a updated %s, before its last document's %s", d.Updated, last.Updated)
		}
	}
	if want := "/shared: 1, a/facts: 1, a/notes: 2, b/notes: 1"; strings.Join(got, ", ") != want {
		t.Errorf("DocsByScope = %q, want %q, in that order", got, want)
	}
	if err := b.PurgeScope(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	l, err = dc.DocsByScope(ctx)
	if err != nil || len(l) != 2 || l[1].Scope != "b" {
		t.Errorf("DocsByScope after purging a = %+v, %v", l, err)
	}
}
