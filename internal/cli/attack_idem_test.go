package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// A key claimed on thread t3 used to make main's --idempotency-key write
// fail ("already used with different arguments").
func TestAttackIdempotencyKeyOtherThread(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	mainOK(t, "", "--db", db, "--thread", "t3", "fs", "write", "squat.md", "t3", "--idempotency-key", "K9")
	mainOK(t, "", "--db", db, "fs", "write", "notes.md", "main", "--idempotency-key", "K9")
	if got := mainOK(t, "", "--db", db, "fs", "read", "notes.md"); got != "main" {
		t.Fatalf("main's notes.md: %q", got)
	}
	code, _, errs := runMain(t, "", "--db", db, "fs", "write", "notes.md", "other", "--idempotency-key", "K9")
	if code != 1 || !strings.Contains(errs, "idempotency key K9 was already used with different arguments") {
		t.Fatalf("main, the same key with other arguments: exit %d, %q", code, errs)
	}
}
