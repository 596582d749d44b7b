//go:build unix

package cli

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A FIFO in stores/ used to block satchel check forever: it is skipped,
// and check says which entry it skipped.
func TestAttackCheckSkipsFIFO(t *testing.T) {
	h := newHarness(t)
	dir := seedProject(t)
	if err := syscall.Mkfifo(filepath.Join(dir, "stores", "fifo.json"), 0o600); err != nil {
		t.Skipf("cannot make a FIFO: %v", err)
	}
	r := h.run("check", "--dir", dir)
	if r.Code != 0 || r.Err != "stores/fifo.json: skipped: a FIFO, not a regular file\n" || !strings.HasPrefix(r.Out, "ok: ") {
		t.Fatalf("check with a FIFO: %+v", r)
	}
}
