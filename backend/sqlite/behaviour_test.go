package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/sqlite"
	"github.com/satchel-dev/satchel/satcheltest"
)

func TestBehaviour(t *testing.T) {
	satcheltest.RunBehaviour(t, func(t *testing.T) backend.Backend {
		b, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "satchel.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		return b
	})
}
