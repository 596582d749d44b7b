package satchel_test

import (
	"testing"

	"github.com/satchel-dev/satchel"
)

// TestMergeExportImport: a merge commit keeps its second parent through
// export and import, so the imported threads merge from it.
func TestMergeExportImport(t *testing.T) {
	ctx := t.Context()
	backends := exportBackends(t)
	for _, name := range []string{"memory", "sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			src := backends[name](t)
			ws, _ := src.Workspace(ctx, "default", "main")
			must(t, ws.Write(ctx, "a.md", "a\nb\nc\n"))
			fk, err := ws.Fork(ctx, "", "side")
			must(t, err)
			must(t, fk.Write(ctx, "a.md", "a\nB\nc\n"))
			_, err = ws.Merge(ctx, "side")
			must(t, err)
			must(t, fk.Write(ctx, "b.md", "b\n"))

			dst := backends["memory"](t)
			if _, err := importBytes(t, dst, export(t, src, satchel.ExportOptions{}), satchel.ImportOptions{}); err != nil {
				t.Fatal(err)
			}
			iw, _ := dst.Workspace(ctx, "default", "main")
			h, err := iw.History(ctx, 0, 1)
			must(t, err)
			if len(h) != 1 || h[0].Op != "merge" || h[0].Summary != "merged side@2" || h[0].Parent == nil || *h[0].Parent != (satchel.CommitRef{Thread: "side", Seq: 2}) {
				t.Fatalf("imported head %+v, want the merge of side@2", h)
			}
			r, err := iw.Merge(ctx, "side")
			must(t, err)
			if r.Base != (satchel.CommitRef{Thread: "side", Seq: 2}) || len(r.Paths) != 1 || r.Paths[0] != "b.md" {
				t.Errorf("merge after import: base %v, paths %v; want side@2, [b.md]", r.Base, r.Paths)
			}
		})
	}
}
