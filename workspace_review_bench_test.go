package satchel_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/satchel-dev/satchel"
)

// BenchmarkReview reads and writes 1,000 files on SQLite through a plain
// workspace and through one under review (ForReview, a review already
// open): what the routing costs a call (it reads the review thread's head
// to learn of a decision).
func BenchmarkReview(b *testing.B) {
	ctx := context.Background()
	written := 0
	for _, side := range []string{"plain", "review"} {
		st, err := satchel.Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { st.Close() })
		base, _ := st.Workspace(ctx, "default", "main")
		for i := 0; i < 1000; i++ {
			if err := base.Write(ctx, fmt.Sprintf("notes/%d.md", i), "a line\n"); err != nil {
				b.Fatal(err)
			}
		}
		var opts []satchel.WorkspaceOption
		if side == "review" {
			opts = append(opts, satchel.ForReview("bench"))
		}
		ws, _ := st.Workspace(ctx, "default", "main", opts...)
		if err := ws.Write(ctx, "open.md", "x\n"); err != nil { // opens the review
			b.Fatal(err)
		}
		b.Run("read/"+side, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := ws.Read(ctx, fmt.Sprintf("notes/%d.md", i%1000)); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("write/"+side, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				written++
				if err := ws.Write(ctx, fmt.Sprintf("new/%d.md", written), "x\n"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
