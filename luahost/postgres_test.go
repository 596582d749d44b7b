package luahost_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/satchel-dev/satchel/backend/postgres"
	"github.com/satchel-dev/satchel/internal/testenv"
	"github.com/satchel-dev/satchel/luahost"
)

// postgresSchema returns the URL of a fresh schema of the test server,
// dropped when t ends.
func postgresSchema(t testing.TB) string {
	t.Helper()
	url := testenv.PostgresURL(t)
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "luahost_" + hex.EncodeToString(b[:])
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	_, err = conn.Exec(context.Background(), "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize())
	conn.Close(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = postgres.DropSchema(context.Background(), url, schema) })
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	return url + sep + "search_path=" + schema
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
