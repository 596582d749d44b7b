package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/satchel-dev/satchel"
)

// Collections supplies the generated collection tools of DESIGN §3: for
// each agent, the tools of the stores it is granted (read: get, query,
// list; rw: also set and, for deletable stores, remove; a shared store
// never set or remove), and their execution.
//
// The server lists and serves exactly what Tools returns for the
// session's agent: a tool it does not return is invisible and refused as
// unknown. Call must still check access itself (it is the authority, and
// refuses a write to a shared store with ErrReadOnly, `store "x" is shared
// (read-only): writes are not allowed`); it receives the caller's
// identity, whose scope is the only scope it may touch, and the raw
// arguments, which it validates, reporting every violation at once. Its
// result is returned as the structured content and, as JSON, as the text;
// its errors become tool errors with their message.
type Collections interface {
	Tools(agent string) ([]Tool, error)
	Call(ctx context.Context, id Identity, tool string, args json.RawMessage) (any, error)
}

// Tool describes one collection tool.
type Tool struct {
	// Name is store__<store>__<op>; the server's tool prefix does not
	// apply to it.
	Name        string
	Description string
	// Title is the tool's human-readable name (optional).
	Title string
	// InputSchema and OutputSchema are JSON Schemas (draft 2020-12) of the
	// arguments and of the structured result; InputSchema is required.
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	// ReadOnly, Destructive and Idempotent are the MCP annotations.
	ReadOnly, Destructive, Idempotent bool
}

func (t Tool) mcpTool() *mcp.Tool {
	d := t.Destructive
	closed := false
	mt := &mcp.Tool{
		Name:        t.Name,
		Title:       t.Title,
		Description: t.Description,
		InputSchema: t.InputSchema,
		Annotations: &mcp.ToolAnnotations{
			Title:        t.Title,
			ReadOnlyHint: t.ReadOnly, DestructiveHint: &d, IdempotentHint: t.Idempotent, OpenWorldHint: &closed,
		},
	}
	if len(t.InputSchema) == 0 {
		mt.InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	if len(t.OutputSchema) > 0 {
		mt.OutputSchema = t.OutputSchema
	}
	return mt
}

// collectionHandler runs a collection tool through Collections.Call, with
// the same timeout, logs, metrics, spill and envelope as the file tools.
func (s *Server) collectionHandler(t Tool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return s.handle(ctx, req, t.Name, t.Name, func(ctx context.Context, c *call) (*outcome, error) {
			if id := c.identity(); !t.ReadOnly && (s.cfg.ReadOnly || id.ReadOnly) {
				// serve --read-only, or a --read-only token: documents are
				// read, not changed, as files are.
				return nil, &satchel.Error{Kind: satchel.ErrReadOnly, Msg: fmt.Sprintf("%s changes documents: agent %s may only read here (--read-only)", t.Name, id.Agent)}
			}
			v, err := s.cfg.Collections.Call(ctx, c.identity(), t.Name, req.Params.Arguments)
			if err != nil {
				return nil, err
			}
			b, err := marshal(v)
			if err != nil {
				return nil, err
			}
			return &outcome{text: string(b), structured: json.RawMessage(b), untrusted: true, json: true}, nil
		})
	}
}
