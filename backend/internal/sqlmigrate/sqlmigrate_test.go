package sqlmigrate

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/satchel-dev/satchel/backend"
)

// fakeTx records what Run applies.
type fakeTx struct {
	state   State
	applied []string
	fail    string
	live    []Process
}

func (f *fakeTx) State(context.Context) (State, error) { return f.state, nil }

func (f *fakeTx) Apply(_ context.Context, m Migration) error {
	if m.Name == f.fail {
		return errors.New("boom")
	}
	f.applied = append(f.applied, m.Name)
	f.state = append(f.state, Applied{Version: m.Version, Name: m.Name, Kind: m.Kind})
	return nil
}

func (f *fakeTx) Live(context.Context) ([]Process, error) { return f.live, nil }

// upTo is the state of a database with ms[:n] applied.
func upTo(ms []Migration, n int) State {
	var s State
	for _, m := range ms[:n] {
		s = append(s, Applied{Version: m.Version, Name: m.Name, Kind: m.Kind})
	}
	return s
}

func TestLoadAndRun(t *testing.T) {
	fsys := fstest.MapFS{
		"m/0002_b.sql": {Data: []byte("B")},
		"m/0001_a.sql": {Data: []byte("A")},
		"m/0003_c.sql": {Data: []byte("C")},
		"m/README":     {Data: []byte("not a migration")},
	}
	ms, err := Load(fsys, "m")
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 3 || ms[0].Name != "0001_a.sql" || ms[0].SQL != "A" || ms[2].Version != 3 || ms[1].Kind != Expand {
		t.Fatalf("Load: %+v", ms)
	}
	tx := &fakeTx{state: upTo(ms, 1)}
	if err := Run(context.Background(), tx, ms, false); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(tx.applied, ","); got != "0002_b.sql,0003_c.sql" {
		t.Errorf("applied %s, want the two the database lacks", got)
	}
	// A schema newer by expand migrations only is run on.
	newer := append(upTo(ms, 3), Applied{Version: 4, Name: "0004_d.sql"})
	if err := Run(context.Background(), &fakeTx{state: newer}, ms, false); err != nil {
		t.Errorf("a schema newer by an expand migration: %v", err)
	}
	// One newer by a contract migration is refused.
	newer[3].Kind = Contract
	err = Run(context.Background(), &fakeTx{state: newer}, ms, false)
	if !errors.Is(err, backend.ErrSchemaTooNew) || !strings.Contains(err.Error(), "contract migration 0004_d.sql needs a satchel that knows version 4 or later; this program knows 3: upgrade satchel") {
		t.Errorf("a schema newer by a contract migration: %v", err)
	}
	if err := Run(context.Background(), &fakeTx{fail: "0002_b.sql"}, ms, false); err == nil || !strings.Contains(err.Error(), "0002_b.sql: boom") {
		t.Errorf("a failing migration: %v", err)
	}
	// A database migrated by a build with another migration 2.
	other := upTo(ms, 2)
	other[1].Name = "0002_other.sql"
	if err := Run(context.Background(), &fakeTx{state: other}, ms, false); err == nil || !strings.Contains(err.Error(), "another build") {
		t.Errorf("another build's migration 2: %v", err)
	}
}

