package postgres_test

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/postgres"
	"github.com/satchel-dev/satchel/satcheltest"
)

var docSchemas atomic.Int64

// openDocs opens a backend in a schema of its own, dropped at the end.
func openDocs(t *testing.T) *postgres.Backend {
	url := os.Getenv("SATCHEL_TEST_POSTGRES")
	if url == "" {
		t.Skip("SATCHEL_TEST_POSTGRES not set: skipping PostgreSQL tests")
	}
	schema := fmt.Sprintf("satchel_docs_%d_%d", os.Getpid(), docSchemas.Add(1))
	b, err := postgres.OpenFresh(context.Background(), url, schema)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		b.Close()
		if err := postgres.DropSchema(context.Background(), url, schema); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return b
}

// TestDocuments runs the collections suite on PostgreSQL, each subtest in
// a schema of its own.
func TestDocuments(t *testing.T) {
	satcheltest.RunDocuments(t, func(t *testing.T) backend.Backend { return openDocs(t) })
}
