package mcpserver

import (
	"context"
	"testing"

	"github.com/satchel-dev/satchel"
)

// TestQuotaRefusalIsAToolError: a write over its scope's quota is a tool
// error whose text is the refusal, and nothing is written.
func TestQuotaRefusalIsAToolError(t *testing.T) {
	st := newStore(t)
	if err := st.SetQuota(context.Background(), "acme", satchel.Quota{Files: 1}); err != nil {
		t.Fatal(err)
	}
	c, _ := newClient(t, Config{Store: st, Scope: "acme"})
	c.ok("write_file", map[string]any{"path": "a.md", "content": "x"})
	c.refused("write_file", map[string]any{"path": "b.md", "content": "y"},
		"quota exceeded: scope acme would hold 2 files, over its quota of 1")
	q, err := st.Quota(context.Background(), "acme")
	if err != nil || q.Used.Files != 1 {
		t.Errorf("usage after the refusal: %+v, %v", q.Used, err)
	}
}
