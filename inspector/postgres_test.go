package inspector

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/satchel-dev/satchel/backend/postgres"
	"github.com/satchel-dev/satchel/internal/testenv"
)

// The inspector over PostgreSQL: the same pages, from a schema of its own.
func TestPagesOnPostgres(t *testing.T) {
	url := testenv.PostgresURL(t)
	schema := fmt.Sprintf("inspector_%d", time.Now().UnixNano())
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	_, err = conn.Exec(context.Background(), "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize())
	conn.Close(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { postgres.DropSchema(context.Background(), url, schema) })
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	checkPages(t, newFixtureAt(t, url+sep+"search_path="+schema))
}
