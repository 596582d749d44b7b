package satcheltest

import (
	"context"
	"errors"
	"testing"

	"github.com/satchel-dev/satchel"
)

// gitOrigin: a batch knows the head it builds on (Batch.Base), so that a
// batch refusing any other commits nothing, even after a lost race; a
// commit records the git commit it came from (Batch.SetGit), which the
// history reads back with its summary (what git access relies on).
func (s *suite) gitOrigin(t *testing.T, _ *satchel.Store, ws *satchel.Workspace) {
	write(t, ws, "a.md", "a\n", "b.md", "b\n")
	errMoved := errors.New("moved")
	var bases []int64
	must(t, "batch on head 2", ws.Batch(bg, func(ctx context.Context, b *satchel.Batch) error {
		bases = append(bases, b.Base())
		if b.Base() != 2 {
			return errMoved
		}
		if err := b.Write(ctx, "c.md", "c\n"); err != nil {
			return err
		}
		b.SetGit(satchel.GitOrigin{Hash: "0123456789abcdef0123456789abcdef01234567", Author: "Ada <ada@example.com>", Object: "author Ada <ada@example.com> 1 +0000\ncommitter Ada <ada@example.com> 1 +0000\n\nAdd c\n"}, "Add c")
		return nil
	}))
	if bases[len(bases)-1] != 2 {
		t.Fatalf("Batch.Base on a thread of 2 commits: %v", bases)
	}
	err := ws.Batch(bg, func(ctx context.Context, b *satchel.Batch) error {
		if b.Base() != 2 {
			return errMoved
		}
		return b.Write(ctx, "d.md", "d\n")
	})
	if !errors.Is(err, errMoved) {
		t.Fatalf("a batch that wants head 2 on head 3: %v", err)
	}
	if ok, _ := ws.Exists(bg, "d.md"); ok {
		t.Fatal("a refused batch wrote d.md")
	}
	hist, err := ws.History(bg, 0, 0)
	must(t, "history", err)
	c := hist[0]
	if c.Seq != 3 || c.Summary != "Add c" || c.Git == nil || c.Git.Hash != "0123456789abcdef0123456789abcdef01234567" || c.Git.Author != "Ada <ada@example.com>" || c.Git.Object == "" {
		t.Fatalf("the commit with a git origin: %+v", c)
	}
	if hist[1].Git != nil {
		t.Fatalf("a commit without a git origin has one: %+v", hist[1])
	}
}
