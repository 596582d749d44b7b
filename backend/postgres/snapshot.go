package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/satchel-dev/satchel/backend"
)

var _ backend.Snapshotter = (*Backend)(nil)

// Snapshot implements backend.Snapshotter. One connection holds a
// REPEATABLE READ, READ ONLY transaction and exports its snapshot
// (pg_export_snapshot); the returned backend's pool opens each of its
// connections in a transaction that imports that snapshot. pgxpool closes
// a connection released inside a transaction, so each read of the
// snapshot opens a connection: a consistent read costs a connection a
// query, which is what a backup can afford.
func (b *Backend) Snapshot(ctx context.Context) (backend.Backend, func(), error) {
	conn, err := b.pool.Acquire(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("postgres: snapshot: %w", err)
	}
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		conn.Release()
		return nil, nil, fmt.Errorf("postgres: snapshot: %w", err)
	}
	fail := func(err error) (backend.Backend, func(), error) {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		conn.Release()
		return nil, nil, fmt.Errorf("postgres: snapshot: %w", err)
	}
	var id string
	if err := tx.QueryRow(ctx, "SELECT pg_export_snapshot()").Scan(&id); err != nil {
		return fail(err)
	}
	if strings.Trim(id, "0123456789ABCDEFabcdef-") != "" {
		return fail(fmt.Errorf("unexpected snapshot id %q", id))
	}
	cfg := b.pool.Config()
	cfg.MinConns = 0
	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		_ = preferIndexes(ctx, c)
		_, err := c.Exec(ctx, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET TRANSACTION SNAPSHOT '"+id+"'")
		return err
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return fail(err)
	}
	release := func() {
		pool.Close()
		_ = tx.Rollback(context.Background())
		conn.Release()
	}
	return &Backend{pool: pool, snapshot: true}, release, nil
}
