// Package sqlmigrate is the migration runner of the SQL backends (SQLite
// and PostgreSQL): numbered SQL files embedded in the backend, applied in
// order, each recorded in the database's schema_migrations table with its
// kind, inside one transaction that the backend opens and serialises
// (SQLite: BEGIN IMMEDIATE; PostgreSQL: a row lock). The runner owns what
// both share: the files' names, kinds and order, what is applied, which
// schema a program may run on, and when a contract migration may run
// (docs/decisions/0061-expand-contract-migrations.md).
//
// # Expand and contract
//
// A migration is expand (the default: a file without a marker) or
// contract (its leading comments hold the line "-- satchel:contract").
// An expand migration is additive: a program that predates it runs on
// the schema with it applied. A contract migration is destructive (it
// drops or renames): a program that predates it does not; the program
// that brings it works on the schema with it applied or still pending.
//
// Opening a database applies the expand migrations it lacks. The
// contract migrations it lacks are applied only on demand (satchel
// migrate --contract), and only while no process that predates them is
// registered (processes.go); a database that has none of the migrations
// (a new one) gets them all at once. The oldest version a program may
// know to run on a database is the newest contract migration applied:
// a program that knows fewer migrations is refused (ErrSchemaTooNew),
// one that knows fewer but at least that many runs on it.
package sqlmigrate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/satchel-dev/satchel/backend"
)

// Kind is what a migration does to programs older than it.
type Kind int

const (
	// Expand: additive; a program that predates it keeps working.
	Expand Kind = iota
	// Contract: destructive; a program that predates it is refused.
	Contract
)

// String is the kind as schema_migrations records it.
func (k Kind) String() string {
	if k == Contract {
		return "contract"
	}
	return "expand"
}

// ParseKindName reads a kind as schema_migrations records it; "" (a row
// written before kinds were recorded) is expand.
func ParseKindName(s string) (Kind, error) {
	switch s {
	case "", "expand":
		return Expand, nil
	case "contract":
		return Contract, nil
	}
	return Expand, fmt.Errorf("unknown migration kind %q (expand or contract)", s)
}

// Migration is one numbered SQL file.
type Migration struct {
	Version int
	Name    string // the file's name, NNNN_what.sql
	SQL     string
	Kind    Kind
}

// marker is how a migration's leading comments declare its kind.
const marker = "satchel:"

// ParseKind returns the kind a migration's SQL declares. Only its leading
// comment lines (before the first line that is neither blank nor a "--"
// comment) are read; a comment line there whose text starts with
// "satchel:" is a directive, "satchel:contract" or "satchel:expand", and
// any other directive, or two that disagree, is refused (a misspelt
// marker must not silently mean expand). No directive: Expand.
func ParseKind(sql string) (Kind, error) {
	kind, seen := Expand, false
	for line := range strings.Lines(sql) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		text, ok := strings.CutPrefix(line, "--")
		if !ok {
			break
		}
		word, ok := strings.CutPrefix(strings.TrimSpace(text), marker)
		if !ok {
			continue
		}
		var k Kind
		switch strings.TrimSpace(word) {
		case "contract":
			k = Contract
		case "expand":
			k = Expand
		default:
			return Expand, fmt.Errorf("unknown directive %q: the kinds are \"-- satchel:expand\" (the default) and \"-- satchel:contract\"", strings.TrimSpace(text))
		}
		if seen && k != kind {
			return Expand, errors.New("both -- satchel:expand and -- satchel:contract")
		}
		kind, seen = k, true
	}
	return kind, nil
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
		kind, err := ParseKind(string(data))
		if err != nil {
			return nil, fmt.Errorf("migration %s: %w", base, err)
		}
		ms = append(ms, Migration{Version: v, Name: base, SQL: string(data), Kind: kind})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	for i, m := range ms {
		if m.Version != i+1 {
			return nil, fmt.Errorf("migration %s: expected version %d", m.Name, i+1)
		}
	}
	return ms, nil
}

// Applied is a row of schema_migrations.
type Applied struct {
	Version int
	Name    string
	Kind    Kind
}

// State is what schema_migrations records: the migrations applied.
type State []Applied

// Version is the schema's version: the newest migration applied (0 for
// none).
func (s State) Version() int {
	v := 0
	for _, a := range s {
		v = max(v, a.Version)
	}
	return v
}

// Compatible is the oldest version a program may know to run on the
// schema: the newest contract migration applied (0 for none).
func (s State) Compatible() int {
	v := 0
	for _, a := range s {
		if a.Kind == Contract {
			v = max(v, a.Version)
		}
	}
	return v
}

