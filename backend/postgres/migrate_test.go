package postgres

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/internal/sqlmigrate"
)

// TestWithoutDDL applies the printed schema (satchel migrate --print
// --all) as the owner, then opens the database as a role that may read
// and write satchel's tables but not create anything: it opens, writes
// and reads without running DDL, as docs/operations.md tells operators.
func TestWithoutDDL(t *testing.T) {
	ctx := t.Context()
	url := testURL(t)
	schema := testSchema()
	role := schema + "_app"
	owner, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close(context.Background())
	sch, rl := pgx.Identifier{schema}.Sanitize(), pgx.Identifier{role}.Sanitize()
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), url)
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close(context.Background())
		for _, q := range []string{"DROP SCHEMA IF EXISTS " + sch + " CASCADE", "DROP OWNED BY " + rl, "DROP ROLE IF EXISTS " + rl} {
			if _, err := c.Exec(context.Background(), q); err != nil {
				t.Errorf("%s: %v", q, err)
			}
		}
	})
	script, err := SchemaScript()
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"CREATE SCHEMA " + sch,
		"SET search_path = " + sch,
		script,
		"CREATE ROLE " + rl + " LOGIN",
		"GRANT USAGE ON SCHEMA " + sch + " TO " + rl,
		"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA " + sch + " TO " + rl,
		"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA " + sch + " TO " + rl,
	} {
		if _, err := owner.Exec(ctx, q); err != nil {
			t.Fatalf("%.60s: %v", q, err)
		}
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.User = role
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	// The role cannot run DDL: the test would pass for nothing otherwise.
	app, err := pgx.ConnectConfig(ctx, cfg.ConnConfig.Copy())
	if err != nil {
		t.Fatal(err)
	}
	_, err = app.Exec(ctx, "CREATE TABLE probe (x int)")
	app.Close(ctx)
	if err == nil || pgCode(err) != "42501" {
		t.Fatalf("CREATE TABLE as the application role: %v, want permission denied", err)
	}

	b, err := open(ctx, cfg)
	if err != nil {
		t.Fatalf("open as a role without CREATE: %v", err)
	}
	defer b.Close()
	if err := b.Migrate(ctx); err != nil {
		t.Errorf("Migrate of a database up to date, without CREATE: %v", err)
	}
	th, err := b.CreateThread(ctx, "s", "t")
	if err != nil {
		t.Fatal(err)
	}
	res, err := b.Append(ctx, []backend.NewCommit{{Thread: th.ID, Seq: 1, Root: []byte{1}, Pack: []byte("p")}})
	if err != nil || res[0].Err != nil {
		t.Fatalf("append: %v %+v", err, res)
	}
	if h, ok, err := b.Head(ctx, th.ID); err != nil || !ok || h.Seq != 1 {
		t.Errorf("head: %+v %v %v", h, ok, err)
	}
	var n int
	if err := b.pool.QueryRow(ctx, "SELECT count(*) FROM processes WHERE id = $1", b.reg.ID()).Scan(&n); err != nil || n != 1 {
		t.Errorf("the role's process row: %d (%v)", n, err)
	}
}