// contractSet: 1 expand, 2 contract, 3 expand.
func contractSet(t *testing.T) []Migration {
	t.Helper()
	ms, err := Load(fstest.MapFS{
		"m/0001_a.sql": {Data: []byte("CREATE TABLE a (x int, y int);")},
		"m/0002_b.sql": {Data: []byte("-- drop y\n-- satchel:contract\nALTER TABLE a DROP COLUMN y;")},
		"m/0003_c.sql": {Data: []byte("-- satchel:expand\nCREATE TABLE c (x int);")},
	}, "m")
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

func TestContractWaits(t *testing.T) {
	ctx := context.Background()
	ms := contractSet(t)
	if ms[1].Kind != Contract || ms[2].Kind != Expand {
		t.Fatalf("kinds %v %v", ms[1].Kind, ms[2].Kind)
	}
	// A new database gets everything.
	tx := &fakeTx{}
	if err := Run(ctx, tx, ms, false); err != nil || len(tx.applied) != 3 {
		t.Fatalf("new database: applied %v, %v", tx.applied, err)
	}
	// An existing one gets the expand migrations only.
	tx = &fakeTx{state: upTo(ms, 1)}
	if err := Run(ctx, tx, ms, false); err != nil || strings.Join(tx.applied, ",") != "0003_c.sql" {
		t.Fatalf("open: applied %v, %v", tx.applied, err)
	}
	if v, c := tx.state.Version(), tx.state.Compatible(); v != 3 || c != 0 {
		t.Errorf("version %d, compatible %d; want 3, 0", v, c)
	}
	if p := Pending(tx.state, ms, false); len(p) != 0 {
		t.Errorf("pending without contract: %v", p)
	}
	// A program that knows only migration 1 runs on it.
	if err := Check(tx.state, ms[:1]); err != nil {
		t.Errorf("the older program: %v", err)
	}
	// The contract is refused while that program is live, and nothing
	// is applied.
	tx.live = []Process{{Host: "h1", PID: 42, Program: "v1.0.0", Schema: 1}, {Host: "h2", PID: 7, Program: "v1.1.0", Schema: 3}}
	err := Run(ctx, tx, ms, true)
	var old *OlderProcessesError
	if !errors.As(err, &old) || !errors.Is(err, backend.ErrOlderProcesses) || len(old.Processes) != 1 || old.Processes[0].PID != 42 {
		t.Fatalf("contract with an old process live: %v", err)
	}
	for _, want := range []string{"contract migration 0002_b.sql refused", "know only schema version 1 or older", "pid 42 on h1 (satchel v1.0.0, schema version 1", "run satchel migrate --contract again"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q lacks %q", err, want)
		}
	}
	if len(tx.applied) != 1 {
		t.Errorf("applied %v after a refusal", tx.applied)
	}
	// Once it is gone, the contract runs; the older program is then
	// refused.
	tx.live = tx.live[1:]
	if err := Run(ctx, tx, ms, true); err != nil || tx.applied[len(tx.applied)-1] != "0002_b.sql" {
		t.Fatalf("contract: applied %v, %v", tx.applied, err)
	}
	if c := tx.state.Compatible(); c != 2 {
		t.Errorf("compatible %d after the contract, want 2", c)
	}
	if err := Check(tx.state, ms[:1]); !errors.Is(err, backend.ErrSchemaTooNew) {
		t.Errorf("the older program after the contract: %v", err)
	}
	if err := Check(tx.state, ms[:2]); err != nil {
		t.Errorf("the program that brought the contract: %v", err)
	}
}

func TestLoadRefusesBadNames(t *testing.T) {
	for name, fsys := range map[string]fstest.MapFS{
		"gap":          {"m/0001_a.sql": {}, "m/0003_c.sql": {}},
		"no number":    {"m/a.sql": {}},
		"zero":         {"m/0000_a.sql": {}},
		"bad marker":   {"m/0001_a.sql": {Data: []byte("-- satchel:contrat\nDROP TABLE a;")}},
		"both markers": {"m/0001_a.sql": {Data: []byte("-- satchel:contract\n-- satchel:expand\n")}},
	} {
		if _, err := Load(fsys, "m"); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
}

func TestParseKind(t *testing.T) {
	for sql, want := range map[string]Kind{
		"":                                          Expand,
		"CREATE TABLE a (x int);":                   Expand,
		"-- satchel:contract\nDROP TABLE a;":        Contract,
		"\n  --  satchel:contract  \r\nDROP":        Contract,
		"-- about\n--\n-- satchel:contract\n":       Contract,
		"-- satchel:expand\n":                       Expand,
		"CREATE TABLE a ();\n-- satchel:contract\n": Expand, // after the first statement: not read
		"-- satchel contract\n":                     Expand, // not a directive
	} {
		if got, err := ParseKind(sql); err != nil || got != want {
			t.Errorf("ParseKind(%q) = %v, %v; want %v", sql, got, err, want)
		}
	}
}

// FuzzParseKind: ParseKind never panics; Contract only when a leading
// comment line says satchel:contract; blank lines or comments put before
// the SQL do not change the answer.
func FuzzParseKind(f *testing.F) {
	for _, s := range []string{"", "DROP TABLE a;", "-- satchel:contract\nDROP", "-- satchel:expand", "-- satchel:x", "--satchel:contract\r\n", "-- satchel:contract\n-- satchel:expand"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		k, err := ParseKind(sql)
		if err != nil {
			if k != Expand {
				t.Errorf("error %v with kind %v", err, k)
			}
			return
		}
		if k == Contract && !strings.Contains(sql, "satchel:contract") {
			t.Errorf("%q: contract without the marker", sql)
		}
		if k2, err2 := ParseKind("\n-- a comment\n" + sql); k2 != k || err2 != nil {
			t.Errorf("%q: %v, then with a comment before it %v, %v", sql, k, k2, err2)
		}
	})
}

// FuzzParseKindName: a kind read from schema_migrations is one of the two
// names (or "", a row from before kinds), written back as it was read.
func FuzzParseKindName(f *testing.F) {
	for _, s := range []string{"", "expand", "contract", "Contract", "drop"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, err := ParseKindName(s)
		switch {
		case err != nil && (s == "expand" || s == "contract" || s == ""):
			t.Errorf("%q refused: %v", s, err)
		case err == nil && s != "" && k.String() != s:
			t.Errorf("%q read as %v", s, k)
		}
	})
}