// has reports whether version v is applied.
func (s State) has(v int) bool {
	for _, a := range s {
		if a.Version == v {
			return true
		}
	}
	return false
}

// Check refuses a schema that the program knowing ms cannot run on: one
// with a contract migration newer than ms (ErrSchemaTooNew), or one whose
// migration of a version ms has is another file (a database migrated by
// another build of satchel).
func Check(s State, ms []Migration) error {
	if c := s.Compatible(); c > len(ms) {
		name := ""
		for _, a := range s {
			if a.Version == c {
				name = a.Name
			}
		}
		return tooNewError(fmt.Sprintf("the database's schema is version %d and its contract migration %s needs a satchel that knows version %d or later; this program knows %d: upgrade satchel",
			s.Version(), name, c, len(ms)))
	}
	for _, a := range s {
		if a.Version >= 1 && a.Version <= len(ms) && a.Name != ms[a.Version-1].Name {
			return fmt.Errorf("the database's migration %d is %s, this program's is %s: it was migrated by another build of satchel",
				a.Version, a.Name, ms[a.Version-1].Name)
		}
	}
	return nil
}

// tooNewError is Check's refusal of a schema too new for the program; it
// matches backend.ErrSchemaTooNew.
type tooNewError string

func (e tooNewError) Error() string { return string(e) }

func (e tooNewError) Is(target error) bool { return target == backend.ErrSchemaTooNew }

// Pending returns the migrations of ms that the schema lacks and that
// migrating would apply, in order: the expand ones, and the contract ones
// too when contract is set or when the database has none of the
// migrations (a new database, which no older program uses yet).
func Pending(s State, ms []Migration, contract bool) []Migration {
	fresh := len(s) == 0
	var out []Migration
	for _, m := range ms {
		if s.has(m.Version) || m.Kind == Contract && !contract && !fresh {
			continue
		}
		out = append(out, m)
	}
	return out
}

// Tx is the transaction a backend runs the migrations in, holding its
// migration lock.
type Tx interface {
	// State returns the migrations recorded.
	State(ctx context.Context) (State, error)
	// Apply runs a migration's SQL and records its version, name and kind.
	Apply(ctx context.Context, m Migration) error
	// Live returns the processes registered and seen within the lease
	// (Lease), forgetting the others.
	Live(ctx context.Context) ([]Process, error)
}

// Run applies, in tx, the migrations of ms that the database lacks (see
// Pending). A schema the program cannot run on is refused (Check); a
// contract migration is refused while a live process knows fewer
// migrations than it (ErrOlderProcesses), and then nothing is applied.
func Run(ctx context.Context, tx Tx, ms []Migration, contract bool) error {
	s, err := tx.State(ctx)
	if err != nil {
		return err
	}
	if err := Check(s, ms); err != nil {
		return err
	}
	pending := Pending(s, ms, contract)
	if len(s) > 0 {
		if err := checkLive(ctx, tx, pending); err != nil {
			return err
		}
	}
	for _, m := range pending {
		if err := tx.Apply(ctx, m); err != nil {
			return fmt.Errorf("%s: %w", m.Name, err)
		}
	}
	return nil
}

// checkLive refuses the contract migrations of pending while a live
// process knows fewer migrations than the newest of them.
func checkLive(ctx context.Context, tx Tx, pending []Migration) error {
	var newest *Migration
	for i, m := range pending {
		if m.Kind == Contract {
			newest = &pending[i]
		}
	}
	if newest == nil {
		return nil
	}
	live, err := tx.Live(ctx)
	if err != nil {
		return err
	}
	var old []Process
	for _, p := range live {
		if p.Schema < newest.Version {
			old = append(old, p)
		}
	}
	if len(old) > 0 {
		return &OlderProcessesError{Migration: newest.Name, Version: newest.Version, Processes: old}
	}
	return nil
}

// Script is the SQL that applying ms runs, for an operator to apply by
// hand: begin, then setup (the bookkeeping table), then each migration
// followed by the statement that records it (record), then commit.
func Script(begin, setup string, ms []Migration, record func(Migration) string, commit string) string {
	var b strings.Builder
	b.WriteString(begin + "\n\n" + strings.TrimSpace(setup) + "\n")
	for _, m := range ms {
		fmt.Fprintf(&b, "\n-- %s (%s)\n%s\n%s\n", m.Name, m.Kind, strings.TrimSpace(m.SQL), record(m))
	}
	b.WriteString("\n" + commit + "\n")
	return b.String()
}
