package postgres_test

import (
	"context"
	"testing"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/postgres"
	"github.com/satchel-dev/satchel/backend/postgres/postgrestest"
	"github.com/satchel-dev/satchel/internal/testenv"
	"github.com/satchel-dev/satchel/satcheltest"
)

// openDocs opens a backend in a schema of its own, given back at the end.
func openDocs(t *testing.T) *postgres.Backend {
	b, _ := postgrestest.OpenAt(t, testenv.PostgresURL(t), postgrestest.Name("satchel_docs"))
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
	a, u := postgrestest.OpenAt(t, url, postgrestest.Name("satchel_quota"))
	b, err := postgres.Open(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	satcheltest.RunQuotaRace(t, a, b)
}
