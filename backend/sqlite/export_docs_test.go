package sqlite

import (
	"context"
	"strings"

	"github.com/satchel-dev/satchel/backend"
)

// ExplainDocs returns SQLite's plan of the statement QueryDocs runs for q,
// one line per step.
func ExplainDocs(ctx context.Context, b *Backend, q backend.DocQuery) (string, error) {
	query, args := b.docQuery(q)
	conn, err := b.r.Conn(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	// EXPLAIN does not read the database, so it would plan with the
	// schema the connection last loaded: read first, as a query does.
	var n int
	if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM docs").Scan(&n); err != nil {
		return "", err
	}
	rows, err := conn.QueryContext(ctx, "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			return "", err
		}
		lines = append(lines, detail)
	}
	return strings.Join(lines, "\n"), rows.Err()
}
