package satchel_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/bench"
)

// BenchmarkW1Rules measures W1's operations on one workspace of W1's
// files (a memory store) with no file rules and with W1's ten rules
// (bench.W1Rules, three of them hiding: reads go through the filtered
// view), side by side: go test -bench W1Rules -count 6, then compare each
// pair of lines.
func BenchmarkW1Rules(b *testing.B) {
	const n = 2000
	ctx := context.Background()
	st, err := satchel.Open(ctx, "memory:")
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	setup, err := st.Workspace(ctx, "bench", "w1")
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < n; i += 500 {
		err := setup.Batch(ctx, func(ctx context.Context, bt *satchel.Batch) error {
			for j := i; j < i+500; j++ {
				if err := bt.Write(ctx, bench.W1Path(j), bench.W1Content(1, j)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	ops := []struct {
		name string
		fn   func(ws *satchel.Workspace, i int) error
	}{
		{"read", func(ws *satchel.Workspace, i int) error { _, err := ws.Read(ctx, bench.W1Path(i%n)); return err }},
		{"write", func(ws *satchel.Workspace, i int) error {
			return ws.Write(ctx, bench.W1Path(i%n), "v"+strconv.Itoa(i)+"\n")
		}},
		{"exists", func(ws *satchel.Workspace, i int) error { _, err := ws.Exists(ctx, bench.W1Path(i%n)); return err }},
		{"glob-all", func(ws *satchel.Workspace, i int) error { _, err := ws.Glob(ctx, "notes/**"); return err }},
		{"glob-dir", func(ws *satchel.Workspace, i int) error {
			_, err := ws.Glob(ctx, "notes/d"+strconv.Itoa(10+i%90)+"/*.md")
			return err
		}},
		{"grep", func(ws *satchel.Workspace, i int) error {
			_, err := ws.Grep(ctx, "needle-"+strconv.Itoa(i%100), "", satchel.GrepOptions{})
			return err
		}},
	}
	for _, op := range ops {
		for _, rules := range []bool{false, true} {
			name := op.name + "/none"
			var opts []satchel.WorkspaceOption
			if rules {
				name = op.name + "/ten-rules"
				opts = append(opts, satchel.WithFileRules(bench.W1Rules()))
			}
			b.Run(name, func(b *testing.B) {
				ws, err := st.Workspace(ctx, "bench", "w1", opts...)
				if err != nil {
					b.Fatal(err)
				}
				for i := 0; b.Loop(); i++ {
					if err := op.fn(ws, i); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
