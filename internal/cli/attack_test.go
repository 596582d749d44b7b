package cli

import (
	"context"
	"strings"
	"testing"
)

// A grep that reaches its timeout inside one long line prints the
// matches found so far, says "grep stopped" and exits non-zero.
func TestAttackGrepStopped(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	ws, err := h.store.Workspace(ctx, "default", "main")
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.Write(ctx, "a.txt", "b\n"); err != nil {
		t.Fatal(err)
	}
	if err := ws.Write(ctx, "big.txt", strings.Repeat("x", 1<<20)); err != nil {
		t.Fatal(err)
	}
	r := h.run("fs", "grep", `.{1000}.{1000}.{1000}b|^b$`, "--timeout", "50ms")
	if r.Code == 0 || r.Out != "a.txt:1:b\n" || !strings.HasPrefix(r.Err, "grep stopped after 50ms") {
		t.Fatalf("grep past its timeout: %+v", r)
	}
}
