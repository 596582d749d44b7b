package satchel

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/memory"
	"github.com/satchel-dev/satchel/backend/postgres"
	"github.com/satchel-dev/satchel/backend/sqlite"
	"github.com/satchel-dev/satchel/internal/backendof"
	"github.com/satchel-dev/satchel/internal/errs"
)

func init() {
	backendof.Store = func(st any) backend.Backend { return st.(*Store).b }
}

// Ping reports whether the store's database answers: it reads the
// database's clock.
func (s *Store) Ping(ctx context.Context) error {
	_, err := s.b.Now(ctx)
	return err
}

// Now returns the time by the store's clock: the database's, which grace
// periods, retention and expiry are measured by.
func (s *Store) Now(ctx context.Context) (time.Time, error) {
	return s.b.Now(ctx)
}

// PoolStats is the state of the pool of connections a store reaches its
// database server through, now, and its counts since the store opened.
type PoolStats struct {
	// Max bounds the connections; InUse are taken now; Idle are open and
	// free.
	Max, InUse, Idle int32
	// Acquires counts the connections taken; Waits those of them taken
	// after waiting, none being free; Waited is the time Waits waited,
	// in all.
	Acquires, Waits int64
	Waited          time.Duration
}

// PoolStats returns the figures of the store's pool of connections; ok is
// false for a database reached without one (memory, SQLite).
func (s *Store) PoolStats() (st PoolStats, ok bool) {
	pr, ok := backend.As[backend.PoolReporter](s.b)
	if !ok {
		return PoolStats{}, false
	}
	p := pr.PoolStats()
	return PoolStats{Max: p.Max, InUse: p.InUse, Idle: p.Idle, Acquires: p.Acquires, Waits: p.Waits, Waited: p.Waited}, true
}

// Schema names a database's kind ("sqlite", "postgres") and the number of
// the last migration applied to it.
type Schema struct {
	Backend string
	Version int
}

// Migrate applies the expand migrations the database lacks (Open already
// does) and, with contract, the contract (destructive) ones too, then
// returns the schema. A contract migration is refused (ErrOlderProcesses
// of package backend) while a process that predates it uses the database;
// a database with a contract migration newer than the program is refused
// (ErrSchemaTooNew). The memory: database has no schema: refused with
// ErrInvalidArgument.
func (s *Store) Migrate(ctx context.Context, contract bool) (Schema, error) {
	if contract {
		m, ok := backend.As[backend.ContractMigrator](s.b)
		if !ok {
			_, err := s.schema(ctx)
			if err == nil {
				err = errs.New(errs.ErrInvalidArgument, "this backend (%T) has no contract migrations", s.b)
			}
			return Schema{}, err
		}
		if err := m.MigrateContract(ctx); err != nil {
			return Schema{}, err
		}
	} else if m, ok := backend.As[backend.Migrator](s.b); ok {
		if err := m.Migrate(ctx); err != nil {
			return Schema{}, err
		}
	}
	return s.schema(ctx)
}

// schema names the backend and asks it for its schema version.
func (s *Store) schema(ctx context.Context) (Schema, error) {
	if _, ok := backend.As[*memory.Backend](s.b); ok {
		return Schema{}, errs.New(errs.ErrInvalidArgument, "the memory: database has no schema to migrate")
	}
	sv, ok := backend.As[backend.Migrator](s.b)
	if !ok {
		return Schema{}, errs.New(errs.ErrInvalidArgument, "this backend (%T) does not report a schema version", s.b)
	}
	v, err := sv.SchemaVersion(ctx)
	if err != nil {
		return Schema{}, err
	}
	return Schema{Backend: backendKind(s.b), Version: v}, nil
}

// backendKind names a backend by its package: "sqlite", "postgres", ...
func backendKind(b any) string {
	t := strings.TrimPrefix(fmt.Sprintf("%T", b), "*")
	name, _, _ := strings.Cut(t, ".")
	return name
}

// MigrationScript returns the SQL that migrating the database dsn would
// run (with contract, the contract migrations too), without running it:
// the migrations the database lacks and the rows of schema_migrations
// that record them, in one transaction ("" when nothing is to apply). It
// reads the database only. With all it returns the whole schema from
// empty and connects to nothing: dsn only says which kind of database, a
// postgres:// URL for PostgreSQL, else SQLite. backendName is that kind,
// "postgres" or "sqlite". The memory: database has no schema: refused
// with ErrInvalidArgument.
func MigrationScript(ctx context.Context, dsn string, contract, all bool) (backendName, sql string, err error) {
	kind := "sqlite"
	switch {
	case strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://"):
		kind = "postgres"
	case dsn == "memory:" || dsn == "memory":
		return "", "", errs.New(errs.ErrInvalidArgument, "the memory: database has no schema to migrate")
	}
	switch {
	case all && kind == "postgres":
		sql, err = postgres.SchemaScript()
	case all:
		sql, err = sqlite.SchemaScript()
	case kind == "postgres":
		sql, err = postgres.MigrationScript(ctx, dsn, contract)
	default:
		sql, err = sqlite.MigrationScript(ctx, dsn, contract)
	}
	return kind, sql, err
}

// HasFileBackup reports whether Backup can copy the store's database to a
// file (SQLite); without it, an export is the backup.
func (s *Store) HasFileBackup() bool {
	_, ok := backend.As[backend.FileBackuper](s.b)
	return ok
}