// TestProcessRegistry: an open backend has its row (host, pid, schema
// version), renewed; Close deletes it; a row not seen for the lease is
// forgotten by the next migration's check.
func TestProcessRegistry(t *testing.T) {
	ctx := t.Context()
	url := testURL(t)
	schema := testSchema()
	b, err := OpenFresh(ctx, url, schema)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = DropSchema(context.Background(), url, schema) })
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	var host, program string
	var pid, sv int
	if err := b.pool.QueryRow(ctx, "SELECT host, pid, program, schema_version FROM processes WHERE id = $1", b.reg.ID()).Scan(&host, &pid, &program, &sv); err != nil {
		t.Fatal(err)
	}
	if h, _ := os.Hostname(); host != h || pid != os.Getpid() || sv != len(ms) || program == "" {
		t.Errorf("row: %s %d %q %d", host, pid, program, sv)
	}
	// A renewal of a forgotten row registers again.
	if _, err := b.pool.Exec(ctx, "DELETE FROM processes"); err != nil {
		t.Fatal(err)
	}
	if ok, err := (registry{b.pool}).Renew(ctx, b.reg.ID()); ok || err != nil {
		t.Errorf("renew of a deleted row: %v %v", ok, err)
	}
	id, err := (registry{b.pool}).Register(ctx, sqlmigrate.Process{Host: "old", PID: 1, Program: "v0", Schema: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.pool.Exec(ctx, "UPDATE processes SET seen = now() - interval '1 hour' WHERE id = $1", id); err != nil {
		t.Fatal(err)
	}
	var got []sqlmigrate.Process
	if err := pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
		got, err = live(ctx, tx)
		return err
	}); err != nil || len(got) != 0 {
		t.Errorf("live after the lease: %+v %v", got, err)
	}
	b.Close()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{schema, "processes"}.Sanitize()).Scan(&n); err != nil || n != 0 {
		t.Errorf("rows once the backend closed: %d (%v)", n, err)
	}
}

// contractProbe is a test-only migration set over the real one: an
// expand migration adds a table, the contract one drops a column of it.
func contractProbe(n int) []sqlmigrate.Migration {
	return []sqlmigrate.Migration{
		{Version: n + 1, Name: fmt.Sprintf("%04d_probe.sql", n+1), Kind: sqlmigrate.Expand, SQL: "CREATE TABLE probe (x int, y int)"},
		{Version: n + 2, Name: fmt.Sprintf("%04d_probe_drop_y.sql", n+2), Kind: sqlmigrate.Contract, SQL: "-- satchel:contract\nALTER TABLE probe DROP COLUMN y"},
	}
}

// TestContract: with the probe set, an open applies the expand migration
// and leaves the contract one; an older process (the real set) runs on
// it; MigrateContract is refused naming it while it is open, succeeds
// once it closed, and the older program is then refused.
func TestContract(t *testing.T) {
	ctx := t.Context()
	url := testURL(t)
	schema := testSchema()
	old, err := OpenFresh(ctx, url, schema)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = DropSchema(context.Background(), url, schema) })
	real, _ := migrations()
	extraMigrations = contractProbe
	t.Cleanup(func() { extraMigrations = nil })
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	b, err := open(ctx, cfg.Copy())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if v, err := b.SchemaVersion(ctx); err != nil || v != len(real)+1 {
		t.Fatalf("schema version %d (%v), want %d: the contract migration waits", v, err, len(real)+1)
	}
	// The old process still writes.
	if _, err := old.CreateThread(ctx, "s", "old"); err != nil {
		t.Errorf("old process: %v", err)
	}
	err = b.MigrateContract(ctx)
	var e *sqlmigrate.OlderProcessesError
	if !errors.Is(err, backend.ErrOlderProcesses) || !errors.As(err, &e) || len(e.Processes) != 1 || e.Processes[0].Schema != len(real) {
		t.Fatalf("contract while an older process is open: %v", err)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("pid %d on ", os.Getpid())) {
		t.Errorf("refusal does not name the process: %v", err)
	}
	if v, _ := b.SchemaVersion(ctx); v != len(real)+1 {
		t.Errorf("schema version %d after the refusal", v)
	}
	old.Close()
	if err := b.MigrateContract(ctx); err != nil {
		t.Fatalf("contract once the older process closed: %v", err)
	}
	if v, _ := b.SchemaVersion(ctx); v != len(real)+2 {
		t.Errorf("schema version %d after the contract", v)
	}
	extraMigrations = nil
	oldCfg := cfg.Copy()
	if o, err := open(ctx, oldCfg); !errors.Is(err, backend.ErrSchemaTooNew) {
		if o != nil {
			o.Close()
		}
		t.Errorf("the older program after the contract: %v", err)
	}
}
