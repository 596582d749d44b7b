package inspector

import (
	"testing"

	"github.com/satchel-dev/satchel/backend/postgres/postgrestest"
	"github.com/satchel-dev/satchel/internal/testenv"
)

// The inspector over PostgreSQL: the same pages, from a schema of its own.
func TestPagesOnPostgres(t *testing.T) {
	url := testenv.PostgresURL(t)
	checkPages(t, newFixtureAt(t, postgrestest.Schema(t, url, postgrestest.Name("inspector"))))
}
