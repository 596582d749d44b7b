package gitrepo_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/gitrepo"
)

// TestSameHashesOnEveryBackend moves one history (with a fork, a merge
// and a checkpoint) through satchel export and import to every backend:
// each serves the same git hashes.
func TestSameHashesOnEveryBackend(t *testing.T) {
	ctx := t.Context()
	src, err := satchel.Open(ctx, "memory:")
	must(t, err)
	defer src.Close()
	a := satchel.Actor{Agent: "writer", Via: "mcp:write_file"}
	main, err := src.Workspace(ctx, "s", "main", satchel.WorkspaceActor(a))
	must(t, err)
	must(t, main.Write(ctx, "x/y.txt", "1\n"))
	must(t, main.Write(ctx, "z.txt", "2\n"))
	_, err = main.Checkpoint(ctx, "cp")
	must(t, err)
	fork, err := main.Fork(ctx, "head", "f")
	must(t, err)
	must(t, fork.Write(ctx, "x/w.txt", "3\n"))
	must(t, main.Delete(ctx, "z.txt"))
	_, err = main.Merge(ctx, "f")
	must(t, err)
	var archive bytes.Buffer
	_, err = src.Export(ctx, &archive, satchel.ExportOptions{})
	must(t, err)

	hashes := func(st *satchel.Store) map[string]string {
		res, err := gitrepo.Export(ctx, st, "s", "", filepath.Join(t.TempDir(), "r"))
		must(t, err)
		return res.Refs
	}
	want := hashes(src)
	if len(want) != 3 {
		t.Fatalf("refs %v, want main, f and the tag main/cp", want)
	}
	for name, open := range backends() {
		t.Run(name, func(t *testing.T) {
			st := open(t)
			_, err := st.Import(ctx, bytes.NewReader(archive.Bytes()), int64(archive.Len()), satchel.ImportOptions{})
			must(t, err)
			if diff := cmp.Diff(want, hashes(st)); diff != "" {
				t.Fatalf("hashes differ from the source's (-want +got):\n%s", diff)
			}
		})
	}
}
