package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
)

// newInitCmd: satchel init [DIR] makes a project directory (stores/ and
// agents/, for collections) and creates the database.
func newInitCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "init [DIR]",
		GroupID: groupAdmin,
		Short:   "Create a project directory and its database",
		Long: `Init makes DIR (default .) a satchel project: it creates DIR/stores/ (one
JSON file per collection: see "satchel schema store") and DIR/agents/ (one
directory per agent with an agent.json naming the stores it may use),
creates the database (--db, else $SATCHEL_DB, else DIR/satchel.db), applying
its migrations, and writes DIR/satchel.json, which names the database for the
commands run in DIR or given --dir DIR. Existing files are left as they are.

Prints what it created; with --json, {"dir": ..., "created": [...], "db": ...}.`,
		Example: `  satchel init
  satchel init research --db research/satchel.db`,
		Args: argsBetween(nil, "DIR"),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			var created []string
			for _, sub := range []string{"", "stores", "agents"} {
				p := filepath.Join(dir, sub)
				if _, err := os.Stat(p); err == nil {
					continue
				}
				if err := os.MkdirAll(p, 0o755); err != nil {
					return err
				}
				created = append(created, p)
			}
			idb, err := a.initDB(dir)
			if err != nil {
				return err
			}
			if wrote, err := writeProject(dir, idb.named); err != nil {
				return err
			} else if wrote {
				created = append(created, filepath.Join(dir, ProjectFile))
			}
			st, err := a.openStore(cmd.Context(), idb.dsn)
			if err != nil {
				return err
			}
			a.store = st
			db := idb.dsn
			return a.emit(map[string]any{"dir": dir, "created": created, "db": db}, func(w io.Writer) error {
				for _, p := range created {
					fmt.Fprintf(w, "created %s\n", p)
				}
				_, err := fmt.Fprintf(w, "database %s\n", db)
				return err
			})
		},
	}
}

// initDB is the database init makes for dir: dsn to open, and named, what
// dir's project file says (relative to dir when it is dir's own file).
type initDB struct{ dsn, named string }

func (a *app) initDB(dir string) (initDB, error) {
	if (a.root != nil && a.root.PersistentFlags().Changed("db")) || a.getenv("SATCHEL_DB") != "" {
		dsn, err := a.dsn()
		if err != nil {
			return initDB{}, err
		}
		named := dsn
		if p, isFile := sqliteFile(dsn); isFile {
			if abs, err := filepath.Abs(p); err == nil {
				named = abs
			}
		}
		return initDB{dsn: dsn, named: named}, nil
	}
	return initDB{dsn: filepath.Join(dir, "satchel.db"), named: "satchel.db"}, nil
}
