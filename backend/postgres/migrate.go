package postgres

import (
	"context"
	"embed"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/satchel-dev/satchel/backend/internal/sqlmigrate"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// extraMigrations, when set (by a build tag of the upgrade tests), adds
// migrations after the embedded ones, numbered on from them.
var extraMigrations func(n int) []sqlmigrate.Migration

// migrations returns the embedded migrations in version order.
func migrations() ([]sqlmigrate.Migration, error) {
	ms, err := sqlmigrate.Load(migrationFiles, "migrations")
	if err == nil && extraMigrations != nil {
		ms = append(ms, extraMigrations(len(ms))...)
	}
	return ms, err
}

// setupSQL creates the bookkeeping of migrations: schema_migrations, its
// kind column (added to a table made before kinds were recorded) and the
// lock row (version 0) that serialises the processes that migrate.
const setupSQL = `CREATE TABLE IF NOT EXISTS schema_migrations (
	version integer PRIMARY KEY,
	name    text NOT NULL,
	applied timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE schema_migrations ADD COLUMN IF NOT EXISTS kind text NOT NULL DEFAULT 'expand';
INSERT INTO schema_migrations (version, name) VALUES (0, 'lock') ON CONFLICT DO NOTHING;`

// Migrate applies the expand migrations the database lacks (all of them
// on a new database). Processes that migrate at once are serialised by a
// row lock: each takes the lock row (version 0) of schema_migrations FOR
// UPDATE, then reads the versions the previous holder left, in one
// transaction. Creating schema_migrations itself can race (two CREATE
// TABLE IF NOT EXISTS at once): that, and serialization failures, are
// retried. No advisory lock, so it also runs on Postgres-compatible
// distributed databases. A database already up to date is only read (one
// query, no DDL: a role without CREATE privilege opens it). A schema
// whose contract migrations this program does not know is refused.
func (b *Backend) Migrate(ctx context.Context) error { return b.migrateKinds(ctx, false) }

// MigrateContract applies the migrations the database lacks, contract
// ones included, unless a registered process knows fewer migrations than
// a pending contract migration (backend.ErrOlderProcesses).
func (b *Backend) MigrateContract(ctx context.Context) error { return b.migrateKinds(ctx, true) }

func (b *Backend) migrateKinds(ctx context.Context, contract bool) error {
	ms, err := migrations()
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	if s, err := b.state(ctx, b.pool); err == nil {
		if err := sqlmigrate.Check(s, ms); err != nil {
			return fmt.Errorf("postgres: %w", err)
		}
		if len(s) > 0 && len(sqlmigrate.Pending(s, ms, contract)) == 0 {
			return nil
		}
	}
	for attempt := 1; ; attempt++ {
		err = b.migrate(ctx, ms, contract)
		if err == nil || attempt == 10 || !retryable(err, "23505", "42P07", "42710") {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(attempt) * 10 * time.Millisecond):
		}
	}
	if err != nil {
		return fmt.Errorf("postgres: migrate: %w", err)
	}
	return nil
}

func (b *Backend) migrate(ctx context.Context, ms []sqlmigrate.Migration, contract bool) error {
	if _, err := b.pool.Exec(ctx, setupSQL); err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
		var lock int
		if err := tx.QueryRow(ctx, "SELECT version FROM schema_migrations WHERE version = 0 FOR UPDATE").Scan(&lock); err != nil {
			return err
		}
		return sqlmigrate.Run(ctx, migrateTx{b, tx}, ms, contract)
	})
}

// querier is a pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// state reads schema_migrations (without the lock row).
func (b *Backend) state(ctx context.Context, q querier) (sqlmigrate.State, error) {
	return readState(ctx, q, "SELECT version, name, kind FROM schema_migrations WHERE version > 0 ORDER BY version")
}

