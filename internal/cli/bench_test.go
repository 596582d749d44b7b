package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/satchel-dev/satchel/backend/postgres"
	"github.com/satchel-dev/satchel/internal/bench"
	"github.com/satchel-dev/satchel/internal/testenv"
)

// TestBenchJSON runs W1 and W3 small on memory and SQLite: one JSON
// object a line, with the fields and names of the contract.
func TestBenchJSON(t *testing.T) {
	h := newHarness(t)
	out := h.ok("bench", "--workload", "w1,w3", "--backend", "memory,sqlite", "--n", "150", "--json")
	type line struct {
		System, Workload, Phase string
	}
	seen := map[string][]string{}
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var r line
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("not a JSON object: %q: %v", l, err)
		}
		raw := map[string]any{}
		_ = json.Unmarshal([]byte(l), &raw)
		for _, k := range []string{"system", "workload", "phase", "ops", "seconds", "ops_per_s", "p50_us", "p99_us"} {
			if _, ok := raw[k]; !ok {
				t.Errorf("line %s lacks %q", l, k)
			}
		}
		if !slices.Contains([]string{"satchel-memory", "satchel-sqlite"}, r.System) {
			t.Errorf("system %q", r.System)
		}
		if r.Workload == "W3" {
			for _, k := range []string{"bytes_per_checkpoint", "step_us", "fork_us", "old_read_us", "head_read_us"} {
				if v, _ := raw[k].(float64); v <= 0 {
					t.Errorf("W3 line %s: %s is %v", l, k, raw[k])
				}
			}
		}
		key := r.System + " " + r.Workload
		seen[key] = append(seen[key], r.Phase)
	}
	for _, sys := range []string{"satchel-memory", "satchel-sqlite"} {
		if got := seen[sys+" W1"]; !slices.Equal(got, bench.W1Phases) {
			t.Errorf("%s W1 phases %v, want %v", sys, got, bench.W1Phases)
		}
		if got := seen[sys+" W3"]; !slices.Equal(got, []string{"write", "edit", "read"}) {
			t.Errorf("%s W3 phases %v", sys, got)
		}
	}
}

// TestBenchPlain: a table and the targets, no progress bar when standard
// error is not a terminal.
// TestBenchCPUProfile: --cpuprofile writes a profile pprof can read (a
// gzipped protocol buffer) of the run.
func TestBenchCPUProfile(t *testing.T) {
	h := newHarness(t)
	file := filepath.Join(t.TempDir(), "cpu.prof")
	h.ok("bench", "--workload", "w1", "--backend", "memory", "--n", "100", "--json", "--cpuprofile", file)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Fatalf("profile of %d bytes is not gzipped", len(b))
	}
}

func TestBenchPlain(t *testing.T) {
	h := newHarness(t)
	r := h.run("bench", "--workload", "w3", "--backend", "memory", "--n", "100")
	if r.Code != 0 || r.Err != "" {
		t.Fatalf("exit %d, stderr %q", r.Code, r.Err)
	}
	for _, want := range []string{"system", "satchel-memory", "W3", "bytes/checkpoint", "targets:", "W3 fork"} {
		if !strings.Contains(r.Out, want) {
			t.Errorf("output lacks %q:\n%s", want, r.Out)
		}
	}
}

func TestBenchUsage(t *testing.T) {
	h := newHarness(t)
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"bench", "--workload", "w9"}, `unknown workload "w9"`},
		{[]string{"bench", "--backend", "oracle"}, `unknown backend "oracle"`},
		{[]string{"bench", "--backend", "postgres"}, "--backend postgres needs a server"},
		{[]string{"bench", "--n", "-1"}, "--n must not be negative"},
	} {
		r := h.run(c.args...)
		if r.Code != 2 || !strings.Contains(r.Err, c.msg) {
			t.Errorf("satchel %s: exit %d, stderr %q; want exit 2 and %q", strings.Join(c.args, " "), r.Code, r.Err, c.msg)
		}
	}
}

