package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/satchel-dev/satchel/backend/internal/sqlmigrate"
)

// registry is the processes table (sqlmigrate.Registry). Its times are
// the process's own clock, never a test's (SetClock): every process that
// opens the file runs on its machine.
type registry struct{ w *sql.DB }

func (r registry) Register(ctx context.Context, p sqlmigrate.Process) (int64, error) {
	now := time.Now().UnixNano()
	res, err := r.w.ExecContext(ctx, `INSERT INTO processes (host, pid, program, schema_version, started, seen)
		VALUES (?, ?, ?, ?, ?, ?)`, p.Host, p.PID, p.Program, p.Schema, now, now)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

func (r registry) Renew(ctx context.Context, id int64) (bool, error) {
	res, err := r.w.ExecContext(ctx, "UPDATE processes SET seen = ? WHERE id = ?", time.Now().UnixNano(), id)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

func (r registry) Unregister(ctx context.Context, id int64) error {
	_, err := r.w.ExecContext(ctx, "DELETE FROM processes WHERE id = ?", id)
	return err
}

// live returns the processes seen within the lease, forgetting the others
// (none before the table exists).
func live(ctx context.Context, tx *sql.Tx) ([]sqlmigrate.Process, error) {
	var exists bool
	if err := tx.QueryRowContext(ctx, "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'processes'").Scan(&exists); err != nil || !exists {
		return nil, err
	}
	now := time.Now().UnixNano()
	if _, err := tx.ExecContext(ctx, "DELETE FROM processes WHERE seen < ?", now-int64(sqlmigrate.Lease)); err != nil {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, "SELECT id, host, pid, program, schema_version, seen FROM processes ORDER BY id")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []sqlmigrate.Process
	for rows.Next() {
		var p sqlmigrate.Process
		var seen int64
		if err := rows.Scan(&p.ID, &p.Host, &p.PID, &p.Program, &p.Schema, &seen); err != nil {
			return nil, err
		}
		p.Age = time.Duration(max(0, now-seen))
		out = append(out, p)
	}
	return out, rows.Err()
}
