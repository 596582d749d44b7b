package postgres_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/postgres"
	"github.com/satchel-dev/satchel/internal/testenv"
	"github.com/satchel-dev/satchel/satcheltest"
)

var docSchemas atomic.Int64

// openDocs opens a backend in a schema of its own, dropped at the end.
func openDocs(t *testing.T) *postgres.Backend {
	url := testenv.PostgresURL(t)
	schema := fmt.Sprintf("satchel_docs_%d_%d", os.Getpid(), docSchemas.Add(1))
	b, err := postgres.OpenFresh(context.Background(), url, schema)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		b.Close()
		if err := postgres.DropSchema(context.Background(), url, schema); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return b
}

// TestConformance runs the whole suite on PostgreSQL, each subtest in a
// schema of its own, then again with each optional capability hidden:
// those runs side by side (each waits on the server as much as it
// computes).
func TestConformance(t *testing.T) {
	testenv.PostgresURL(t)
	satcheltest.Run(t, func(t *testing.T) backend.Backend { return openDocs(t) })
	t.Run("NoForker", func(t *testing.T) {
		t.Parallel()
		if _, ok := backend.Backend(noForker{}).(backend.Forker); ok {
			t.Fatal("the Forker is not hidden")
		}
		satcheltest.Run(t, func(t *testing.T) backend.Backend { return noForker{Backend: openDocs(t)} })
	})
	t.Run("NoCheckpointResolver", func(t *testing.T) {
		t.Parallel()
		if _, ok := backend.Backend(noResolver{}).(backend.CheckpointResolver); ok {
			t.Fatal("the CheckpointResolver is not hidden")
		}
		satcheltest.Run(t, func(t *testing.T) backend.Backend { return noResolver{Backend: openDocs(t)} })
	})
	t.Run("NoHeadsLister", func(t *testing.T) {
		t.Parallel()
		if _, ok := backend.Backend(noHeads{}).(backend.HeadsLister); ok {
			t.Fatal("the HeadsLister is not hidden")
		}
		satcheltest.Run(t, func(t *testing.T) backend.Backend { return noHeads{Backend: openDocs(t)} })
	})
	t.Run("NoDocBatcher", func(t *testing.T) {
		t.Parallel()
		if _, ok := backend.Backend(noBatch{}).(backend.DocBatcher); ok {
			t.Fatal("the DocBatcher is not hidden")
		}
		satcheltest.RunDocuments(t, func(t *testing.T) backend.Backend { return noBatch{Backend: openDocs(t)} })
	})
	// Both are what makes the engine treat the backend as a server a
	// round trip away; without them it commits as on an embedded one.
	t.Run("NoConcurrentAppenderNoRemote", func(t *testing.T) {
		t.Parallel()
		if _, ok := backend.Backend(noConcurrent{}).(backend.ConcurrentAppender); ok {
			t.Fatal("the ConcurrentAppender is not hidden")
		}
		if _, ok := backend.Backend(noConcurrent{}).(backend.Remote); ok {
			t.Fatal("Remote is not hidden")
		}
		satcheltest.Run(t, func(t *testing.T) backend.Backend { return noConcurrent{Backend: openDocs(t)} })
	})
	t.Run("NoPacksReader", func(t *testing.T) {
		t.Parallel()
		if _, ok := backend.Backend(noPacks{}).(backend.PacksReader); ok {
			t.Fatal("the PacksReader is not hidden")
		}
		satcheltest.Run(t, func(t *testing.T) backend.Backend { return noPacks{Backend: openDocs(t)} })
	})
	t.Run("NoThreadLocker", func(t *testing.T) {
		t.Parallel()
		if _, ok := backend.Backend(noLocker{}).(backend.ThreadLocker); ok {
			t.Fatal("the ThreadLocker is not hidden")
		}
		satcheltest.Run(t, func(t *testing.T) backend.Backend { return noLocker{Backend: openDocs(t)} })
	})
}

// noPacks is a PostgreSQL backend that reads each pack on its own.
type noPacks struct {
	*postgres.Backend
	satcheltest.HidePacksReader
}

type noLocker struct {
	*postgres.Backend
	satcheltest.HideThreadLocker
}

// noBatch is a PostgreSQL backend that stores each set in its own
// transaction.
type noBatch struct {
	*postgres.Backend
	satcheltest.HideDocBatcher
}

type noConcurrent struct {
	*postgres.Backend
	satcheltest.HideConcurrentAppender
	satcheltest.HideRemote
}

type noHeads struct {
	*postgres.Backend
	satcheltest.HideHeadsLister
}

type noForker struct {
	*postgres.Backend
	satcheltest.HideForker
}

type noResolver struct {
	*postgres.Backend
	satcheltest.HideCheckpointResolver
}

// TestQuotaRaceTwoBackends races writers of two Backends (two pools, as
// two processes have) on one schema to a scope's quotas.
func TestQuotaRaceTwoBackends(t *testing.T) {
	url := testenv.PostgresURL(t)
	schema := fmt.Sprintf("satchel_quota_%d", os.Getpid())
	a, err := postgres.OpenFresh(context.Background(), url, schema)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		a.Close()
		if err := postgres.DropSchema(context.Background(), url, schema); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	b, err := postgres.Open(context.Background(), url+sep+"search_path="+schema)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	satcheltest.RunQuotaRace(t, a, b)
}
