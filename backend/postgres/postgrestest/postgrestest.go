// Package postgrestest gives tests a PostgreSQL schema of their own,
// migrated and empty, from the pool of internal/pgtest.
package postgrestest

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"github.com/satchel-dev/satchel/backend/postgres"
	"github.com/satchel-dev/satchel/internal/pgtest"
	"github.com/satchel-dev/satchel/internal/testenv"
)

// Kind is a schema as postgres.Open leaves a new one: every migration
// applied, no rows but the record of the migrations. (The tests of package
// postgres itself, which cannot import this package, state the same.)
var Kind = pgtest.Kind{
	Name: "satchel",
	Migrate: func(ctx context.Context, url string) error {
		b, err := postgres.Open(ctx, url)
		if err != nil {
			return err
		}
		return b.Close()
	},
	Keep: map[string]string{"schema_migrations": "SELECT version, name, kind FROM schema_migrations ORDER BY version"},
}

var n atomic.Int64

// Name returns a schema name no other test of any process uses at the
// same time, beginning with prefix.
func Name(prefix string) string {
	return fmt.Sprintf("%s_%d_%d", prefix, os.Getpid(), n.Add(1))
}

// Schema gives t the schema name on the server at url (a postgres:// URL
// without search_path), migrated and empty, until t ends, and returns the
// URL of the schema; a schema that already has that name is dropped
// first. It replaces postgres.OpenFresh and DropSchema in tests.
func Schema(t testing.TB, url, name string) string {
	t.Helper()
	pgtest.Schema(t, url, name, Kind)
	return pgtest.WithSearchPath(url, name)
}

// Open opens a backend, closed when t ends, in a schema of its own on the
// test server (testenv.PostgresURL), and returns it with the URL of its
// schema.
func Open(t testing.TB) (*postgres.Backend, string) {
	t.Helper()
	return OpenAt(t, testenv.PostgresURL(t), Name("satchel_test"))
}

// OpenAt opens a backend, closed when t ends, in the schema name of the
// server at url, and returns it with the URL of the schema.
func OpenAt(t testing.TB, url, name string) (*postgres.Backend, string) {
	t.Helper()
	u := Schema(t, url, name)
	b, err := postgres.Open(t.Context(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b, u
}
