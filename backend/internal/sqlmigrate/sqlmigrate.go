// Package sqlmigrate is the migration runner of the SQL backends (SQLite
// and PostgreSQL): numbered SQL files embedded in the backend, applied in
// order, each recorded in the database's schema_migrations table, inside
// one transaction that the backend opens and serialises (SQLite: BEGIN
// IMMEDIATE; PostgreSQL: a row lock). The runner owns what both share: the
// files' names and order, what is applied, and the refusal of a schema
// newer than the program.
package sqlmigrate

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// Migration is one numbered SQL file.
type Migration struct {
	Version int
	Name    string // the file's name, NNNN_what.sql
	SQL     string
}

// Load returns the migrations of dir in fsys in version order. A file is
// named NNNN_what.sql; versions start at 1 and have no gaps.
func Load(fsys fs.FS, dir string) ([]Migration, error) {
	names, err := fs.Glob(fsys, path.Join(dir, "*.sql"))
	if err != nil {
		return nil, err
	}
	var ms []Migration
	for _, n := range names {
		base := path.Base(n)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v < 1 {
			return nil, fmt.Errorf("migration %s: name must start with a version number and _", n)
		}
		data, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, err
		}
		ms = append(ms, Migration{Version: v, Name: base, SQL: string(data)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	for i, m := range ms {
		if m.Version != i+1 {
			return nil, fmt.Errorf("migration %s: expected version %d", m.Name, i+1)
		}
	}
	return ms, nil
}

// Tx is the transaction a backend runs the migrations in, holding its
// migration lock.
type Tx interface {
	// Version returns the last version recorded (0 for none).
	Version(ctx context.Context) (int, error)
	// Apply runs a migration's SQL and records its version and name.
	Apply(ctx context.Context, m Migration) error
}

// Run applies, in tx, the migrations of ms that the database lacks. A
// database whose schema is newer than ms is refused.
func Run(ctx context.Context, tx Tx, ms []Migration) error {
	current, err := tx.Version(ctx)
	if err != nil {
		return err
	}
	if current > len(ms) {
		return fmt.Errorf("the database's schema is version %d, newer than this program's %d: upgrade satchel", current, len(ms))
	}
	for _, m := range ms[current:] {
		if err := tx.Apply(ctx, m); err != nil {
			return fmt.Errorf("%s: %w", m.Name, err)
		}
	}
	return nil
}
