package satchel

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/sqlite"
	"github.com/satchel-dev/satchel/internal/errs"
)

// Backup copies the whole database, consistently, while writers run, into
// the new file path, mode 0600: on SQLite a VACUUM INTO copy whose
// integrity is checked (backend.FileBackuper). A path that exists is
// refused (ErrExists). A backend without file backups is refused with
// ErrInvalidArgument: write an export instead (Export), or, for
// PostgreSQL, use pg_dump on the server.
func (s *Store) Backup(ctx context.Context, path string) error {
	fb, ok := backend.As[backend.FileBackuper](s.b)
	if !ok {
		return errs.New(errs.ErrInvalidArgument, "this database has no file backup: write an export (satchel export), or use the server's own tools (pg_dump)")
	}
	if _, err := os.Lstat(path); err == nil {
		return errs.New(errs.ErrExists, "%s exists: a backup never replaces a file", path)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return fb.BackupTo(ctx, path)
}

// Empty reports whether the database holds nothing: no thread, no token,
// no setting of the global namespace but the servers' shared state (a
// session key: SharedState). Documents are not looked at (a backend
// cannot list them without their stores' names).
func (s *Store) Empty(ctx context.Context) (bool, error) {
	sc, err := s.b.Scopes(ctx)
	if err != nil || len(sc) > 0 {
		return false, err
	}
	set, err := s.b.Settings(ctx, "", "", "")
	if err != nil {
		return false, err
	}
	for k := range set {
		if !strings.HasPrefix(k, sharedKey) {
			return false, nil
		}
	}
	return true, nil
}

// VerifyBackup checks that the SQLite file at path is a sound satchel
// database before it is restored: PRAGMA integrity_check passes and its
// schema is satchel's. A refusal is ErrInvalidArgument whose message
// names the file and the first problem found.
func VerifyBackup(ctx context.Context, path string) error {
	err := sqlite.VerifyBackup(ctx, path)
	if errors.Is(err, sqlite.ErrNotRestorable) {
		return &Error{Kind: ErrInvalidArgument, Msg: "restore refused: " + err.Error()}
	}
	if err != nil {
		return fmt.Errorf("cannot restore %s: %w", path, err)
	}
	return nil
}
