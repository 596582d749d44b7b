package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/satchel-dev/satchel"
)

// migrateResult is what `satchel migrate --json` prints.
type migrateResult struct {
	Backend       string `json:"backend"`
	SchemaVersion int    `json:"schema_version"`
}

// migrateScript is what `satchel migrate --print --json` prints.
type migrateScript struct {
	Backend string `json:"backend"`
	SQL     string `json:"sql"`
}

func newMigrateCmd(a *app) *cobra.Command {
	var contract, print, all bool
	cmd := &cobra.Command{
		Use:     "migrate",
		GroupID: groupAdmin,
		Short:   "Bring the database's schema up to date",
		Long: `Apply the expand (additive) migrations the database (--db, else
$SATCHEL_DB) lacks, then print its schema version. Opening a database
migrates it anyway; this command lets an operator do it once, before
starting many processes or server replicas, and see the version.
Migrations are serialised (SQLite: one BEGIN IMMEDIATE transaction;
PostgreSQL: a lock), so running it while other processes start is safe.
An older satchel keeps running on a schema that is newer by expand
migrations only; a schema with a contract migration newer than this
program is refused.

--contract also applies the contract (destructive) migrations, which
no open applies: it is refused, naming them, while a process that
knows only an older schema still uses the database (every process
registers itself while it has the database open). Run it once every
replica runs the new satchel (docs/operations.md, "Upgrades").

--print prints the SQL that migrating would run (with --contract, the
contract migrations too), without running it: the migrations the
database lacks and the rows of schema_migrations that record them, in
one transaction, for an operator whose application role may not run
DDL. It reads the database only. --print --all prints the whole schema
from empty and needs no database connection: --db (or $SATCHEL_DB) only
says which kind, a postgres:// URL for PostgreSQL, else SQLite.

Prints "schema version N"; with --json, {"backend": ..., "schema_version": N}.
--print prints the SQL ("" when nothing is to apply: nothing is printed);
with --json, {"backend": ..., "sql": ...}.`,
		Example: `  satchel migrate --db team.db
  satchel migrate --db postgres://satchel@db/satchel --json
  satchel migrate --db postgres://satchel@db/satchel --contract
  satchel migrate --db postgres://satchel@db/satchel --print > upgrade.sql
  satchel migrate --db postgres:// --print --all > schema.sql`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if all && !print {
				return refuse("--all goes with --print: satchel migrate --print --all prints the whole schema")
			}
			if print {
				return a.printMigrations(ctx, contract, all)
			}
			s, err := a.open(ctx)
			if err != nil {
				return err
			}
			sc, err := s.Migrate(ctx, contract)
			if err != nil {
				return err
			}
			name, v := sc.Backend, sc.Version
			return a.emit(migrateResult{Backend: name, SchemaVersion: v}, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "schema version %d\n", v)
				return err
			})
		},
	}
	cmd.Flags().BoolVar(&contract, "contract", false, "also apply the contract (destructive) migrations; refused while an older satchel uses the database")
	cmd.Flags().BoolVar(&print, "print", false, "print the SQL that migrating would run, without running it")
	cmd.Flags().BoolVar(&all, "all", false, "with --print: the whole schema from empty, without connecting to a database")
	return cmd
}

// printMigrations is satchel migrate --print: the backend is the kind of
// --db; only --all leaves the database alone.
func (a *app) printMigrations(ctx context.Context, contract, all bool) error {
	dsn, err := a.dsn()
	if err != nil {
		return err
	}
	kind, sql, err := satchel.MigrationScript(ctx, dsn, contract, all)
	if err != nil {
		return err
	}
	return a.emit(migrateScript{Backend: kind, SQL: sql}, func(w io.Writer) error {
		_, err := io.WriteString(w, sql)
		return err
	})
}
