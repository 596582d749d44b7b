package mcpserver_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/mcpserver"
)

// A server over a memory store, driven by the SDK's client through an
// in-memory transport (a client would use stdio or HTTP).
func ExampleServer_Run() {
	ctx := context.Background()
	st, _ := satchel.Open(ctx, "memory:")
	defer st.Close()
	s, err := mcpserver.New(mcpserver.Config{
		Store: st, Scope: "acme", Agent: "research",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		panic(err)
	}
	serverSide, clientSide := mcp.NewInMemoryTransports()
	go s.Run(ctx, serverSide)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "example"}, nil).Connect(ctx, clientSide, nil)
	if err != nil {
		panic(err)
	}
	defer cs.Close()

	call := func(tool string, args map[string]any) {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			panic(err)
		}
		for _, c := range r.Content {
			fmt.Printf("%s (error %v): %s\n", tool, r.IsError, c.(*mcp.TextContent).Text)
		}
	}
	call("write_file", map[string]any{"path": "notes/plan.md", "content": "# Plan\n1. read\n2. think\n"})
	call("read_file", map[string]any{"path": "notes/plan.md", "start_line": 2})
	call("edit_file", map[string]any{"path": "notes/plan.md", "old_text": "think", "new_text": "think hard"})
	call("edit_file", map[string]any{"path": "notes/plan.md", "old_text": "", "new_text": "x"})
	call("glob", map[string]any{"pattern": "**/*.md"})
	// Output:
	// write_file (error false): wrote 24 bytes to notes/plan.md
	// read_file (error false): 2| 1. read
	// 3| 2. think
	// edit_file (error false): replaced 1 occurrence in notes/plan.md
	// edit_file (error true): anchor must not be empty
	// glob (error false): notes/plan.md
}
