package postgres

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one numbered SQL file of migrations/.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the embedded migrations in version order. A file is
// named NNNN_what.sql; versions start at 1 and have no gaps.
func migrations() ([]migration, error) {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, n := range names {
		base := strings.TrimPrefix(n, "migrations/")
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v < 1 {
			return nil, fmt.Errorf("migration %s: name must start with a version number and _", n)
		}
		data, err := migrationFiles.ReadFile(n)
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: base, sql: string(data)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %s: expected version %d", m.name, i+1)
		}
	}
	return ms, nil
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

func (b *Backend) migrate(ctx context.Context, ms []migration) error {
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
		var current int
		if err := tx.QueryRow(ctx, "SELECT max(version) FROM schema_migrations").Scan(&current); err != nil {
			return err
		}
		if current > len(ms) {
			return fmt.Errorf("the database's schema is version %d, newer than this program's %d: upgrade satchel", current, len(ms))
		}
		for _, m := range ms[current:] {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return fmt.Errorf("%s: %w", m.name, err)
			}
			if _, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", m.version, m.name); err != nil {
				return fmt.Errorf("%s: %w", m.name, err)
			}
		}
		return nil
	})
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
