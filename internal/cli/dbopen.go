package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/satchel-dev/satchel"
)

// How a command opens its database (docs/decisions/0022-cli-database-open.md).
//
// A command that only reads opens an existing database for reading only
// (satchel.ReadOnly): a mistyped --db is refused instead of created, and a
// read-only file, a read-only mount or a full disk can still be read. A
// command that writes creates a missing SQLite file and says so once, on
// standard error.

// readCommands are the commands that only read, by their path under the
// root. Every other command may write.
var readCommands = map[string]bool{
	"fs read": true, "fs stat": true, "fs exists": true, "fs glob": true, "fs ls": true,
	"fs grep": true, "fs export": true,
	"log": true, "diff": true, "threads": true,
	"doc get": true, "doc query": true, "doc list": true,
	"token list": true, "spill fetch": true,
	"export": true, "backup": true, "ui": true, "check": true, "audit": true,
	"scopes":     true,
	"quota show": true, "limits show": true,
}

// readsOnly reports whether the running command only reads.
func (a *app) readsOnly() bool {
	if a.cmd == nil {
		return false
	}
	return readCommands[strings.TrimPrefix(a.cmd.CommandPath(), a.cmd.Root().Name()+" ")]
}

// openDB is how Main opens the database: reads open it read-only and refuse
// a missing file; writes create a missing SQLite file and say so.
func (a *app) openDB(ctx context.Context, dsn string) (*satchel.Store, error) {
	path, isFile := sqliteFile(dsn)
	if !isFile {
		return satchel.Open(ctx, dsn)
	}
	_, err := os.Stat(path)
	missing := errors.Is(err, fs.ErrNotExist)
	if a.readsOnly() {
		if missing {
			return nil, &satchel.Error{Kind: satchel.ErrNotFound, Msg: fmt.Sprintf("no database at %s; satchel init creates one", path)}
		}
		return satchel.Open(ctx, dsn, satchel.ReadOnly())
	}
	st, err := satchel.Open(ctx, dsn)
	if err == nil && missing {
		a.notice("created database %s", path)
	}
	return st, err
}

// sqliteFile returns the file a dsn names when it is a SQLite path (not
// memory: nor a URL), as the user wrote it.
func sqliteFile(dsn string) (string, bool) {
	if dsn == "memory:" || dsn == "memory" || dsn == "" || strings.Contains(dsn, "://") {
		return "", false
	}
	return strings.TrimPrefix(dsn, "file:"), true
}
