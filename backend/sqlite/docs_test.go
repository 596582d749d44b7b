package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/sqlite"
	"github.com/satchel-dev/satchel/satcheltest"
)

func TestDocuments(t *testing.T) {
	satcheltest.RunDocuments(t, func(t *testing.T) backend.Backend {
		b, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "satchel.db"))
		if err != nil {
			t.Fatal(err)
		}
		return b // the suite closes it
	})
}
