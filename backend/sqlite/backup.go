package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"

	"github.com/satchel-dev/satchel/backend"
)

var _ backend.FileBackuper = (*Backend)(nil)

// BackupTo implements backend.FileBackuper with VACUUM INTO, on a
// connection of its own: it reads one snapshot of the database (WAL mode:
// writers go on meanwhile) and writes a compact copy. The file is created
// empty first, exclusively and 0600 (VACUUM INTO accepts an empty file),
// so no one can read it or plant it, and the copy must then pass
// PRAGMA integrity_check.
func (b *Backend) BackupTo(ctx context.Context, path string) (err error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("sqlite: backup: %w", err)
	}
	if err := f.Chmod(0o600); err != nil { // whatever the umask
		f.Close()
		os.Remove(path)
		return fmt.Errorf("sqlite: backup: %w", err)
	}
	f.Close()
	defer func() {
		if err != nil {
			os.Remove(path)
		}
	}()
	db, err := sql.Open("sqlite", b.path+"?"+commonParams)
	if err != nil {
		return fmt.Errorf("sqlite: backup: %w", err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "VACUUM INTO ?", path); err != nil {
		return fmt.Errorf("sqlite: backup: %w", err)
	}
	return checkIntegrity(ctx, path)
}

// checkIntegrity runs PRAGMA integrity_check on the file at path.
func checkIntegrity(ctx context.Context, path string) error {
	db, err := sql.Open("sqlite", path+"?_query_only=1")
	if err != nil {
		return fmt.Errorf("sqlite: integrity check of %s: %w", path, err)
	}
	defer db.Close()
	var res string
	if err := db.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&res); err != nil {
		return fmt.Errorf("sqlite: integrity check of %s: %w", path, err)
	}
	if res != "ok" {
		return errors.New("sqlite: integrity check of " + path + " failed: " + res)
	}
	return nil
}
