package cli

import (
	"testing"
)

// TestLimits: limits set bounds a scope, or one thread of it, without Go;
// limits show says where each bound comes from; a write past one is
// refused with sizes written as quotas write them.
func TestLimits(t *testing.T) {
	h := newHarness(t)
	equal(t, "defaults", h.ok("limits", "show", "--scope", "acme"),
		"file-bytes 64.00 MiB (default)\nbytes 1.00 GiB (default)\nfiles 1,000,000 (default)\n")
	h.ok("limits", "set", "--scope", "acme", "--file-bytes", "8", "--files", "3")
	equal(t, "thread", h.ok("limits", "set", "--scope", "acme", "--thread", "t", "--files", "2", "--bytes", "2GiB"),
		"file-bytes 8 B (scope acme)\nbytes 2.00 GiB (thread t)\nfiles 2 (thread t)\n")
	equal(t, "json", h.ok("limits", "show", "--scope", "acme", "--json"),
		`{"scope":"acme","limits":{"max_bytes":1073741824,"max_files":3,"max_file_bytes":8},"scope_limits":{"max_files":3,"max_file_bytes":8}}`+"\n")
	h.refused("limit exceeded: a.md would be 9 B, over the per-file limit of 8 B", "fs", "write", "a.md", "123456789", "--scope", "acme")
	h.ok("fs", "write", "a.md", "1", "--scope", "acme", "--thread", "t")
	h.ok("fs", "write", "b.md", "1", "--scope", "acme", "--thread", "t")
	h.refused("limit exceeded: the workspace would hold 3 files, over maxFiles 2", "fs", "write", "c.md", "1", "--scope", "acme", "--thread", "t")
	h.ok("limits", "set", "--scope", "acme", "--thread", "t", "--files", "none")
	h.ok("fs", "write", "c.md", "1", "--scope", "acme", "--thread", "t")
	h.usage("limits set needs at least one of --file-bytes, --bytes, --files", "limits", "set", "--scope", "acme")
	h.usage(`--files: "lots" is not a positive count or none`, "limits", "set", "--files", "lots")
}
