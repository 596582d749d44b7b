package postgres_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/postgres"
)

// TestDocsAnalyzed writes documents into an empty table until the backend
// analyzes it: the planner must not choose among a store's indexes
// without statistics.
func TestDocsAnalyzed(t *testing.T) {
	defer postgres.SetAnalyzeEvery(50)()
	b := openDocs(t)
	ctx := t.Context()
	if at, err := postgres.LastAnalyzed(ctx, b); err != nil || !at.IsZero() {
		t.Fatalf("a new table analyzed at %v (%v)", at, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; ; i++ {
		_, err := b.ReplaceDoc(ctx, backend.DocReplace{
			DocID:   backend.DocID{Store: "s", Scope: "a", Key: fmt.Sprint(i)},
			JSON:    []byte(`{"n":1}`),
			Version: 1,
		})
		if err != nil {
			t.Fatal(err)
		}
		if i%50 != 49 {
			continue
		}
		at, err := postgres.LastAnalyzed(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		if !at.IsZero() {
			t.Logf("analyzed after %d documents", i+1)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("docs not analyzed after %d documents", i+1)
		}
	}
}
