package mcpserver

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkReadFile measures one read_file call through the SDK's client
// and server over an in-memory transport.
func BenchmarkReadFile(b *testing.B) {
	c, _ := newClient(b, Config{})
	c.ok("write_file", map[string]any{"path": "a.md", "content": "one\ntwo\nthree\n"})
	params := &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "a.md", "start_line": 2}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		r, err := c.cs.CallTool(ctx, params)
		if err != nil || r.IsError {
			b.Fatal(err, r)
		}
	}
}
