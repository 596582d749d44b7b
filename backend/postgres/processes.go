package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/satchel-dev/satchel/backend/internal/sqlmigrate"
)

// registry is the processes table (sqlmigrate.Registry).
type registry struct{ pool *pgxpool.Pool }

func (r registry) Register(ctx context.Context, p sqlmigrate.Process) (int64, error) {
	var id int64
	err := r.pool.QueryRow(ctx, `INSERT INTO processes (host, pid, program, schema_version)
		VALUES ($1, $2, $3, $4) RETURNING id`, p.Host, p.PID, p.Program, p.Schema).Scan(&id)
	return id, err
}

func (r registry) Renew(ctx context.Context, id int64) (bool, error) {
	tag, err := r.pool.Exec(ctx, "UPDATE processes SET seen = now() WHERE id = $1", id)
	return tag.RowsAffected() == 1, err
}

func (r registry) Unregister(ctx context.Context, id int64) error {
	_, err := r.pool.Exec(ctx, "DELETE FROM processes WHERE id = $1", id)
	return err
}

// live returns the processes seen within the lease, forgetting the others
// (none before the table exists).
func live(ctx context.Context, tx pgx.Tx) ([]sqlmigrate.Process, error) {
	var exists bool
	if err := tx.QueryRow(ctx, "SELECT to_regclass('processes') IS NOT NULL").Scan(&exists); err != nil || !exists {
		return nil, err
	}
	lease := sqlmigrate.Lease.Seconds()
	if _, err := tx.Exec(ctx, "DELETE FROM processes WHERE seen < now() - make_interval(secs => $1)", lease); err != nil {
		return nil, err
	}
	rows, err := tx.Query(ctx, `SELECT id, host, pid, program, schema_version, extract(epoch FROM now() - seen)::float8
		FROM processes ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []sqlmigrate.Process
	for rows.Next() {
		var p sqlmigrate.Process
		var age float64
		if err := rows.Scan(&p.ID, &p.Host, &p.PID, &p.Program, &p.Schema, &age); err != nil {
			return nil, err
		}
		p.Age = time.Duration(age * float64(time.Second))
		out = append(out, p)
	}
	return out, rows.Err()
}
