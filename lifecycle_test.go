package satchel_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/backend"
)

// TestPurgeGivesSpaceBack: a purge of a SQLite store gives the scope's
// pages back to the file system (incremental vacuum), so the file shrinks
// by about what the scope held, and the storage check is clean.
func TestPurgeGivesSpaceBack(t *testing.T) {
	ctx := t.Context()
	st, err := satchel.Open(ctx, filepath.Join(t.TempDir(), "s.db"))
	must(t, err)
	defer st.Close()
	ws, err := st.Workspace(ctx, "big", "main")
	must(t, err)
	for i := range 8 {
		must(t, ws.Write(ctx, "f"+strings.Repeat("x", i), strings.Repeat(string(rune('a'+i)), 256<<10)))
	}
	small, err := st.Workspace(ctx, "small", "main")
	must(t, err)
	must(t, small.Write(ctx, "a", "kept"))
	ds := st.Backend().(backend.DiskSizer)
	before, err := ds.DiskSize(ctx)
	must(t, err)
	if _, err := st.Purge(ctx, "big"); err != nil {
		t.Fatal(err)
	}
	after, err := ds.DiskSize(ctx)
	must(t, err)
	// 2 MiB of content went; the file keeps its schema and the other scope.
	if before-after < 1<<20 {
		t.Errorf("the file was %d bytes before the purge, %d after", before, after)
	}
	chk, err := st.Check(ctx, satchel.InScope("small"))
	must(t, err)
	if len(chk.Faults) != 0 || chk.Threads != 1 {
		t.Errorf("check after purge: %+v", chk)
	}
}
