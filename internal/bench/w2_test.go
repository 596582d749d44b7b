package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/backend/memory"
	"github.com/satchel-dev/satchel/backend/postgres"
	"github.com/satchel-dev/satchel/backend/sqlite"
	"github.com/satchel-dev/satchel/internal/testenv"
)

// w2N is the scale of the W2 tests: small by default, SATCHEL_W2_N for the
// figures of WORKLOADS.md (100000).
func w2N(t *testing.T) int {
	if s := os.Getenv("SATCHEL_W2_N"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("SATCHEL_W2_N: %v", err)
		}
		return n
	}
	if testing.Short() || raceEnabled {
		return 300
	}
	return 3000
}

func w2Project(t testing.TB, indexed bool) *satchel.Project {
	def := W2StoreDefinition()
	if indexed {
		def = W2StoreDefinitionIndexed()
	}
	p, err := satchel.LoadProjectFS(fstest.MapFS{"stores/" + W2StoreName + ".json": {Data: []byte(def)}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestW2 runs W2 on memory and SQLite, with and without indexes, checking
// every phase's expectation, and logs the figures (go test -v; set
// SATCHEL_W2_N=100000 for the workload's scale).
func TestW2(t *testing.T) {
	n := w2N(t)
	systems := []string{"memory", "sqlite", "postgres"}
	if s := os.Getenv("SATCHEL_W2_SYSTEMS"); s != "" {
		systems = strings.Split(s, ",")
	}
	for _, system := range systems {
		for _, indexed := range []bool{true, false} {
			name := system
			if indexed {
				name += "-indexed"
			}
			t.Run(name, func(t *testing.T) {
				ctx := context.Background()
				st := w2Store(t, system)
				c, err := st.Collection(ctx, w2Project(t, indexed), "bench", W2StoreName, satchel.Force())
				if err != nil {
					t.Fatal(err)
				}
				err = RunW2(ctx, c, W2Options{System: "satchel-" + system, N: n, Indexed: indexed}, func(r Result) {
					t.Log(fmt.Sprintf("%-24s %-9s %8d ops %10.0f ops/s  p50 %7.1fµs  p99 %8.1fµs", r.System, r.Phase, r.Ops, r.OpsPerSec, r.P50us, r.P99us))
				})
				if err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// w2Store opens an empty store of a system: memory, a SQLite file, or a
// schema of its own on the PostgreSQL server of SATCHEL_TEST_POSTGRES
// (skipped when it is not set).
func w2Store(t *testing.T, system string) *satchel.Store {
	ctx := context.Background()
	var st *satchel.Store
	switch system {
	case "memory":
		st = satchel.New(memory.New())
	case "sqlite":
		b, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "w2.db"))
		if err != nil {
			t.Fatal(err)
		}
		st = satchel.New(b)
	case "postgres":
		url := testenv.PostgresURL(t)
		schema := fmt.Sprintf("satchel_w2_%d", os.Getpid())
		b, err := postgres.OpenFresh(ctx, url, schema)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { postgres.DropSchema(context.Background(), url, schema) })
		st = satchel.New(b)
	default:
		t.Fatalf("unknown system %q", system)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
