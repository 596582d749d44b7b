package mcpserver

import (
	"bytes"
	"context"
	stdjson "encoding/json"
	"fmt"
	"github.com/satchel-dev/satchel/internal/jsonquote"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/segmentio/encoding/json"

	"github.com/satchel-dev/satchel"
)

// fastCalls serves a session's plain tools/call requests without the
// SDK's dispatch (decision 0086): satchel's transports (IOTransport and
// the streamable HTTP connection) hand such a call to call, which runs
// the server's middleware and the tool's handler as the SDK would, and
// encode its answer. The SDK decodes a call's params twice through
// decoders that each allocate a fresh 32 KiB buffer, runs every call on
// a new goroutine whose stack grows again at each call into SQLite, and
// encodes the result twice (each text content on its own, then compacted
// into the result). Anything else (initialize, other methods, a call
// before the session is initialized, of a tool the server does not have,
// with _meta or the multi-round-trip fields, from a client of protocol
// 2026-07-28 or later) goes to the SDK as before.
type fastCalls struct {
	tools map[string]mcp.ToolHandler
	chain mcp.MethodHandler // the server's middleware around callTool
}

// newFastCalls returns the fast path of a server whose tools are tools
// and whose receiving middleware is mw.
func newFastCalls(tools map[string]mcp.ToolHandler, mw mcp.Middleware) *fastCalls {
	f := &fastCalls{tools: tools}
	f.chain = mw(func(ctx context.Context, _ string, req mcp.Request) (mcp.Result, error) {
		return f.callTool(ctx, req.(*mcp.CallToolRequest))
	})
	return f
}

// callTool is the SDK's Server.callTool for a client without
// multi-round-trip results.
func (f *fastCalls) callTool(ctx context.Context, req *mcp.CallToolRequest) (mcp.Result, error) {
	h, ok := f.tools[req.Params.Name]
	if !ok {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", req.Params.Name)}
	}
	res, err := h(ctx, req)
	if res == nil {
		return nil, err
	}
	if err == nil && res.Content == nil {
		res2 := *res
		res2.Content = []mcp.Content{} // as the SDK: not "null"
		res = &res2
	}
	return res, err
}

// callParams is what the fast path reads of a tools/call's params; a
// call with any of the last three goes to the SDK.
type callParams struct {
	Name           string          `json:"name"`
	Arguments      json.RawMessage `json:"arguments"`
	Meta           json.RawMessage `json:"_meta"`
	InputResponses json.RawMessage `json:"inputResponses"`
	RequestState   json.RawMessage `json:"requestState"`
}

// parseCall reads a tools/call's params as the SDK does; false when they
// are not an object or have a field the fast path leaves to the SDK.
func parseCall(params []byte) (callParams, bool) {
	var p callParams
	if len(params) == 0 || params[0] != '{' {
		return p, false
	}
	if rest, err := json.Parse(params, &p, parseFlags); err != nil || len(bytes.TrimSpace(rest)) > 0 {
		return p, false
	}
	return p, p.Meta == nil && p.InputResponses == nil && p.RequestState == nil
}

// take returns the request of m to serve on the fast path, or nil when m
// is for the SDK.
func (f *fastCalls) take(ss *mcp.ServerSession, m jsonrpc.Message) *mcp.CallToolRequest {
	if f == nil || ss == nil {
		return nil
	}
	req, ok := m.(*jsonrpc.Request)
	if !ok || req.Method != "tools/call" || !req.IsCall() {
		return nil
	}
	if ip := ss.InitializeParams(); ip == nil || ip.ProtocolVersion >= newestVersion {
		return nil
	}
	p, ok := parseCall(req.Params)
	if !ok {
		return nil
	}
	if _, ok := f.tools[p.Name]; !ok {
		return nil
	}
	re, _ := req.Extra.(*mcp.RequestExtra)
	return &mcp.CallToolRequest{Session: ss, Params: &mcp.CallToolParamsRaw{Name: p.Name, Arguments: stdjson.RawMessage(p.Arguments)}, Extra: re}
}

