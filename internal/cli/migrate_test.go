package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMigratePrint: --print on a missing file prints the whole schema and
// creates nothing; --print --all needs no database; once migrated,
// --print prints nothing; --contract with nothing to contract succeeds;
// --all without --print is refused.
func TestMigratePrint(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "p.db")
	main := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(context.Background(), newApp(nil, &out, &errb), args)
		return code, out.String(), errb.String()
	}
	code, all, errs := main("migrate", "--print", "--all", "--db", db)
	if code != 0 || !strings.HasPrefix(all, "BEGIN IMMEDIATE;") || !strings.Contains(all, "INSERT INTO schema_migrations") || !strings.HasSuffix(all, "COMMIT;\n") {
		t.Fatalf("--print --all: exit %d, %q\n%s", code, errs, all)
	}
	if code, out, _ := main("migrate", "--print", "--db", db); code != 0 || out != all {
		t.Errorf("--print of a missing file: exit %d, not the whole schema", code)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("--print created the database: %v", err)
	}
	code, pg, _ := main("migrate", "--print", "--all", "--db", "postgres://nowhere.invalid/x")
	if code != 0 || !strings.Contains(pg, "timestamptz") || !strings.HasPrefix(pg, "BEGIN;") {
		t.Errorf("--print --all for PostgreSQL without a server: exit %d\n%.200s", code, pg)
	}
	if code, out, errs := main("migrate", "--db", db); code != 0 || !strings.HasPrefix(out, "schema version ") {
		t.Fatalf("migrate: %d %q %q", code, out, errs)
	}
	if code, out, errs := main("migrate", "--print", "--db", db, "--json"); code != 0 || strings.TrimSpace(out) != `{"backend":"sqlite","sql":""}` {
		t.Errorf("--print --json of a migrated database: %d %q %q", code, out, errs)
	}
	code, out, errs := main("migrate", "--contract", "--json", "--db", db)
	var m migrateResult
	if code != 0 || json.Unmarshal([]byte(out), &m) != nil || m.SchemaVersion < 1 {
		t.Errorf("--contract with nothing to contract: %d %q %q", code, out, errs)
	}
	if code, _, errs := main("migrate", "--all", "--db", db); code != 1 || !strings.Contains(errs, "--all goes with --print") {
		t.Errorf("--all alone: %d %q", code, errs)
	}
	h := newHarness(t)
	h.refused("the memory: database has no schema to migrate", "migrate", "--print", "--db", "memory:")
}
