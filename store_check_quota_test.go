package satchel_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/satchel-dev/satchel"
)

// TestCheckQuotaCounter: a quota counter that disagrees with what the
// scope stores is a fault of the storage check.
func TestCheckQuotaCounter(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "q.db")
	st, err := satchel.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	ws, _ := st.Workspace(ctx, "acme", "main")
	if err := ws.Write(ctx, "a.md", "a"); err != nil {
		t.Fatal(err)
	}
	if err := st.SetQuota(ctx, "acme", satchel.Quota{Files: 10}); err != nil {
		t.Fatal(err)
	}
	rep, err := st.Check(ctx)
	if err != nil || len(rep.Faults) != 0 {
		t.Fatalf("check before: %v, %v", rep.Faults, err)
	}
	st.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("UPDATE scope_quotas SET files = files + 2"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	st, err = satchel.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rep, err = st.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := satchel.Fault{Scope: "acme", Object: "quota usage", Problem: "the files counter is 3, storage holds 1"}
	if len(rep.Faults) != 1 || rep.Faults[0] != want {
		t.Errorf("faults %v, want %v", rep.Faults, want)
	}
}