// readState reads the rows of schema_migrations that query returns as
// (version, name, kind).
func readState(ctx context.Context, q querier, query string) (sqlmigrate.State, error) {
	rows, err := q.Query(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var s sqlmigrate.State
	for rows.Next() {
		var a sqlmigrate.Applied
		var kind string
		if err := rows.Scan(&a.Version, &a.Name, &kind); err != nil {
			return nil, err
		}
		if a.Kind, err = sqlmigrate.ParseKindName(kind); err != nil {
			return nil, fmt.Errorf("schema_migrations version %d: %w", a.Version, err)
		}
		s = append(s, a)
	}
	return s, rows.Err()
}

// migrateTx runs migrations in a pgx transaction.
type migrateTx struct {
	b  *Backend
	tx pgx.Tx
}

func (t migrateTx) State(ctx context.Context) (sqlmigrate.State, error) { return t.b.state(ctx, t.tx) }

func (t migrateTx) Apply(ctx context.Context, m sqlmigrate.Migration) error {
	if _, err := t.tx.Exec(ctx, m.SQL); err != nil {
		return err
	}
	_, err := t.tx.Exec(ctx, recordSQL, m.Version, m.Name, m.Kind.String())
	return err
}

func (t migrateTx) Live(ctx context.Context) ([]sqlmigrate.Process, error) {
	return live(ctx, t.tx)
}

const recordSQL = "INSERT INTO schema_migrations (version, name, kind) VALUES ($1, $2, $3)"

// SchemaVersion returns the version of the database's schema: the number
// of the last migration applied.
func (b *Backend) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	if err := b.pool.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&v); err != nil {
		return 0, fmt.Errorf("postgres: schema version: %w", err)
	}
	return v, nil
}

// MigrationScript returns the SQL that migrating the database at url
// would run (contract: MigrateContract), without running it and without
// registering: the bookkeeping, then each migration it lacks with the row
// that records it, in one transaction. Nothing to apply: "".
func MigrationScript(ctx context.Context, url string, contract bool) (string, error) {
	ms, err := migrations()
	if err != nil {
		return "", fmt.Errorf("postgres: %w", err)
	}
	conn, err := Connect(ctx, url)
	if err != nil {
		return "", err
	}
	defer conn.Close(context.Background())
	var s sqlmigrate.State
	var exists, hasKind bool
	if err := conn.QueryRow(ctx, `SELECT to_regclass('schema_migrations') IS NOT NULL,
		EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'schema_migrations' AND column_name = 'kind')`).Scan(&exists, &hasKind); err != nil {
		return "", fmt.Errorf("postgres: %w", err)
	}
	if exists {
		q := "SELECT version, name, 'expand' FROM schema_migrations WHERE version > 0 ORDER BY version"
		if hasKind {
			q = "SELECT version, name, kind FROM schema_migrations WHERE version > 0 ORDER BY version"
		}
		if s, err = readState(ctx, conn, q); err != nil {
			return "", fmt.Errorf("postgres: %w", err)
		}
	}
	if err := sqlmigrate.Check(s, ms); err != nil {
		return "", fmt.Errorf("postgres: %w", err)
	}
	pending := sqlmigrate.Pending(s, ms, contract)
	if len(pending) == 0 {
		return "", nil
	}
	return script(pending), nil
}

// SchemaScript returns the SQL that creates the whole schema in an empty
// database, bookkeeping included (satchel migrate --print --all).
func SchemaScript() (string, error) {
	ms, err := migrations()
	if err != nil {
		return "", fmt.Errorf("postgres: %w", err)
	}
	return script(ms), nil
}

func script(ms []sqlmigrate.Migration) string {
	return sqlmigrate.Script("BEGIN;", setupSQL, ms, func(m sqlmigrate.Migration) string {
		return fmt.Sprintf("INSERT INTO schema_migrations (version, name, kind) VALUES (%d, '%s', '%s');", m.Version, strings.ReplaceAll(m.Name, "'", "''"), m.Kind)
	}, "COMMIT;")
}

// retryable reports whether err is a transient conflict between
// transactions (serialization failure, deadlock) or carries one of the
// extra SQLSTATEs.
func retryable(err error, extra ...string) bool {
	code := pgCode(err)
	switch code {
	case "":
		return false
	case "40001", "40P01":
		return true
	}
	for _, c := range extra {
		if code == c {
			return true
		}
	}
	return false
}