// call runs req and returns its response's wire form (no line end).
func (f *fastCalls) call(ctx context.Context, id jsonrpc.ID, req *mcp.CallToolRequest) []byte {
	res, err := f.chain(ctx, "tools/call", req)
	if res != nil && err != nil {
		res = nil // as the SDK: the error answers
	}
	if res == nil && err == nil {
		err = fmt.Errorf("%w: tools/call returned a nil result and nil error", errInternal)
	}
	if err == nil {
		if r, ok := res.(*mcp.CallToolResult); ok && r != nil {
			if data := encodeToolResponse(id, r); data != nil {
				return data
			}
		}
		raw, merr := sdkMarshal(res)
		if merr != nil {
			err = fmt.Errorf("%w: tools/call returned a malformed result: %v", errInternal, merr)
		} else {
			r := &jsonrpc.Response{ID: id, Result: raw}
			if data := encodeResponse(r); data != nil {
				return data[:len(data)-1]
			}
			data, _ := jsonrpc.EncodeMessage(r)
			return data
		}
	}
	data, eerr := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: err})
	if eerr != nil {
		data, _ = jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: eerr.Error()}})
	}
	return data
}

// errInternal is the SDK's jsonrpc2.ErrInternal (the same code).
var errInternal = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error"}

// sdkMarshal is the SDK's encoding of a result: encoding/json without
// HTML escaping, and no trailing newline.
func sdkMarshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := stdjson.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// encodeToolResponse returns the wire form of a response whose id is a
// number and whose result is text content (and structured content),
// byte for byte what the SDK makes of it; nil for any other.
func encodeToolResponse(id jsonrpc.ID, r *mcp.CallToolResult) []byte {
	n, ok := id.Raw().(int64)
	if !ok || r.Meta != nil || r.InputRequests != nil || r.RequestState != "" || r.GetError() != nil {
		return nil
	}
	var structured []byte
	read, isRead := r.StructuredContent.(satchel.ReadResult)
	size := 64
	switch {
	case isRead:
		size += 64 + len(read.Text) + len(read.Text)/8 + len(read.Notice) + len(read.Type)
	case r.StructuredContent != nil:
		// The SDK's json.Marshal of the result encodes it so (HTML escaped).
		var err error
		if structured, err = stdjson.Marshal(r.StructuredContent); err != nil {
			return nil
		}
		size += len(structured)
	}
	for _, c := range r.Content {
		t, ok := c.(*mcp.TextContent)
		if !ok || t == nil || t.Meta != nil || t.Annotations != nil {
			return nil
		}
		size += len(`{"type":"text","text":""},`) + len(t.Text) + len(t.Text)/8
	}
	b := make([]byte, 0, size)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, n, 10)
	b = append(b, `,"result":{"content":[`...)
	for i, c := range r.Content {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"type":"text","text":`...)
		b = appendString(b, c.(*mcp.TextContent).Text)
		b = append(b, '}')
	}
	b = append(b, ']')
	switch {
	case isRead:
		b = append(b, `,"structuredContent":`...)
		b = appendReadResult(b, read)
	case structured != nil:
		b = append(b, `,"structuredContent":`...)
		b = append(b, structured...)
	}
	if r.IsError {
		b = append(b, `,"isError":true`...)
	}
	return append(b, "}}"...)
}

// appendReadResult appends r as encoding/json's Marshal writes it (its
// fields' tags, their order, omitempty): read_file's structured content,
// whose text would otherwise be encoded through reflection a second time
// (FuzzReadResultJSON compares the two, and TestReadResultFields fails
// when ReadResult gains a field this does not write).
func appendReadResult(b []byte, r satchel.ReadResult) []byte {
	b = append(b, `{"text":`...)
	b = appendString(b, r.Text)
	if r.Truncated {
		b = append(b, `,"truncated":true`...)
	}
	if r.NextLine != 0 {
		b = append(b, `,"next_line":`...)
		b = strconv.AppendInt(b, int64(r.NextLine), 10)
	}
	if r.NextChar != 0 {
		b = append(b, `,"next_char":`...)
		b = strconv.AppendInt(b, int64(r.NextChar), 10)
	}
	if r.Notice != "" {
		b = append(b, `,"notice":`...)
		b = appendString(b, r.Notice)
	}
	if r.Binary {
		b = append(b, `,"binary":true`...)
	}
	if r.Type != "" {
		b = append(b, `,"type":`...)
		b = appendString(b, r.Type)
	}
	if r.Size != 0 {
		b = append(b, `,"size":`...)
		b = strconv.AppendInt(b, r.Size, 10)
	}
	return append(b, '}')
}

// appendString appends s as encoding/json's Marshal writes a string: with
// HTML escaping (the SDK marshals each content with json.Marshal), invalid
// UTF-8 as U+FFFD, U+2028 and U+2029 escaped (encoding/json's documented
// escaping; FuzzEncodeToolResponse compares the two). Text has line ends,
// so this is the common case, not the exception: it is written here
// rather than through a json.Encoder, which allocated for every string.
func appendString(b []byte, s string) []byte { return jsonquote.Append(b, s, true) }

// fastConn is what one connection keeps to serve calls on the fast path:
// its session (known once Connect returned it), the calls running, to
// cancel them as notifications/cancelled asks, and idle goroutines to run
// the next calls on.
type fastConn struct {
	f   *fastCalls
	ss  atomic.Pointer[mcp.ServerSession]
	ctx context.Context // done when the connection closes
	end context.CancelFunc

	mu      sync.Mutex
	running map[jsonrpc.ID]context.CancelFunc

	jobs chan func() // unbuffered: taken only by an idle worker
	idle atomic.Int32
}

// maxIdleWorkers bounds the goroutines a connection keeps waiting for
// calls; they keep the stacks the calls grew.
const maxIdleWorkers = 32

func newFastConn(f *fastCalls) *fastConn {
	if f == nil {
		return nil
	}
	ctx, end := context.WithCancel(context.Background())
	return &fastConn{f: f, ctx: ctx, end: end, running: map[jsonrpc.ID]context.CancelFunc{}, jobs: make(chan func())}
}

// take returns the call m asks for when it is for the fast path.
func (fc *fastConn) take(m jsonrpc.Message) *mcp.CallToolRequest {
	if fc == nil {
		return nil
	}
	return fc.f.take(fc.ss.Load(), m)
}

// serve runs the call req of id and returns its response's wire form.
func (fc *fastConn) serve(id jsonrpc.ID, req *mcp.CallToolRequest) []byte {
	ctx, cancel := context.WithCancel(fc.ctx)
	fc.mu.Lock()
	fc.running[id] = cancel
	fc.mu.Unlock()
	defer func() {
		fc.mu.Lock()
		delete(fc.running, id)
		fc.mu.Unlock()
		cancel()
	}()
	return fc.f.call(ctx, id, req)
}

// cancelled cancels the call a notifications/cancelled names, when it
// runs here; the notification still goes to the SDK, for its own calls.
func (fc *fastConn) cancelled(m jsonrpc.Message) {
	if fc == nil {
		return
	}
	req, ok := m.(*jsonrpc.Request)
	if !ok || req.Method != "notifications/cancelled" || req.IsCall() || len(req.Params) == 0 {
		return
	}
	var p struct {
		RequestID any `json:"requestId"`
	}
	if _, err := json.Parse(req.Params, &p, parseFlags); err != nil {
		return
	}
	id, err := jsonrpc.MakeID(p.RequestID)
	if err != nil || !id.IsValid() {
		return
	}
	fc.mu.Lock()
	cancel := fc.running[id]
	fc.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// run runs job on an idle worker, or a new one.
func (fc *fastConn) run(job func()) {
	select {
	case fc.jobs <- job:
		return
	default:
	}
	go func() {
		job()
		if fc.idle.Add(1) > maxIdleWorkers {
			fc.idle.Add(-1)
			return
		}
		defer fc.idle.Add(-1)
		for {
			select {
			case job := <-fc.jobs:
				job()
			case <-fc.ctx.Done():
				return
			}
		}
	}()
}

// close cancels the calls running and lets the idle workers go.
func (fc *fastConn) close() {
	if fc != nil {
		fc.end()
	}
}
