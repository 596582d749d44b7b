package postgres_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/postgres"
	"github.com/satchel-dev/satchel/internal/testenv"
	"github.com/satchel-dev/satchel/satcheltest"
)

var docSchemas atomic.Int64

// openDocs opens a backend in a schema of its own, dropped at the end.
func openDocs(t *testing.T) *postgres.Backend {
	url := testenv.PostgresURL(t)
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

// TestConformance runs the whole suite on PostgreSQL, each subtest in a
// schema of its own, and again with each optional capability hidden: those
// runs side by side (each waits on the server as much as it computes).
func TestConformance(t *testing.T) {
	testenv.PostgresURL(t)
	satcheltest.Run(t, func(t *testing.T) backend.Backend { return openDocs(t) })
}

// TestQuotaRaceTwoBackends races writers of two Backends (two pools, as
// two processes have) on one schema to a scope's quotas.
func TestQuotaRaceTwoBackends(t *testing.T) {
	url := testenv.PostgresURL(t)
	schema := fmt.Sprintf("satchel_quota_%d", os.Getpid())
	a, err := postgres.OpenFresh(context.Background(), url, schema)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		a.Close()
		if err := postgres.DropSchema(context.Background(), url, schema); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	b, err := postgres.Open(context.Background(), url+sep+"search_path="+schema)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	satcheltest.RunQuotaRace(t, a, b)
}
