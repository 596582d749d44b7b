package satchel_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel"
)

// BenchmarkStaleGuard writes and edits 7 KiB files on the memory backend,
// with the read ledger (TrackReads) and without: what the ledger itself
// costs, with no storage to hide it.
func BenchmarkStaleGuard(b *testing.B) {
	content := strings.Repeat("a line of a note, about seventy bytes long, to make a 7 KiB file.\n", 110) + "MARKER\n"
	for _, side := range []string{"off", "on"} {
		b.Run("write/"+side, func(b *testing.B) {
			ws := benchWorkspace(b, side)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := ws.Write(context.Background(), fmt.Sprintf("notes/%d.md", i), content); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("edit/"+side, func(b *testing.B) {
			ws := benchWorkspace(b, side)
			ctx := context.Background()
			for i := 0; i < b.N; i++ {
				if err := ws.Write(ctx, fmt.Sprintf("notes/%d.md", i), content); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := ws.StrReplace(ctx, fmt.Sprintf("notes/%d.md", i), "MARKER", "EDITED", false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func benchWorkspace(b *testing.B, side string) *satchel.Workspace {
	st, err := satchel.Open(context.Background(), "memory:")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	var opts []satchel.WorkspaceOption
	if side == "on" {
		opts = append(opts, satchel.TrackReads())
	}
	ws, err := st.Workspace(context.Background(), "default", "main", opts...)
	if err != nil {
		b.Fatal(err)
	}
	return ws
}
