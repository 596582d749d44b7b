package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/satchel-dev/satchel"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CustomTool is a tool a program adds to the server beside the file and
// collection tools (satchel serve --scripts adds run_script and
// check_run this way). Every session sees it; the server's tool prefix
// does not apply to its name.
type CustomTool struct {
	Tool
	// Call runs the tool for the caller id with the raw arguments, which it
	// validates. Its text is the result's text content; structured, when
	// not nil, the structured content. An error becomes a tool error with
	// its message. ctx carries the call timeout.
	Call func(ctx context.Context, id Identity, args json.RawMessage) (text string, structured any, err error)
}

// customHandler runs a custom tool with the same timeout, logs, metrics
// and spill as the file tools.
func (s *Server) customHandler(t CustomTool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return s.handle(ctx, req, t.Name, t.Name, func(ctx context.Context, c *call) (*outcome, error) {
			ctx = context.WithValue(ctx, sessionCtxKey{}, c.se.ctx)
			ctx = context.WithValue(ctx, callKey{}, c)
			id := c.se.identity()
			id.Client, id.ClientVersion = c.client, c.clientVersion
			text, structured, err := t.Call(ctx, id, req.Params.Arguments)
			if err != nil {
				return nil, err
			}
			return &outcome{text: text, structured: structured, untrusted: true}, nil
		})
	}
}

type sessionCtxKey struct{}

type callKey struct{}

// CallWorkspace returns, within a custom tool's call, a workspace of the
// caller's thread held to what every tool of the caller is held to: its
// thread binding, its review (the session's) and its file rules, acting
// as the caller through the tool. It keeps no read ledger: such a tool is
// a caller of its own, as a CLI command is. A review's notices reach the
// call's result.
func CallWorkspace(ctx context.Context) (*satchel.Workspace, error) {
	c, _ := ctx.Value(callKey{}).(*call)
	if c == nil {
		return nil, errors.New("mcpserver: CallWorkspace outside a custom tool's call")
	}
	id := c.se.identity()
	ws, err := c.s.cfg.Store.Workspace(ctx, id.Scope, id.Thread, c.s.cfg.workspaceOptions(id, c.se.reviewKey(), false)...)
	if err != nil {
		return nil, err
	}
	h := ws.ForActor(c.actor())
	if h.UnderReview() {
		c.handles = append(c.handles, h)
	}
	return h, nil
}

// SessionContext returns, from the context of a custom tool's call, a
// context that ends when the caller's session ends, with the cause "its
// session ended" (satchel serve --scripts stops a session's runs so); nil
// when the call has no session.
func SessionContext(ctx context.Context) context.Context {
	se, _ := ctx.Value(sessionCtxKey{}).(context.Context)
	return se
}
