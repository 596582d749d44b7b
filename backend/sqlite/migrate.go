package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"time"

	"github.com/satchel-dev/satchel/backend/internal/sqlmigrate"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrations returns the embedded migrations in version order.
func migrations() ([]sqlmigrate.Migration, error) {
	return sqlmigrate.Load(migrationFiles, "migrations")
}

// migrate applies the migrations the database lacks, all in one BEGIN
// IMMEDIATE transaction: a second process opening the file at the same time
// waits for the write lock, then finds the schema up to date. A database
// whose schema is newer than this program is refused.
func migrate(ctx context.Context, w *sql.DB) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	tx, err := w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate: begin: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY,
		name    TEXT    NOT NULL,
		applied INTEGER NOT NULL
	)`); err != nil {
		return fmt.Errorf("migrate: create schema_migrations: %w", err)
	}
	if err := sqlmigrate.Run(ctx, migrateTx{tx}, ms); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrate: commit: %w", err)
	}
	return nil
}

// migrateTx runs migrations in a database/sql transaction.
type migrateTx struct{ tx *sql.Tx }

func (t migrateTx) Version(ctx context.Context) (int, error) {
	var v int
	err := t.tx.QueryRowContext(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&v)
	return v, err
}

func (t migrateTx) Apply(ctx context.Context, m sqlmigrate.Migration) error {
	if _, err := t.tx.ExecContext(ctx, m.SQL); err != nil {
		return err
	}
	_, err := t.tx.ExecContext(ctx, "INSERT INTO schema_migrations (version, name, applied) VALUES (?, ?, ?)",
		m.Version, m.Name, time.Now().UnixNano())
	return err
}

// Migrate applies the migrations the database lacks. Open already does;
// Migrate is for symmetry with the PostgreSQL backend (satchel migrate).
func (b *Backend) Migrate(ctx context.Context) error {
	if err := migrate(ctx, b.w); err != nil {
		return fmt.Errorf("sqlite: %s: %w", b.path, err)
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
