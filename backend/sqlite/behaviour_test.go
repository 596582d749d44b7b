package sqlite_test

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/backendtest"
	"github.com/satchel-dev/satchel/backend/sqlite"
	"github.com/satchel-dev/satchel/internal/sqlitetest"
	"github.com/satchel-dev/satchel/satcheltest"
)

func open(t *testing.T) *sqlite.Backend {
	b, err := sqlite.Open(context.Background(), sqlitetest.NewFile(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// TestConformance runs the whole suite on SQLite, and again with each of
// its optional capabilities hidden.
func TestConformance(t *testing.T) {
	satcheltest.Run(t, func(t *testing.T) backend.Backend { return open(t) })
}

// TestIndexEvery runs the contract and the behaviours with commit_seq
// written every commit and every second commit: the default (256) leaves
// most of a test's commits in the recent half of thread_commits.
func TestIndexEvery(t *testing.T) {
	for _, k := range []int64{1, 2} {
		open := func(t *testing.T) backend.Backend {
			b, err := sqlite.OpenIndexEvery(context.Background(), sqlitetest.NewFile(t), k)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { b.Close() })
			return b
		}
		t.Run("k="+strconv.FormatInt(k, 10), func(t *testing.T) {
			backendtest.RunContract(t, open)
			satcheltest.RunBehaviour(t, open)
		})
	}
}

// TestQuotaRaceTwoConnections races writers of two Backends on one file
// (two write connections, as two processes have) to a scope's quotas.
func TestQuotaRaceTwoConnections(t *testing.T) {
	path := filepath.Join(t.TempDir(), "satchel.db")
	var bs [2]*sqlite.Backend
	for i := range bs {
		b, err := sqlite.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		bs[i] = b
	}
	satcheltest.RunQuotaRace(t, bs[0], bs[1])
}
