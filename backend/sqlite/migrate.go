package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

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

// setupSQL creates schema_migrations; kindSQL adds its kind column to a
// table made before kinds were recorded.
const (
	setupSQL = `CREATE TABLE IF NOT EXISTS schema_migrations (
	version INTEGER PRIMARY KEY,
	name    TEXT    NOT NULL,
	applied INTEGER NOT NULL,
	kind    TEXT    NOT NULL DEFAULT 'expand'
);`
	kindSQL = `ALTER TABLE schema_migrations ADD COLUMN kind TEXT NOT NULL DEFAULT 'expand'`
)

// migrate applies the migrations the database lacks (the expand ones;
// contract ones too when contract is set, or on a new database), all in
// one BEGIN IMMEDIATE transaction: a second process opening the file at
// the same time waits for the write lock, then finds the schema up to
// date. A schema whose contract migrations this program does not know is
// refused.
func migrate(ctx context.Context, w *sql.DB, contract bool) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	tx, err := w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate: begin: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, setupSQL); err != nil {
		return fmt.Errorf("migrate: create schema_migrations: %w", err)
	}
	var hasKind bool
	if err := tx.QueryRowContext(ctx, "SELECT count(*) > 0 FROM pragma_table_info('schema_migrations') WHERE name = 'kind'").Scan(&hasKind); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if !hasKind {
		if _, err := tx.ExecContext(ctx, kindSQL); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
	}
	if err := sqlmigrate.Run(ctx, migrateTx{tx}, ms, contract); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrate: commit: %w", err)
	}
	return nil
}

// queryer is a database or a transaction.
type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// readState reads schema_migrations; withKind false reads a table made
// before kinds were recorded (every row expand).
func readState(ctx context.Context, q queryer, withKind bool) (sqlmigrate.State, error) {
	query := "SELECT version, name, kind FROM schema_migrations ORDER BY version"
	if !withKind {
		query = "SELECT version, name, 'expand' FROM schema_migrations ORDER BY version"
	}
	rows, err := q.QueryContext(ctx, query)
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

// migrateTx runs migrations in a database/sql transaction.
type migrateTx struct{ tx *sql.Tx }

func (t migrateTx) State(ctx context.Context) (sqlmigrate.State, error) {
	return readState(ctx, t.tx, true)
}

func (t migrateTx) Apply(ctx context.Context, m sqlmigrate.Migration) error {
	if _, err := t.tx.ExecContext(ctx, m.SQL); err != nil {
		return err
	}
	_, err := t.tx.ExecContext(ctx, "INSERT INTO schema_migrations (version, name, applied, kind) VALUES (?, ?, ?, ?)",
		m.Version, m.Name, time.Now().UnixNano(), m.Kind.String())
	return err
}

func (t migrateTx) Live(ctx context.Context) ([]sqlmigrate.Process, error) {
	return live(ctx, t.tx)
}

// Migrate applies the expand migrations the database lacks. Open already
// does; Migrate is for symmetry with the PostgreSQL backend (satchel
// migrate).
func (b *Backend) Migrate(ctx context.Context) error {
	if err := b.writable(); err != nil {
		return err
	}
	if err := migrate(ctx, b.w, false); err != nil {
		return fmt.Errorf("sqlite: %s: %w", b.path, err)
	}
	return nil
}

// MigrateContract applies the migrations the database lacks, contract
// ones included, unless a registered process knows fewer migrations than
// a pending contract migration (backend.ErrOlderProcesses).
func (b *Backend) MigrateContract(ctx context.Context) error {
	if err := b.writable(); err != nil {
		return err
	}
	if err := migrate(ctx, b.w, true); err != nil {
		return fmt.Errorf("sqlite: %s: %w", b.path, err)
	}
	return nil
}

func (b *Backend) writable() error {
	if b.readOnly {
		return b.readOnlyErr()
	}
	return nil
}

// SchemaVersion returns the version of the database's schema: the number
// of the last migration applied.
func (b *Backend) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	if err := b.r.QueryRowContext(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&v); err != nil {
		return 0, fmt.Errorf("sqlite: schema version: %w", err)
	}
	return v, nil
}

// MigrationScript returns the SQL that migrating the database at dsn
// would run (contract: MigrateContract), without running it and without
// writing to the file: the bookkeeping, then each migration it lacks with
// the row that records it, in one transaction. A missing file is a new
// database. Nothing to apply: "".
func MigrationScript(ctx context.Context, dsn string, contract bool) (string, error) {
	ms, err := migrations()
	if err != nil {
		return "", fmt.Errorf("sqlite: %w", err)
	}
	path, err := parsePath(dsn)
	if err != nil {
		return "", err
	}
	var s sqlmigrate.State
	legacy := false
	if _, err := os.Stat(path); err == nil {
		db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?mode=ro&"+readerParams)
		if err != nil {
			return "", fmt.Errorf("sqlite: %s: %w", path, err)
		}
		defer db.Close()
		var exists, hasKind bool
		if err := db.QueryRowContext(ctx, `SELECT
			(SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'),
			(SELECT count(*) > 0 FROM pragma_table_info('schema_migrations') WHERE name = 'kind')`).Scan(&exists, &hasKind); err != nil {
			return "", fmt.Errorf("sqlite: %s: %w", path, err)
		}
		if exists {
			if s, err = readState(ctx, db, hasKind); err != nil {
				return "", fmt.Errorf("sqlite: %s: %w", path, err)
			}
			legacy = !hasKind
		}
	}
	if err := sqlmigrate.Check(s, ms); err != nil {
		return "", fmt.Errorf("sqlite: %w", err)
	}
	pending := sqlmigrate.Pending(s, ms, contract)
	if len(pending) == 0 {
		return "", nil
	}
	out := script(pending)
	if legacy {
		// The table predates kinds: the script adds the column first.
		out = strings.Replace(out, setupSQL, setupSQL+"\n"+kindSQL+";", 1)
	}
	return out, nil
}

// SchemaScript returns the SQL that creates the whole schema in an empty
// database, bookkeeping included (satchel migrate --print --all).
func SchemaScript() (string, error) {
	ms, err := migrations()
	if err != nil {
		return "", fmt.Errorf("sqlite: %w", err)
	}
	return script(ms), nil
}

func script(ms []sqlmigrate.Migration) string {
	return sqlmigrate.Script("BEGIN IMMEDIATE;", setupSQL, ms, func(m sqlmigrate.Migration) string {
		return fmt.Sprintf("INSERT INTO schema_migrations (version, name, applied, kind) VALUES (%d, '%s', CAST((julianday('now') - 2440587.5) * 86400000000000 AS INTEGER), '%s');",
			m.Version, strings.ReplaceAll(m.Name, "'", "''"), m.Kind)
	}, "COMMIT;")
}
