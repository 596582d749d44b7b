package satchel_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/backend/postgres/postgrestest"
	"github.com/satchel-dev/satchel/internal/testenv"
)

// TestStoreOperations: what operators' tools ask of a store, on memory
// (no schema, no pool, no file backup) and SQLite (a schema, a file).
func TestStoreOperations(t *testing.T) {
	ctx := context.Background()
	mem, err := satchel.Open(ctx, "memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	path := filepath.Join(t.TempDir(), "s.db")
	file, err := satchel.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()

	for name, st := range map[string]*satchel.Store{"memory": mem, "sqlite": file} {
		if err := st.Ping(ctx); err != nil {
			t.Errorf("%s: Ping: %v", name, err)
		}
		if now, err := st.Now(ctx); err != nil || now.IsZero() {
			t.Errorf("%s: Now: %v, %v", name, now, err)
		}
		if _, ok := st.PoolStats(); ok {
			t.Errorf("%s: PoolStats reports a pool", name)
		}
	}
	if mem.HasFileBackup() || !file.HasFileBackup() {
		t.Errorf("HasFileBackup: memory %v, sqlite %v", mem.HasFileBackup(), file.HasFileBackup())
	}

	const noSchema = "the memory: database has no schema to migrate"
	for _, contract := range []bool{false, true} {
		if _, err := mem.Migrate(ctx, contract); !errors.Is(err, satchel.ErrInvalidArgument) || err.Error() != noSchema {
			t.Errorf("memory: Migrate(contract %v): %v", contract, err)
		}
		sc, err := file.Migrate(ctx, contract)
		if err != nil || sc.Backend != "sqlite" || sc.Version < 1 {
			t.Errorf("sqlite: Migrate(contract %v): %+v, %v", contract, sc, err)
		}
	}

	if _, _, err := satchel.MigrationScript(ctx, "memory:", false, true); !errors.Is(err, satchel.ErrInvalidArgument) || err.Error() != noSchema {
		t.Errorf("MigrationScript(memory:): %v", err)
	}
	for dsn, want := range map[string]string{"x.db": "sqlite", "postgres://nowhere/db": "postgres"} {
		kind, sql, err := satchel.MigrationScript(ctx, dsn, false, true)
		if err != nil || kind != want || !strings.Contains(sql, "CREATE TABLE") {
			t.Errorf("MigrationScript(%s, all): %q, %d bytes of SQL, %v", dsn, kind, len(sql), err)
		}
	}
	// A database with every migration applied has nothing to migrate.
	if kind, sql, err := satchel.MigrationScript(ctx, path, false, false); err != nil || kind != "sqlite" || sql != "" {
		t.Errorf("MigrationScript of a migrated database: %q, %q, %v", kind, sql, err)
	}
}

// TestStoreOperationsPostgres: on PostgreSQL the store reports its pool
// and its schema.
func TestStoreOperationsPostgres(t *testing.T) {
	url := testenv.PostgresURL(t)
	ctx := context.Background()
	schema := postgrestest.Name("satchel_ops")
	b, _ := postgrestest.OpenAt(t, url, schema)
	st := satchel.New(b)
	t.Cleanup(func() { st.Close() })
	if err := st.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if ps, ok := st.PoolStats(); !ok || ps.Max < 1 || ps.Acquires < 1 {
		t.Errorf("PoolStats: %+v, %v", ps, ok)
	}
	if sc, err := st.Migrate(ctx, false); err != nil || sc.Backend != "postgres" || sc.Version < 1 {
		t.Errorf("Migrate: %+v, %v", sc, err)
	}
	if st.HasFileBackup() {
		t.Error("HasFileBackup on PostgreSQL")
	}
}
