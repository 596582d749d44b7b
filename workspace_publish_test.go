package satchel_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/sqlitetest"
)

// TestPublishTo: a fork's head becomes its parent's head in one commit
// when the parent has not moved; when it has, nothing is published, the
// error is a conflict, and the fork keeps its work.
func TestPublishTo(t *testing.T) {
	for _, dsn := range []string{"memory:", "sqlite"} {
		t.Run(dsn, func(t *testing.T) {
			ctx := context.Background()
			if dsn == "sqlite" {
				dsn = sqlitetest.NewFileAt(t, filepath.Join(t.TempDir(), "s.db"))
			}
			st, err := satchel.Open(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			main, _ := st.Workspace(ctx, "acme", "main")
			if err := main.Write(ctx, "a.md", "one\n"); err != nil {
				t.Fatal(err)
			}
			base, _ := main.Head(ctx)
			fork, err := main.Fork(ctx, "", "run-1")
			if err != nil {
				t.Fatal(err)
			}
			_ = fork.Write(ctx, "a.md", "two\n")
			_ = fork.Write(ctx, "b.md", "new\n")
			c, err := fork.PublishTo(ctx, main, base.Seq)
			if err != nil {
				t.Fatal(err)
			}
			if c.Seq != base.Seq+1 || c.Op != "publish" {
				t.Errorf("published commit %d %q, want %d publish", c.Seq, c.Op, base.Seq+1)
			}
			if got, _ := main.Read(ctx, "a.md"); got != "two\n" {
				t.Errorf("a.md after publish: %q", got)
			}
			if ok, _ := main.Exists(ctx, "b.md"); !ok {
				t.Error("b.md not published")
			}

			// The parent moves: a second publish from the old base fails.
			fork2, _ := main.Fork(ctx, "", "run-2")
			moved, _ := main.Head(ctx)
			_ = fork2.Write(ctx, "c.md", "mine\n")
			_ = main.Write(ctx, "a.md", "someone else\n")
			_, err = fork2.PublishTo(ctx, main, moved.Seq)
			if !errors.Is(err, satchel.ErrConflict) {
				t.Fatalf("publish onto a moved thread: %v, want a conflict", err)
			}
			if ok, _ := main.Exists(ctx, "c.md"); ok {
				t.Error("a refused publish changed the thread")
			}
			if got, _ := fork2.Read(ctx, "c.md"); got != "mine\n" {
				t.Errorf("the fork lost its work: %q", got)
			}

			// Onto an empty thread, base 0.
			empty, _ := st.Workspace(ctx, "acme", "fresh")
			if _, err := fork2.PublishTo(ctx, empty, 0); err != nil {
				t.Fatal(err)
			}
			if got, _ := empty.Read(ctx, "c.md"); got != "mine\n" {
				t.Errorf("fresh thread after publish: %q", got)
			}
			if _, err := fork2.PublishTo(ctx, empty, 0); !errors.Is(err, satchel.ErrConflict) {
				t.Errorf("second publish at base 0: %v, want a conflict", err)
			}
		})
	}
}
