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

var behaviourSchemas atomic.Int64

// TestBehaviour runs satchel's behaviour suite on PostgreSQL, each subtest
// in a schema of its own.
func TestBehaviour(t *testing.T) {
	url := os.Getenv("SATCHEL_TEST_POSTGRES")
	if url == "" {
		t.Skip("SATCHEL_TEST_POSTGRES not set: skipping PostgreSQL tests")
	}
	satcheltest.RunBehaviour(t, func(t *testing.T) backend.Backend {
		schema := fmt.Sprintf("satchel_behaviour_%d_%d", os.Getpid(), behaviourSchemas.Add(1))
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
	})
}
