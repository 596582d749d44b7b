package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/internal/sqlmigrate"

	msqlite "modernc.org/sqlite"
)

// Opening for reading only (docs/decisions/0021-read-only-open.md).
//
// OpenReadOnly never writes: it sets no journal mode and applies no
// migration, and every write through the backend is refused with
// backend.ErrReadOnly. Where SQLite can keep its usual shared-memory index
// beside the file (-shm), reads go through it, so they see what other
// processes commit meanwhile. Where it cannot (a read-only file or mount,
// or a full disk, where SQLite cannot make or grow that index), and no
// write-ahead log holds commits not yet in the file, the file is opened
// immutable: read as it is, with no lock and nothing written beside it.

// OpenReadOnly opens an existing database at dsn for reading only. A
// missing file is an error (matching fs.ErrNotExist), never created.
func OpenReadOnly(ctx context.Context, dsn string) (*Backend, error) {
	return openReadOnly(ctx, dsn, options{})
}

func openReadOnly(ctx context.Context, dsn string, opt options) (*Backend, error) {
	path, err := parsePath(dsn)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, &dbError{msg: "no database at " + path, kind: fs.ErrNotExist}
	case err != nil:
		return nil, fmt.Errorf("sqlite: %w", err)
	case fi.IsDir():
		return nil, &dbError{msg: path + " is a directory, not a database file"}
	}
	walData := false
	if wi, err := os.Stat(path + "-wal"); err == nil && wi.Size() > 0 {
		walData = true
	}
	// Where the file can be written, the readers open it as the backend's
	// readers always do (query_only): the last to close then removes the
	// -wal and -shm files as a writer would. Where it cannot, mode=ro,
	// which leaves them behind, is used only when the log holds commits.
	uri := "file:" + (&url.URL{Path: path}).EscapedPath()
	shared := path + "?" + readerParams + opt.params
	sharedRO := uri + "?mode=ro&" + readerParams + opt.params
	immutable := uri + "?mode=ro&immutable=1&" + readerParams + opt.params
	var tries []string
	switch w := writable(path); {
	case w && walData:
		tries = []string{shared} // immutable would not see the log's commits
	case w && !diskFull(filepath.Dir(path)):
		tries = []string{shared, immutable}
	case walData:
		tries = []string{sharedRO}
	default:
		tries = []string{immutable}
	}
	var b *Backend
	for i, dsn := range tries {
		b, err = openReaders(ctx, path, dsn, opt)
		if err == nil {
			break
		}
		if i == len(tries)-1 || !cannotShare(err) {
			return nil, mapErr(path, err)
		}
	}
	if err := b.prepare(ctx); err != nil {
		b.Close()
		return nil, mapErr(path, fmt.Errorf("sqlite: %s: %w", path, err))
	}
	return b, nil
}

// openReaders opens the reader pool of a read-only backend on dsn and
// checks the schema it finds; the writer is the same pool, whose every
// write is refused before it reaches SQLite.
func openReaders(ctx context.Context, path, dsn string, opt options) (*Backend, error) {
	b := &Backend{path: path, indexEvery: defaultIndexEvery, readOnly: true}
	clock := time.Now
	b.clock.Store(&clock)
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	n := max(opt.readers, 4)
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	db.SetConnMaxIdleTime(0)
	b.r, b.w = db, db
	if err := checkSchema(ctx, db); err != nil {
		db.Close()
		return nil, err
	}
	return b, nil
}

// checkSchema refuses a database whose schema is not the one this backend
// reads: a read-only open cannot migrate it.
func checkSchema(ctx context.Context, db *sql.DB) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	s, err := readState(ctx, db, true)
	if err != nil {
		s, err = readState(ctx, db, false)
	}
	if err != nil {
		if strings.Contains(err.Error(), "no such table") {
			return errors.New("not a satchel database (it has no schema_migrations table)")
		}
		return err
	}
	if err := sqlmigrate.Check(s, ms); err != nil {
		return err
	}
	if pending := sqlmigrate.Pending(s, ms, false); len(pending) > 0 {
		return fmt.Errorf("the database's schema is version %d and lacks this satchel's migration %s: open it once for writing (satchel migrate) to bring it up to date", s.Version(), pending[0].Name)
	}
	return nil
}

// cannotShare reports whether err is SQLite failing to use the shared
// memory index beside the file (it cannot create, open or grow -shm).
func cannotShare(err error) bool {
	var e *msqlite.Error
	if !errors.As(err, &e) {
		return false
	}
	switch e.Code() & 0xff {
	case 8, 10, 13, 14: // READONLY (CANTINIT among them), IOERR, FULL, CANTOPEN
		return true
	}
	return false
}

// dbError is an error of the database as a whole, in the user's words.
type dbError struct {
	msg  string
	kind error // what it matches with errors.Is (nil: nothing)
	err  error // the underlying error, for errors.As
}

func (e *dbError) Error() string { return e.msg }

func (e *dbError) Unwrap() []error {
	var out []error
	if e.kind != nil {
		out = append(out, e.kind)
	}
	if e.err != nil {
		out = append(out, e.err)
	}
	return out
}

// readOnlyErr is what every write to a read-only backend returns.
func (b *Backend) readOnlyErr() error {
	return &dbError{msg: "the database " + b.path + " is read-only: it can be read, not written", kind: backend.ErrReadOnly}
}

// mapErr says what err means when it is the disk that is full, or the
// file that cannot be written; other errors are returned as they are.
func mapErr(path string, err error) error {
	if err == nil {
		return nil
	}
	var d *dbError
	if errors.As(err, &d) {
		return err
	}
	var e *msqlite.Error
	if !errors.As(err, &e) {
		return err
	}
	switch e.Code() & 0xff {
	case 13: // SQLITE_FULL
		return &dbError{msg: "the disk holding " + path + " is full", err: err}
	case 10, 14: // IOERR, CANTOPEN: a full disk is the common cause; look
		if diskFull(filepath.Dir(path)) {
			return &dbError{msg: "the disk holding " + path + " is full", err: err}
		}
		if e.Code()&0xff == 14 {
			return &dbError{msg: "cannot open the database " + path + ": " + err.Error(), err: err}
		}
	case 8: // SQLITE_READONLY
		return &dbError{msg: "the database " + path + " is read-only: it can be read, not written", kind: backend.ErrReadOnly, err: err}
	}
	return err
}

// checkWritable refuses, before SQLite is asked to, a database file that
// exists and cannot be written (or whose directory cannot take the
// write-ahead log beside it), and a path whose directory does not exist or
// that is a directory.
func checkWritable(path string) error {
	fi, err := os.Stat(path)
	if err == nil {
		if fi.IsDir() {
			return &dbError{msg: path + " is a directory, not a database file"}
		}
		if !writable(path) {
			return &dbError{msg: "the database " + path + " is read-only: it can be read, not written", kind: backend.ErrReadOnly}
		}
		return nil
	}
	dir := filepath.Dir(path)
	di, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &dbError{msg: "cannot create the database " + path + ": directory " + dir + " does not exist", kind: fs.ErrNotExist}
	case err == nil && !di.IsDir():
		return &dbError{msg: "cannot create the database " + path + ": " + dir + " is not a directory"}
	}
	return nil
}
