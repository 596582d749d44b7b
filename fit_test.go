package satchel_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/backend/memory"
)

// Fit counts a file written over another, or counted twice, once, and
// refuses past maxBytes and maxFiles as a commit would, without counting
// what it refused.
func TestFit(t *testing.T) {
	ctx := context.Background()
	s := satchel.New(memory.New())
	must(t, s.SetLimits(ctx, "acme", "main", satchel.Limits{MaxBytes: 100, MaxFiles: 3, MaxFileBytes: 40}))
	ws, err := s.Workspace(ctx, "acme", "main")
	must(t, err)
	must(t, ws.Write(ctx, "a", strings.Repeat("x", 30))) // 3 + 32 = 35 bytes
	f, err := ws.Fit(ctx)
	must(t, err)
	// Replacing a by 30 bytes again fits, any number of times.
	for range 3 {
		must(t, f.Add(ctx, "a", 30, satchel.EntryBytes("a", strings.Repeat("y", 30))))
	}
	must(t, f.AddAtLeast(ctx, "b", 30)) // 35 + 35
	err = f.Add(ctx, "c", 30, satchel.EntryBytes("c", strings.Repeat("z", 30)))
	if !errors.Is(err, satchel.ErrLimitExceeded) || err.Error() != "limit exceeded: the workspace would hold 105 B, over maxBytes 100 B" {
		t.Fatalf("a third file of 35 bytes: %v", err)
	}
	err = f.AddAtLeast(ctx, "c", 30)
	if err == nil || !strings.Contains(err.Error(), "at least 105 B") {
		t.Fatalf("a third file counted from its size: %v", err)
	}
	must(t, f.Add(ctx, "c", 1, satchel.EntryBytes("c", "\x00"))) // 3 + 8
	err = f.Add(ctx, "d", 0, satchel.EntryBytes("d", ""))
	if !errors.Is(err, satchel.ErrLimitExceeded) || !strings.Contains(err.Error(), "4 files, over maxFiles 3") {
		t.Fatalf("a fourth file: %v", err)
	}
	if err := f.Add(ctx, "e", 41, 100); err == nil || !strings.Contains(err.Error(), "over the per-file limit of 40 B") {
		t.Fatalf("a file over the per-file limit: %v", err)
	}
}
