package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/spill"
)

// fileHandler is the raw handler of a file tool: it decodes and validates
// the arguments itself (see args), runs the tool within the call timeout,
// and renders the outcome (spill, envelope, notices, structured content).
func (s *Server) fileHandler(t fileTool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return s.handle(ctx, req, t.tool.Name, t.base, func(ctx context.Context, c *call) (*outcome, error) {
			c.a = parseArgs(t.tool.Name, req.Params.Arguments, t.props)
			if t.tool.Annotations != nil && t.tool.Annotations.ReadOnlyHint && t.base != "list_threads" && t.base != "switch_thread" {
				if err := c.se.checkNamed(ctx, s.cfg.Store); err != nil {
					return nil, err
				}
			}
			return t.run(ctx, c)
		})
	}
}

// handle runs one tool call: timeout, request id, logs, metrics and
// rendering are the same for every tool. name is the tool's name as
// called; base is its name without the server's prefix (the same for
// collection tools), which labels metrics and the audit trail ("mcp:"+base).
func (s *Server) handle(ctx context.Context, req *mcp.CallToolRequest, name, base string, run func(context.Context, *call) (*outcome, error)) (*mcp.CallToolResult, error) {
	start := time.Now()
	se := sessionFrom(ctx)
	if se == nil {
		return nil, errors.New("mcpserver: tool call outside a session")
	}
	rid := ""
	if req.Extra != nil && req.Extra.Header != nil {
		rid = req.Extra.Header.Get(RequestIDHeader) // set by the HTTP layer
	}
	if rid == "" {
		rid = newRequestID()
	}
	cctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout)
	defer cancel()
	c := &call{s: s, se: se, base: base}
	c.client, c.clientVersion = clientInfo(req)
	out, err := run(cctx, c)
	if err != nil && cctx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
		err = &satchel.Error{Kind: satchel.ErrLimitExceeded, Msg: fmt.Sprintf("%s took longer than %s and was stopped", name, s.cfg.CallTimeout)}
	}
	var res *mcp.CallToolResult
	if err != nil {
		res = toolError(err)
		for _, n := range c.notices() {
			res.Content = append(res.Content, &mcp.TextContent{Text: n})
		}
	} else {
		out.notices = append(out.notices, c.stale...)
		out.notices = append(out.notices, c.notices()...)
		res = s.render(ctx, c, name, out)
	}
	d := time.Since(start)
	s.metrics.call(base, d, err != nil)
	if out != nil && out.stored > 0 {
		s.metrics.stored.Add(float64(out.stored))
	}
	level, msg := slog.LevelInfo, "tool call"
	if err != nil {
		msg = "tool call refused"
		var se *satchel.Error
		var ve *satchel.ValidationError
		if !errors.As(err, &se) && !errors.As(err, &ve) && !errors.Is(err, satchel.ErrStale) {
			level = slog.LevelError // not a refusal: a failure
		}
	}
	if s.log.Enabled(ctx, level) {
		id := se.identity()
		// Attrs, not key-value pairs: a line a call, without boxing each value.
		attrs := make([]slog.Attr, 0, 9)
		attrs = append(attrs, slog.String("request_id", rid), slog.String("session", se.label), slog.String("tool", name),
			slog.String("scope", id.Scope), slog.String("agent", id.Agent), slog.String("thread", id.Thread),
			slog.Float64("duration_ms", float64(d.Microseconds())/1000))
		if err != nil {
			attrs = append(attrs, slog.String("error", err.Error()), slog.String("kind", errorKind(err)))
		}
		s.log.LogAttrs(ctx, level, msg, attrs...)
	}
	return res, nil
}

// toolError is a tool error whose text is exactly the error's message.
func toolError(err error) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
}

// errorKinds names satchel's kinds of refusal in logs, as the CLI names
// them (internal/cli/errors.go).
var errorKinds = []struct {
	kind error
	name string
}{
	{satchel.ErrInvalidPath, "invalid_path"},
	{satchel.ErrInvalidPattern, "invalid_pattern"},
	{satchel.ErrInvalidRange, "invalid_range"},
	{satchel.ErrInvalidArgument, "invalid_argument"},
	{satchel.ErrNotFound, "not_found"},
	{satchel.ErrExists, "exists"},
	{satchel.ErrIsDirectory, "is_directory"},
	{satchel.ErrNotText, "not_text"},
	{satchel.ErrAnchorNotFound, "anchor_not_found"},
	{satchel.ErrAmbiguousAnchor, "ambiguous_anchor"},
	{satchel.ErrLimitExceeded, "limit_exceeded"},
	{satchel.ErrQuotaExceeded, "quota_exceeded"},
	{satchel.ErrWriteRace, "write_race"},
	{satchel.ErrConflict, "conflict"},
	{satchel.ErrReadOnly, "read_only"},
	{satchel.ErrAccessDenied, "access_denied"},
	{satchel.ErrValidation, "validation"},
	{satchel.ErrArchived, "archived"},
	{satchel.ErrStale, "stale"},
	{satchel.ErrAccess, "file_access"},
	{context.Canceled, "canceled"},
}

