package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestIdempotencyKeyFlag retries a keyed append: the text lands once, and
// the same key with other text is refused with the contract's message.
func TestIdempotencyKeyFlag(t *testing.T) {
	h := newHarness(t)
	h.ok("fs", "append", "log.md", "one\n", "--idempotency-key", "k1")
	h.ok("fs", "append", "log.md", "one\n", "--idempotency-key", "k1")
	equal(t, "log.md", h.ok("fs", "read", "log.md"), "one\n")
	h.refused("idempotency key k1 was already used with different arguments", "fs", "append", "log.md", "two\n", "--idempotency-key", "k1")
	h.ok("checkpoint", "v1", "--idempotency-key", "k2")
	h.ok("checkpoint", "v1", "--idempotency-key", "k2")
}

// TestAuditCommand lists the changes with their tool and key, as lines
// and as JSON, and never the content written.
func TestAuditCommand(t *testing.T) {
	h := newHarness(t)
	h.ok("fs", "write", "a.md", "SECRET-CONTENT-41\n", "--idempotency-key", "w1")
	h.ok("--scope", "other", "fs", "append", "b.md", "SECRET-CONTENT-41\n")
	out := h.ok("audit")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("audit printed %d lines, want 2:\n%s", len(lines), out)
	}
	f := strings.Split(lines[1], "\t")
	if len(f) != 9 || f[1] != "default" || f[2] != "main@1" || f[3] != "-" || f[5] != "cli:fs write" || f[7] != "w1" || f[8] != "write a.md" {
		t.Errorf("audit line %q", lines[1])
	}
	if strings.Contains(out, "SECRET-CONTENT") {
		t.Errorf("audit printed file content:\n%s", out)
	}
	var page struct {
		Entries []struct {
			Scope string `json:"scope"`
			Via   string `json:"via"`
		} `json:"entries"`
	}
	js := h.ok("audit", "--scope", "other", "--json")
	if err := json.Unmarshal([]byte(js), &page); err != nil || len(page.Entries) != 1 || page.Entries[0].Via != "cli:fs append" {
		t.Errorf("audit --scope other --json: %s (%v)", js, err)
	}
	equal(t, "audit --tool", strings.Count(h.ok("audit", "--tool", "fs write"), "\n"), 1)
	equal(t, "audit --since later", h.ok("audit", "--since", "2999-01-01T00:00:00Z"), "")
	h.refused(`invalid --since "yesterday": give an RFC 3339 time (2026-12-01T00:00:00Z) or a duration ago (24h)`, "audit", "--since", "yesterday")
}
