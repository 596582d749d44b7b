package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/memory"
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
			if m, ok := b.(backend.Migrator); ok {
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

// schemaVersion names a backend ("sqlite", "postgres", ...) and asks it
// for its schema version.
func schemaVersion(ctx context.Context, b backend.Backend) (string, int, error) {
	if _, ok := b.(*memory.Backend); ok {
		return "", 0, refuse("the memory: database has no schema to migrate")
	}
	sv, ok := b.(backend.Migrator)
	if !ok {
		return "", 0, refuse("this backend (%T) does not report a schema version", b)
	}
	v, err := sv.SchemaVersion(ctx)
	return backendKind(b), v, err
}

// backendKind names a backend by its package: "sqlite", "postgres", ...
func backendKind(b any) string {
	t := strings.TrimPrefix(fmt.Sprintf("%T", b), "*")
	name, _, _ := strings.Cut(t, ".")
	return name
}
