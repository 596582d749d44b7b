package postgres

import (
	"context"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/satchel-dev/satchel/backend"
)

// ExplainDocs returns PostgreSQL's plan of the statement QueryDocs runs for
// q, one line per step.
func ExplainDocs(ctx context.Context, b *Backend, q backend.DocQuery) (string, error) {
	query, args := b.docQuery(q)
	rows, _ := b.pool.Query(ctx, "EXPLAIN (COSTS OFF) "+query, args...)
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return strings.Join(lines, "\n"), err
}

// IndexName is the name EnsureIndexes gives the index of a store on an
// expression.
func IndexName(store, expr string) string { return indexPrefix(store) + shortHash(expr) }

// Analyze updates the planner's statistics of the documents.
func Analyze(ctx context.Context, b *Backend) error {
	_, err := b.pool.Exec(ctx, "ANALYZE docs")
	return err
}

// SetAnalyzeEvery sets how many document writes pass between two checks
// of the statistics of docs, and returns a function that restores it.
func SetAnalyzeEvery(n int64) func() {
	old := analyzeEvery
	analyzeEvery = n
	return func() { analyzeEvery = old }
}

// LastAnalyzed returns when docs was last analyzed by an ANALYZE command
// (not autovacuum; zero: never).
func LastAnalyzed(ctx context.Context, b *Backend) (time.Time, error) {
	var t *time.Time
	err := b.pool.QueryRow(ctx, `SELECT last_analyze FROM pg_stat_user_tables WHERE relid = 'docs'::regclass`).Scan(&t)
	if t == nil {
		return time.Time{}, err
	}
	return *t, err
}
