package postgres

import (
	"context"
	"embed"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/satchel-dev/satchel/backend/internal/sqlmigrate"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrations returns the embedded migrations in version order.
func migrations() ([]sqlmigrate.Migration, error) {
	return sqlmigrate.Load(migrationFiles, "migrations")
}

// Migrate applies the migrations the database lacks. Processes that
// migrate at once are serialised by a row lock: each takes the lock row
// (version 0) of schema_migrations FOR UPDATE, then reads the version the
// previous holder left, in one transaction. Creating schema_migrations
// itself can race (two CREATE TABLE IF NOT EXISTS at once): that, and
// serialization failures, are retried. No advisory lock, so it also runs
// on Postgres-compatible distributed databases. A database whose schema is
// newer than this program is refused.
func (b *Backend) Migrate(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	for attempt := 1; ; attempt++ {
		err = b.migrate(ctx, ms)
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

func (b *Backend) migrate(ctx context.Context, ms []sqlmigrate.Migration) error {
	if _, err := b.pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version integer PRIMARY KEY,
		name    text NOT NULL,
		applied timestamptz NOT NULL DEFAULT now()
	)`); err != nil {
		return err
	}
	if _, err := b.pool.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES (0, 'lock') ON CONFLICT DO NOTHING`); err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
		var lock int
		if err := tx.QueryRow(ctx, "SELECT version FROM schema_migrations WHERE version = 0 FOR UPDATE").Scan(&lock); err != nil {
			return err
		}
		return sqlmigrate.Run(ctx, migrateTx{tx}, ms)
	})
}

// migrateTx runs migrations in a pgx transaction.
type migrateTx struct{ tx pgx.Tx }

func (t migrateTx) Version(ctx context.Context) (int, error) {
	var v int
	err := t.tx.QueryRow(ctx, "SELECT max(version) FROM schema_migrations").Scan(&v)
	return v, err
}

func (t migrateTx) Apply(ctx context.Context, m sqlmigrate.Migration) error {
	if _, err := t.tx.Exec(ctx, m.SQL); err != nil {
		return err
	}
	_, err := t.tx.Exec(ctx, "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", m.Version, m.Name)
	return err
}

// SchemaVersion returns the version of the database's schema: the number
// of the last migration applied.
func (b *Backend) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	if err := b.pool.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&v); err != nil {
		return 0, fmt.Errorf("postgres: schema version: %w", err)
	}
	return v, nil
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
