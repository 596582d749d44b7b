package satchel

import (
	"context"
	"strings"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/postgres"
	"github.com/satchel-dev/satchel/backend/sqlite"
)

// openers picks the backend for a DSN that is not `memory:`. The root
// package links every backend satchel ships, so Open works with any DSN
// without blank imports (docs/decisions/0004-open-links-backends.md).
func openers(dsn string, c config) func(ctx context.Context, dsn string) (backend.Backend, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		return func(ctx context.Context, dsn string) (backend.Backend, error) { return postgres.Open(ctx, dsn) }
	}
	if c.readOnly {
		return func(ctx context.Context, dsn string) (backend.Backend, error) { return sqlite.OpenReadOnly(ctx, dsn) }
	}
	return func(ctx context.Context, dsn string) (backend.Backend, error) { return sqlite.Open(ctx, dsn) }
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
