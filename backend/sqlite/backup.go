package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/internal/sqlmigrate"
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

// ErrNotRestorable is the kind of VerifyBackup's refusals: the file is
// not a sound satchel database.
var ErrNotRestorable = errors.New("sqlite: not a sound satchel database")

// notRestorable is a refusal of VerifyBackup: its message names the file
// and the problem; it matches ErrNotRestorable.
type notRestorable string

func (e notRestorable) Error() string        { return string(e) }
func (e notRestorable) Is(target error) bool { return target == ErrNotRestorable }

// VerifyBackup checks that the file at path is a sound satchel database
// before it is restored: PRAGMA integrity_check passes, and its schema is
// satchel's (schema_migrations records migrations of this program's, by
// name, and the tables they make are there). The file is read as it is
// (immutable: nothing is written beside it). A refusal wraps
// ErrNotRestorable and names the first problem found.
func VerifyBackup(ctx context.Context, path string) error {
	bad := func(format string, args ...any) error {
		return notRestorable(path + ": " + fmt.Sprintf(format, args...))
	}
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?mode=ro&immutable=1")
	if err != nil {
		return fmt.Errorf("sqlite: verify %s: %w", path, err)
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, "PRAGMA integrity_check")
	if err != nil {
		return bad("integrity check failed: %v", err)
	}
	var first string
	if rows.Next() {
		err = rows.Scan(&first)
	}
	if err == nil {
		err = rows.Err()
	}
	rows.Close()
	switch {
	case err != nil:
		return bad("integrity check failed: %v", err)
	case first != "ok":
		return bad("integrity check failed: %s", first)
	}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").Scan(&n); err != nil {
		return bad("reading its schema: %v", err)
	}
	if n == 0 {
		return bad("not a satchel database: it has no schema_migrations table")
	}
	var hasKind bool
	if err := db.QueryRowContext(ctx, "SELECT count(*) > 0 FROM pragma_table_info('schema_migrations') WHERE name = 'kind'").Scan(&hasKind); err != nil {
		return bad("reading its schema: %v", err)
	}
	st, err := readState(ctx, db, hasKind)
	if err != nil {
		return bad("not a satchel database: its schema_migrations cannot be read: %v", err)
	}
	ms, err := migrations()
	if err != nil {
		return err
	}
	if len(st) == 0 || st[0].Version != 1 {
		return bad("not a satchel database: its schema_migrations records no migration 1")
	}
	if err := sqlmigrate.Check(st, ms); err != nil {
		if errors.Is(err, backend.ErrSchemaTooNew) {
			return err
		}
		return bad("not this satchel's schema: %v", err)
	}
	for _, table := range []string{"threads", "commits", "settings"} {
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", table).Scan(&n); err != nil {
			return bad("reading its schema: %v", err)
		}
		if n == 0 {
			return bad("not a satchel database: it has no %s table", table)
		}
	}
	return nil
}
