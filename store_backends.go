package satchel

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/postgres"
	"github.com/satchel-dev/satchel/backend/sqlite"
	"github.com/satchel-dev/satchel/internal/errs"
)

// openers picks the backend for a DSN that is not `memory:`. The root
// package links every backend satchel ships, so Open works with any DSN
// without blank imports (docs/decisions/0004-open-links-backends.md).
func openers(dsn string, c config) func(ctx context.Context, dsn string) (backend.Backend, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		return func(ctx context.Context, dsn string) (backend.Backend, error) {
			b, err := postgres.Open(ctx, dsn)
			return b, postgresOpenError(dsn, err)
		}
	}
	if c.readOnly {
		return func(ctx context.Context, dsn string) (backend.Backend, error) {
			b, err := sqlite.OpenReadOnly(ctx, dsn)
			return b, sqliteOpenError(dsn, err)
		}
	}
	return func(ctx context.Context, dsn string) (backend.Backend, error) {
		b, err := sqlite.Open(ctx, dsn)
		return b, sqliteOpenError(dsn, err)
	}
}

// openError is a database that cannot be opened, said in the operator's
// terms; the driver's error stays in the chain for errors.Is and As.
type openError struct {
	msg  string
	kind error // a kind of refusal (ErrInvalidArgument), or nil
	err  error
}

func (e *openError) Error() string { return e.msg }
func (e *openError) Unwrap() []error {
	if e.kind == nil {
		return []error{e.err}
	}
	return []error{e.kind, e.err}
}

// sqliteOpenError names a file that is not a SQLite database as such,
// instead of the driver's "file is not a database (26)". Other errors are
// returned as they are.
func sqliteOpenError(dsn string, err error) error {
	if err == nil || !strings.Contains(err.Error(), "file is not a database") {
		return err
	}
	path := strings.TrimPrefix(dsn, "file:")
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	return &openError{msg: fmt.Sprintf("%s is not a satchel database (SQLite)", path), kind: errs.ErrInvalidArgument, err: err}
}

// postgresOpenError says once which server could not be reached and why
// ("connection refused", "no such host"), instead of the driver's error,
// which repeats the dial error of every address it tried.
func postgresOpenError(dsn string, err error) error {
	if err == nil {
		return nil
	}
	var op *net.OpError
	var dns *net.DNSError
	reason := ""
	switch {
	case errors.As(err, &dns):
		reason = "no such host"
		if !dns.IsNotFound {
			reason = dns.Err
		}
	case errors.As(err, &op) && op.Op == "dial":
		reason = op.Err.Error()
		var sys *os.SyscallError
		if errors.As(op.Err, &sys) {
			reason = sys.Err.Error()
		}
	default:
		return err
	}
	addr := "the server"
	if u, perr := url.Parse(dsn); perr == nil && u.Host != "" {
		addr = u.Host
		if u.Port() == "" {
			addr = net.JoinHostPort(u.Hostname(), "5432")
		}
	}
	return &openError{msg: fmt.Sprintf("cannot connect to PostgreSQL at %s: %s", addr, reason), err: err}
}

// knownScheme reports whether a URL scheme names a backend satchel has
// ("file" is a SQLite path).
func knownScheme(scheme string) bool {
	switch strings.ToLower(scheme) {
	case "postgres", "postgresql", "file":
		return true
	}
	return false
}

// urlScheme returns the scheme of a dsn written as a URL (scheme://...),
// as RFC 3986 spells one: a letter, then letters, digits, '+', '-', '.'.
func urlScheme(dsn string) (string, bool) {
	scheme, _, ok := strings.Cut(dsn, "://")
	if !ok || scheme == "" {
		return "", false
	}
	for i, c := range scheme {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (i == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return "", false
		}
	}
	return scheme, true
}
