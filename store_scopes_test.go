package satchel_test

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/internal/backendof"
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
	ds := backendof.Store(st).(backend.DiskSizer)
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

// TestExportArchived: an export carries the archive and unarchive entries
// of a thread's log, and an import writes them back as they were: the
// imported thread is archived when the exported one was, and the commits
// after an unarchive entry are imported too.
func TestExportArchived(t *testing.T) {
	for name, open := range exportBackends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			src := open(t)
			ws, err := src.Workspace(ctx, "s", "main")
			must(t, err)
			must(t, ws.Write(ctx, "a", "1"))
			_, err = src.ArchiveThread(ctx, "s", "main")
			must(t, err)
			_, err = src.UnarchiveThread(ctx, "s", "main")
			must(t, err)
			must(t, ws.Write(ctx, "b", "2"))
			_, err = src.ArchiveThread(ctx, "s", "main")
			must(t, err)
			var buf bytes.Buffer
			if _, err := src.Export(ctx, &buf, satchel.ExportOptions{}); err != nil {
				t.Fatal(err)
			}
			dst := open(t)
			if _, err := dst.Import(ctx, bytes.NewReader(buf.Bytes()), int64(buf.Len()), satchel.ImportOptions{}); err != nil {
				t.Fatalf("import: %v", err)
			}
			iw, err := dst.Workspace(ctx, "s", "main")
			must(t, err)
			h, err := iw.History(ctx, 0, 0)
			must(t, err)
			var ops []string
			for _, c := range h {
				ops = append(ops, c.Op)
			}
			if got := strings.Join(ops, ","); got != "archive,write,unarchive,archive,write" {
				t.Errorf("imported log %s", got)
			}
			if err := iw.Write(ctx, "c", "3"); !errors.Is(err, satchel.ErrArchived) {
				t.Errorf("a write to the imported archived thread: %v", err)
			}
		})
	}
}
