package luahost_test

import (
	"strings"
	"testing"

	"github.com/satchel-dev/satchel/backend/postgres/postgrestest"
	"github.com/satchel-dev/satchel/internal/testenv"
	"github.com/satchel-dev/satchel/luahost"
)

// postgresSchema returns the URL of a schema of the test server, migrated
// and empty, its own until t ends.
func postgresSchema(t testing.TB) string {
	t.Helper()
	url := testenv.PostgresURL(t)
	return postgrestest.Schema(t, url, postgrestest.Name("luahost"))
}

// TestPostgres: the examples, a fanout race and an atomic run's
// conflict on PostgreSQL.
func TestPostgres(t *testing.T) {
	testenv.PostgresURL(t) // one skip for all, when there is no server
	t.Run("examples", func(t *testing.T) { checkExamples(t, "postgres") })
	t.Run("atomic", func(t *testing.T) { checkAtomic(t, "postgres") })
	t.Run("race", func(t *testing.T) {
		_, _, err := exec(t, open(t, "postgres"), `fanout(function(t) store.write("same.md", t.v) end, {v = "1"}, {v = "2"})`, luahost.Config{})
		if err == nil || !strings.Contains(err.Error(), "write-write race on same.md") {
			t.Fatalf("race: %v", err)
		}
	})
}
