package sqlmigrate

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/fstest"
)

// fakeTx records what Run applies.
type fakeTx struct {
	version int
	applied []string
	fail    string
}

func (f *fakeTx) Version(context.Context) (int, error) { return f.version, nil }

func (f *fakeTx) Apply(_ context.Context, m Migration) error {
	if m.Name == f.fail {
		return errors.New("boom")
	}
	f.applied = append(f.applied, m.Name)
	f.version = m.Version
	return nil
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
	if len(ms) != 3 || ms[0].Name != "0001_a.sql" || ms[0].SQL != "A" || ms[2].Version != 3 {
		t.Fatalf("Load: %+v", ms)
	}
	tx := &fakeTx{version: 1}
	if err := Run(context.Background(), tx, ms); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(tx.applied, ","); got != "0002_b.sql,0003_c.sql" {
		t.Errorf("applied %s, want the two the database lacks", got)
	}
	if err := Run(context.Background(), &fakeTx{version: 4}, ms); err == nil || !strings.Contains(err.Error(), "newer than this program's 3: upgrade satchel") {
		t.Errorf("a newer schema: %v", err)
	}
	if err := Run(context.Background(), &fakeTx{fail: "0002_b.sql"}, ms); err == nil || !strings.Contains(err.Error(), "0002_b.sql: boom") {
		t.Errorf("a failing migration: %v", err)
	}
}

func TestLoadRefusesBadNames(t *testing.T) {
	for name, fsys := range map[string]fstest.MapFS{
		"gap":       {"m/0001_a.sql": {}, "m/0003_c.sql": {}},
		"no number": {"m/a.sql": {}},
		"zero":      {"m/0000_a.sql": {}},
	} {
		if _, err := Load(fsys, "m"); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
}
