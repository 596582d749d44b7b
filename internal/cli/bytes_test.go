package cli

import (
	"path/filepath"
	"testing"
)

// TestCLIBytesExact: every byte value, NUL and invalid UTF-8 included,
// goes in through fs write (standard input) and comes out of fs read, and
// of fs export, exactly.
func TestCLIBytesExact(t *testing.T) {
	all := make([]byte, 0, 512)
	for i := range 256 {
		all = append(all, byte(i))
	}
	all = append(all, "\r\n\xc3(\xed\xa0\x80 trailing"...)
	h := newHarness(t)
	h.okIn(string(all), "fs", "write", "all.bin")
	if got := h.ok("fs", "read", "all.bin"); got != string(all) {
		t.Fatalf("fs read gave %d bytes, not the %d written", len(got), len(all))
	}
	dst := filepath.Join(t.TempDir(), "out")
	h.ok("fs", "export", dst)
	h2 := newHarness(t)
	h2.ok("fs", "import", dst)
	if got := h2.ok("fs", "read", "all.bin"); got != string(all) {
		t.Fatalf("after export and import: %d bytes, not the %d written", len(got), len(all))
	}
}
