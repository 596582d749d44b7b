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
func openers(dsn string) func(ctx context.Context, dsn string) (backend.Backend, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		return func(ctx context.Context, dsn string) (backend.Backend, error) { return postgres.Open(ctx, dsn) }
	}
	return func(ctx context.Context, dsn string) (backend.Backend, error) { return sqlite.Open(ctx, dsn) }
}