// TestBenchMismatch: a workload whose expectation fails makes the command
// exit 1 with the workload's message.
func TestBenchMismatch(t *testing.T) {
	registerWfail.Do(registerFailing)
	h := newHarness(t)
	r := h.run("bench", "--workload", "wfail", "--backend", "memory", "--json")
	if r.Code != 1 || !strings.Contains(r.Err, "expectation failed") {
		t.Errorf("exit %d, stderr %q; want exit 1 and the expectation", r.Code, r.Err)
	}
}

// registerWfail registers the failing workload once a process: Register
// refuses a name twice, and -count runs the test again.
var registerWfail sync.Once

func registerFailing() {
	bench.Register(bench.Workload{
		Name: "Wfail", DefaultN: 1, Ops: func(int) int { return 1 },
		Run: func(ctx context.Context, env bench.Env, report func(bench.Result)) error {
			report(bench.Result{System: env.System, Workload: "Wfail", Phase: "write", Ops: 1})
			return errors.New("bench Wfail write: expectation failed: 0 files exist, want 1")
		},
	})
}

// TestMigrate migrates a new SQLite file and prints its version.
func TestMigrate(t *testing.T) {
	db := filepath.Join(t.TempDir(), "m.db")
	for _, args := range [][]string{{"migrate", "--db", db}, {"migrate", "--db", db, "--json"}} {
		var out, errb bytes.Buffer
		a := newApp(nil, &out, &errb)
		if code := run(context.Background(), a, args); code != 0 {
			t.Fatalf("satchel %v: exit %d, stderr %q", args, code, errb.String())
		}
		got := strings.TrimSpace(out.String())
		if args[len(args)-1] == "--json" {
			var m migrateResult
			if err := json.Unmarshal([]byte(got), &m); err != nil || m.Backend != "sqlite" || m.SchemaVersion < 1 {
				t.Errorf("--json: %q (%v)", got, err)
			}
		} else if !strings.HasPrefix(got, "schema version ") || got == "schema version 0" {
			t.Errorf("got %q", got)
		}
	}
	h := newHarness(t)
	h.refused("the memory: database has no schema to migrate", "migrate")
}

// TestBenchAndMigratePostgres runs bench on PostgreSQL (a fresh schema per
// run, dropped afterwards) and migrate on a schema of its own, when
// SATCHEL_TEST_POSTGRES names a server.
func TestBenchAndMigratePostgres(t *testing.T) {
	url := testenv.PostgresURL(t)
	h := newHarness(t)
	h.env[benchPGEnv] = url
	out := h.ok("bench", "--workload", "w1,w3", "--backend", "postgres", "--n", "100", "--json")
	if n := strings.Count(out, `"system":"satchel-postgres"`); n != len(bench.W1Phases)+3 {
		t.Errorf("%d lines of satchel-postgres, want %d:\n%s", n, len(bench.W1Phases)+3, out)
	}

	schema := benchSchemaName()
	b, err := postgres.OpenFresh(t.Context(), url, schema)
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	// Start from an empty schema: migrate must create everything.
	if err := postgres.DropSchema(t.Context(), url, schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = postgres.DropSchema(context.Background(), url, schema) })
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	_, err = conn.Exec(t.Context(), "CREATE SCHEMA "+schema)
	conn.Close(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	var stdout, stderr bytes.Buffer
	a := newApp(nil, &stdout, &stderr)
	if code := run(context.Background(), a, []string{"migrate", "--json", "--db", url + sep + "search_path=" + schema}); code != 0 {
		t.Fatalf("migrate: exit %d: %s", code, stderr.String())
	}
	var m migrateResult
	if err := json.Unmarshal(stdout.Bytes(), &m); err != nil || m.Backend != "postgres" || m.SchemaVersion < 1 {
		t.Errorf("migrate --json: %q (%v)", stdout.String(), err)
	}
}
