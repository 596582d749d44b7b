package cli

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/memory"
	"github.com/satchel-dev/satchel/backend/sqlite"
)

// migrateResult is what `satchel migrate --json` prints.
type migrateResult struct {
	Backend       string `json:"backend"`
	SchemaVersion int    `json:"schema_version"`
}

func newMigrateCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "migrate",
		GroupID: groupAdmin,
		Short:   "Bring the database's schema up to date",
		Long: `Apply the migrations the database (--db, else $SATCHEL_DB) lacks, then
print its schema version. Opening a database migrates it anyway; this
command lets an operator do it once, before starting many processes or
server replicas, and see the version. Migrations are serialised (SQLite:
one BEGIN IMMEDIATE transaction; PostgreSQL: a lock), so running it while
other processes start is safe. A database whose schema is newer than this
program is refused.

Prints "schema version N"; with --json, {"backend": ..., "schema_version": N}.`,
		Example: `  satchel migrate --db team.db
  satchel migrate --db postgres://satchel@db/satchel --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s, err := a.open(ctx)
			if err != nil {
				return err
			}
			b := s.Backend()
			if m, ok := b.(interface{ Migrate(context.Context) error }); ok {
				if err := m.Migrate(ctx); err != nil {
					return err
				}
			}
			name, v, err := schemaVersion(ctx, b)
			if err != nil {
				return err
			}
			return a.emit(migrateResult{Backend: name, SchemaVersion: v}, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "schema version %d\n", v)
				return err
			})
		},
	}
}

// schemaVersion names a backend and reads its schema version: from its
// SchemaVersion method when it has one, else (SQLite) from the
// schema_migrations table of its file.
func schemaVersion(ctx context.Context, b backend.Backend) (string, int, error) {
	switch b := b.(type) {
	case *memory.Backend:
		return "", 0, refuse("the memory: database has no schema to migrate")
	case interface {
		SchemaVersion(context.Context) (int, error)
	}:
		v, err := b.SchemaVersion(ctx)
		return backendKind(b), v, err
	case *sqlite.Backend:
		db, err := sql.Open("sqlite", b.Path()+"?_query_only=1&_busy_timeout=10000")
		if err != nil {
			return "", 0, err
		}
		defer db.Close()
		var v int
		if err := db.QueryRowContext(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&v); err != nil {
			return "", 0, fmt.Errorf("reading the schema version of %s: %w", b.Path(), err)
		}
		return "sqlite", v, nil
	}
	return "", 0, refuse("this backend (%T) does not report a schema version", b)
}

// backendKind names a backend by its package: "sqlite", "postgres", ...
func backendKind(b any) string {
	t := strings.TrimPrefix(fmt.Sprintf("%T", b), "*")
	name, _, _ := strings.Cut(t, ".")
	return name
}