func errorKind(err error) string {
	for _, k := range errorKinds {
		if errors.Is(err, k.kind) {
			return k.name
		}
	}
	return "error"
}

// render turns an outcome into the tool's result: the text (spilled to
// the caller's thread when it is over the limit, except read_file's),
// wrapped in the envelope when the server wraps, then the notices, each an
// item of its own, and the structured content. Every result's text is
// wrapped, not only content: listings, history and confirmations carry
// stored names, which anyone who could write a file chose. A server that
// wraps sends no structured content, which would carry the same stored
// text outside the envelope, and its tools declare no output schema
// (decision 0110).
func (s *Server) render(ctx context.Context, c *call, name string, out *outcome) *mcp.CallToolResult {
	wrap := func(t string) string { return t }
	structured := out.structured
	if s.cfg.WrapUntrusted {
		// Content is wrapped; satchel's own words (confirmations, stat,
		// notices) are not. No result carries structured content, which
		// would hold the content outside the envelope.
		// A confirmation that echoes a stored name holding an envelope's
		// tag is wrapped too, so that the tag is escaped.
		if out.untrusted || strings.Contains(out.text, "untrusted_input_") {
			wrap = c.se.run.Untrusted
		}
		structured = nil
	}
	var content []mcp.Content
	if !out.noSpill && len(out.text) > s.cfg.MaxInlineBytes {
		full := out.text
		if out.json {
			full = jsonLines(full)
		}
		r := s.policy(name).Apply(ctx, s.spillBackend(c, name), c.se.label, name, "", full)
		if r.Spilled {
			s.metrics.spills.Inc()
			if r.Head != "" {
				content = append(content, text(wrap(r.Head)))
			}
			content = append(content, text(strings.Trim(r.Notice, "\n")))
			if r.Tail != "" {
				content = append(content, text(wrap(r.Tail)))
			}
			if !s.cfg.WrapUntrusted {
				structured = map[string]any{"spilled": map[string]any{
					"path": string(r.Locator), "bytes": len(full), "omitted_bytes": r.Omitted,
				}}
			}
		}
	}
	if content == nil && out.image != nil {
		content = []mcp.Content{out.image}
	}
	if content == nil {
		content = []mcp.Content{text(wrap(out.text))}
	}
	for _, n := range out.notices {
		content = append(content, text(n))
	}
	return &mcp.CallToolResult{Content: content, StructuredContent: structured}
}

func text(s string) *mcp.TextContent { return &mcp.TextContent{Text: s} }

// policy is the spill policy: results over the limit, never read_file's.
func (s *Server) policy(string) spill.Policy {
	return spill.Policy{
		MaxInlineBytes: s.cfg.MaxInlineBytes,
		ReaderTool:     withPrefix(s.cfg, "read_file"),
		Logger:         s.log,
	}
}

// spillBackend saves spills under spill/ in the spill area of the
// caller's thread (Workspace.SaveSpill: out of the thread's listings,
// searches, history and restores), written as the caller through the tool
// that spilled; the hint names read_file (with the server's prefix), which
// reads them back.
func (s *Server) spillBackend(c *call, name string) spill.Backend {
	write := func(ctx context.Context, path, content string) error {
		ws, err := c.workspace(ctx)
		if err != nil {
			return err
		}
		return ws.SaveSpill(ctx, path, content) // beside the thread, not in it
	}
	read := func(ctx context.Context, path string) (string, error) {
		ws, err := c.workspace(ctx)
		if err != nil {
			return "", err
		}
		return ws.Read(ctx, path)
	}
	b := spill.NewWorkspace(write, read)
	b.Tool = withPrefix(s.cfg, "read_file")
	b.Window = s.cfg.MaxInlineBytes
	b.Keep = satchel.KeepSpills
	return b
}
