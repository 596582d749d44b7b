package mcpserver

import (
	"bytes"
	"cmp"
	"context"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/segmentio/encoding/json"
)

// IOTransport is the transport of `satchel serve` over stdio:
// newline-delimited JSON-RPC messages read from Reader and written to
// Writer, as the SDK's mcp.IOTransport speaks them, JSON-RPC batches
// included (MCP 2025-03-26), but cheaper: the SDK decodes each incoming
// message three times before its handlers see it (a validating pass to
// find the message's end, a try as a batch, then the envelope), each
// time through a decoder that allocates a fresh 32 KiB buffer, and
// validates again the result it encodes; IOTransport decodes each
// message once, and writes a response's result as the SDK encoded it
// (docs/mcp-performance.md).
//
// What it accepts and refuses is what mcp.IOTransport accepts and
// refuses: a message may span lines and may be followed by "\r\n"; the
// value must be followed by a line end (or the end of input); an
// incoming message that is not JSON-RPC or nests deeper than 1,000
// levels ends the connection with an error, as a batch that repeats a
// request's id does. A batch's responses are written together, as one
// array, once all of its calls are answered. Batches are accepted until a
// protocol version of 2025-06-18 or later is negotiated (MCP 2025-06-18
// removed them).
//
// Where the SDK's transport ends the connection, two refusals are
// answered and the session goes on (decision 0138): a message larger
// than MaxMessageBytes gets a JSON-RPC error for its id (id null when it
// cannot be read), its line skipped without being kept; a batch at
// 2025-06-18 or later gets one error, id null, -32600, including one read
// before the answer to initialize is written, judged by the version that
// answer will name.
//
// The SDK tells its own transport the negotiated version through an
// unexported hook no other transport can implement; IOTransport reads it
// where the protocol states it, in the server's answer to initialize
// (decision 0032). So a batch is refused from the moment that answer is
// written, where the SDK's transport refuses it from the moment the
// server handles initialize: only a client that sends a batch before it
// has the answer to its initialize can tell them apart.
//
// Under Server.Run, a plain tool call that comes alone is served without
// the SDK's dispatch, through the same middleware and handler (decision
// 0086, fastcall.go).
type IOTransport struct {
	Reader io.ReadCloser
	Writer io.WriteCloser
	// MaxMessageBytes bounds one incoming message (0:
	// mcp.DefaultMaxLineLength; negative: no bound).
	MaxMessageBytes int

	// calls, when set (Server.Run sets it), counts the calls read and not
	// yet answered; the end of input waits for their answers.
	calls *pendingCalls
	// fast, when set (Server.Run sets it), serves plain tool calls
	// without the SDK's dispatch (fastcall.go).
	fast *fastConn
}

// Connect implements mcp.Transport.
func (t *IOTransport) Connect(context.Context) (mcp.Connection, error) {
	limit := t.MaxMessageBytes
	if limit == 0 {
		limit = mcp.DefaultMaxLineLength
	}
	c := &ioConn{
		r:        t.Reader,
		w:        t.Writer,
		incoming: make(chan incoming),
		closed:   make(chan struct{}),
		calls:    t.calls,
		fast:     t.fast,
	}
	fr := &frameReader{r: t.Reader, limit: limit, buf: make([]byte, 0, 64<<10)}
	// Reads happen on a goroutine of their own, so that Read returns as
	// soon as Close is called even when the reader does not unblock (as
	// the SDK does: standard input cannot always be interrupted).
	go func() {
		for {
			msgs, batch, err := fr.next()
			select {
			case c.incoming <- incoming{msgs, batch, err}:
			case <-c.closed:
				return
			}
			var over *oversizedError
			if err != nil && !errors.As(err, &over) {
				return
			}
		}
	}()
	return c, nil
}

// incoming is what the read loop found: the messages of one line (several
// when it was a batch), or why it stopped.
type incoming struct {
	msgs  []jsonrpc.Message
	batch bool
	err   error
}

type ioConn struct {
	r io.ReadCloser
	w io.WriteCloser

	incoming chan incoming
	queue    []jsonrpc.Message // the rest of the last batch; Read is not concurrent

	writeMu sync.Mutex // Write is

	batchMu sync.Mutex
	batches map[jsonrpc.ID]*batch // the calls of incoming batches not yet answered

	versionMu   sync.Mutex
	version     string              // the negotiated protocol version, once initialize is answered
	expected    string              // the version the answer to the first initialize read will name
	listens     map[jsonrpc.ID]bool // the subscriptions/listen calls not yet answered (not counted)
	initIDs     map[jsonrpc.ID]bool // the initialize calls not yet answered
	initPending atomic.Int32        // len(initIDs), read without the lock

	calls *pendingCalls // nil: not counted
	fast  *fastConn     // nil: every message goes to the SDK

	closeOnce sync.Once
	closed    chan struct{}
	closeErr  error
}

// batch is an incoming batch whose responses are being gathered, to be
// written together (JSON-RPC 2.0: one array answers a batch).
type batch struct {
	unresolved map[jsonrpc.ID]int
	responses  []*jsonrpc.Response
}

func (c *ioConn) SessionID() string { return "" }

// Read implements mcp.Connection. A plain tool call that came alone
// (not in a batch) is served on the fast path, and Read goes on to the
// next message.
func (c *ioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		m, alone, err := c.next(ctx)
		if err != nil {
			return nil, err
		}
		c.fast.cancelled(m)
		c.received(m)
		if alone {
			if req := c.fast.take(m); req != nil {
				c.dispatch(m.(*jsonrpc.Request).ID, req)
				continue
			}
		}
		return m, nil
	}
}

// dispatch serves the call id on the fast path and writes its answer.
func (c *ioConn) dispatch(id jsonrpc.ID, req *mcp.CallToolRequest) {
	c.fast.run(func() {
		data := append(c.fast.serve(id, req), '\n')
		c.writeMu.Lock()
		_, _ = c.w.Write(data)
		c.writeMu.Unlock()
		if c.calls != nil {
			c.calls.answer()
		}
	})
}

// next returns the next message and whether it came alone. A request
// over the size bound, and a batch where batches are refused, are
// answered here with an error, and the session goes on.
func (c *ioConn) next(ctx context.Context) (jsonrpc.Message, bool, error) {
	select {
	case <-ctx.Done():
		return nil, false, ctx.Err()
	default:
	}
	if len(c.queue) > 0 {
		m := c.queue[0]
		c.queue = c.queue[1:]
		return m, false, nil
	}
	for {
		m, alone, refusal, err := c.nextValue(ctx)
		if refusal != nil {
			if err := c.writeLine(refusal); err != nil {
				return nil, false, err
			}
			continue
		}
		return m, alone, err
	}
}

// writeLine writes one line of output as it is.
func (c *ioConn) writeLine(data []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.w.Write(data)
	return err
}

// nextValue returns the first message of the next value read, or the
// line that answers a value refused without ending the session.
func (c *ioConn) nextValue(ctx context.Context) (m jsonrpc.Message, alone bool, refusal []byte, err error) {
	var in incoming
	select {
	case <-ctx.Done():
		return nil, false, nil, ctx.Err()
	case in = <-c.incoming:
		var over *oversizedError
		if errors.As(in.err, &over) {
			return nil, false, over.response(), nil
		}
		if in.err != nil {
			select {
			case <-c.closed:
				// Close closed the reader under the read loop: its
				// error is Close's doing, not the input's.
				return nil, false, nil, io.EOF
			default:
			}
			if in.err == io.EOF && c.calls != nil {
				// The end of input closes the session, and the SDK
				// drops the answers of calls still running then:
				// answer every call read first.
				c.calls.awaitAnswers(ctx)
			}
			return nil, false, nil, in.err
		}
	case <-c.closed:
		return nil, false, nil, io.EOF
	}
	if in.batch {
		if v := c.batchVersion(in.msgs); v >= batchlessVersion {
			// Answered with one error (id null: a batch has no one id),
			// as a streamable HTTP session answers it; the session goes on.
			return nil, false, errorLine(nil, jsonrpc.CodeInvalidRequest,
				fmt.Sprintf("JSON-RPC batching is not supported in %s and later (request version: %s)", batchlessVersion, v)), nil
		}
		var b *batch
		for _, m := range in.msgs {
			// Every request, notifications included, as the SDK counts
			// them (a batch with a notification is never answered there).
			req, ok := m.(*jsonrpc.Request)
			if !ok {
				continue
			}
			if b == nil {
				b = &batch{unresolved: map[jsonrpc.ID]int{}}
			}
			if _, dup := b.unresolved[req.ID]; dup {
				return nil, false, nil, fmt.Errorf("duplicate message ID %q", req.ID)
			}
			b.unresolved[req.ID] = len(b.responses)
			b.responses = append(b.responses, nil)
		}
		if b != nil {
			if err := c.addBatch(b); err != nil {
				return nil, false, nil, err
			}
		}
	}
	c.queue = in.msgs[1:]
	return in.msgs[0], !in.batch, nil, nil
}

// batchVersion returns the protocol version a batch of msgs arrives at:
// the negotiated one; before the answer to initialize is written, the
// version that answer will name (an initialize read before the batch, as
// when a client writes both at once, decides it); without initialize,
// the version the batch's requests name in their _meta (MCP 2026-07-28
// and later carry it in every request). "" when none says.
func (c *ioConn) batchVersion(msgs []jsonrpc.Message) string {
	c.versionMu.Lock()
	v := cmp.Or(c.version, c.expected)
	c.versionMu.Unlock()
	if v != "" {
		return v
	}
	for _, m := range msgs {
		if req, ok := m.(*jsonrpc.Request); ok && len(req.Params) > 0 {
			var p struct {
				Meta map[string]any `json:"_meta"`
			}
			if stdjson.Unmarshal(req.Params, &p) == nil {
				if s, ok := p.Meta[mcp.MetaKeyProtocolVersion].(string); ok && s > v {
					v = s
				}
			}
		}
	}
	return v
}

// errorLine is the line of a JSON-RPC error response to id (the JSON of
// a number or a string), or with id null when id is nil.
func errorLine(id []byte, code int64, msg string) []byte {
	if id == nil {
		id = []byte("null")
	}
	m, _ := stdjson.Marshal(msg)
	b := make([]byte, 0, 64+len(id)+len(m))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"error":{"code":`...)
	b = strconv.AppendInt(b, code, 10)
	b = append(b, `,"message":`...)
	b = append(b, m...)
	b = append(b, "}}\n"...)
	return b
}

// batchlessVersion is the first protocol version without JSON-RPC batches.
const batchlessVersion = "2025-06-18"

// received notes a message Read returns: a call to count, an initialize
// whose answer will name the protocol version.
func (c *ioConn) received(m jsonrpc.Message) {
	req, ok := m.(*jsonrpc.Request)
	if !ok || !req.IsCall() {
		return
	}
	if req.Method == listenMethod {
		// A stream, answered only when it ends: the end of input does
		// not wait for it.
		c.versionMu.Lock()
		if c.listens == nil {
			c.listens = map[jsonrpc.ID]bool{}
		}
		c.listens[req.ID] = true
		c.versionMu.Unlock()
		return
	}
	if c.calls != nil {
		c.calls.n.Add(1)
	}
	if req.Method == "initialize" {
		c.versionMu.Lock()
		if c.initIDs == nil {
			c.initIDs = map[jsonrpc.ID]bool{}
		}
		c.initIDs[req.ID] = true
		c.initPending.Store(int32(len(c.initIDs)))
		if c.expected == "" {
			c.expected = expectedVersion(req.Params)
		}
		c.versionMu.Unlock()
	}
}

// expectedVersion returns the protocol version the answer to an
// initialize of params will name: the version asked for when the server
// speaks it with a handshake, else the newest version that has one.
func expectedVersion(params []byte) string {
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = stdjson.Unmarshal(params, &p)
	if slices.Contains(knownVersions, p.ProtocolVersion) {
		return p.ProtocolVersion
	}
	return slices.Max(knownVersions)
}

// answered notes a response before it is written: the answer to an
// initialize names the negotiated version (the first that does: a
// repeated initialize is refused).
func (c *ioConn) answered(r *jsonrpc.Response) {
	if c.initPending.Load() == 0 {
		return
	}
	c.versionMu.Lock()
	defer c.versionMu.Unlock()
	if !c.initIDs[r.ID] {
		return
	}
	delete(c.initIDs, r.ID)
	c.initPending.Store(int32(len(c.initIDs)))
	if r.Error != nil || c.version != "" {
		return
	}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if stdjson.Unmarshal(r.Result, &res) == nil {
		c.version = res.ProtocolVersion
	}
}

// listenMethod is MCP 2026-07-28's subscription stream, a call answered
// only when the stream ends.
const listenMethod = "subscriptions/listen"

// listenEnded reports whether id is a subscriptions/listen call (and
// forgets it): its answer was not counted.
func (c *ioConn) listenEnded(id jsonrpc.ID) bool {
	c.versionMu.Lock()
	defer c.versionMu.Unlock()
	if !c.listens[id] {
		return false
	}
	delete(c.listens, id)
	return true
}

// negotiated returns the protocol version negotiated so far ("" before).
func (c *ioConn) negotiated() string {
	c.versionMu.Lock()
	defer c.versionMu.Unlock()
	return c.version
}

func (c *ioConn) addBatch(b *batch) error {
	c.batchMu.Lock()
	defer c.batchMu.Unlock()
	for id := range b.unresolved {
		if _, ok := c.batches[id]; ok {
			return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("invalid request: batch contains previously seen request %v", id.Raw())}
		}
	}
	if c.batches == nil {
		c.batches = map[jsonrpc.ID]*batch{}
	}
	for id := range b.unresolved {
		c.batches[id] = b
	}
	return nil
}

// resolve records r when it answers a call of a batch: inBatch is set
// then, and all holds the batch's responses once r completes it.
func (c *ioConn) resolve(r *jsonrpc.Response) (all []*jsonrpc.Response, inBatch bool) {
	c.batchMu.Lock()
	defer c.batchMu.Unlock()
	b, ok := c.batches[r.ID]
	if !ok {
		return nil, false
	}
	b.responses[b.unresolved[r.ID]] = r
	delete(b.unresolved, r.ID)
	delete(c.batches, r.ID)
	if len(b.unresolved) == 0 {
		return b.responses, true
	}
	return nil, true
}

// Write implements mcp.Connection; it may be called concurrently.
func (c *ioConn) Write(ctx context.Context, m jsonrpc.Message) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	default:
	}
	var data []byte
	if r, ok := m.(*jsonrpc.Response); ok {
		c.answered(r)
		if c.calls != nil && !c.listenEnded(r.ID) {
			defer c.calls.answer()
		}
		all, inBatch := c.resolve(r)
		switch {
		case inBatch && all == nil:
			return nil // the batch's last response writes them all
		case inBatch:
			raws := make([]stdjson.RawMessage, len(all))
			for i, r := range all {
				raw, err := jsonrpc.EncodeMessage(r)
				if err != nil {
					return fmt.Errorf("encoding batch message: %w", err)
				}
				raws[i] = raw
			}
			b, err := stdjson.Marshal(raws)
			if err != nil {
				return err
			}
			data = append(b, '\n')
		default:
			data = encodeResponse(r)
		}
	}
	if data == nil {
		b, err := jsonrpc.EncodeMessage(m)
		if err != nil {
			return fmt.Errorf("marshaling message: %v", err)
		}
		data = append(b, '\n')
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.w.Write(data)
	return err
}

// encodeResponse returns, newline included, the wire form of a successful
// response whose id is a number, byte for byte what jsonrpc.EncodeMessage
// makes of it, without validating and compacting the result again: the
// SDK made it with encoding/json (compact, valid, HTML not escaped). It
// returns nil for any other message.
func encodeResponse(r *jsonrpc.Response) []byte {
	id, ok := r.ID.Raw().(int64)
	if !ok || r.Error != nil || len(r.Result) == 0 {
		return nil
	}
	b := make([]byte, 0, len(`{"jsonrpc":"2.0","id":,"result":}`)+20+len(r.Result)+1)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"result":`...)
	b = append(b, r.Result...)
	b = append(b, "}\n"...)
	return b
}

// Close implements mcp.Connection.
func (c *ioConn) Close() error {
	c.closeOnce.Do(func() {
		c.fast.close()
		// closed first: a Read that the reader's closing wakes must
		// find it so (and report EOF, not the closed reader's error).
		close(c.closed)
		var werr error
		if c.w != nil {
			werr = c.w.Close()
		}
		c.closeErr = errors.Join(c.r.Close(), werr)
	})
	return c.closeErr
}

// frameReader reads incoming messages: JSON values, each most often
// alone on its line.
type frameReader struct {
	r     io.Reader
	limit int    // most bytes of a message; <= 0: no bound
	buf   []byte // buf[start:] is read and not yet consumed
	start int
	err   error // the read error that ends the input once buf is consumed

	// While the value at start is incomplete: how much of it was scanned,
	// and where the scan stands.
	scanned int
	scan    valueScanner
}

// next returns the messages of the next JSON value of the input (one, or
// a batch's), io.EOF at the end of the input, or why the input is not
// JSON-RPC.
func (f *frameReader) next() ([]jsonrpc.Message, bool, error) {
	for {
		for f.start < len(f.buf) && isSpace(f.buf[f.start]) {
			f.start++
		}
		data := f.buf[f.start:]
		if f.limit > 0 && len(data) > f.limit && f.scanned == 0 && bytes.IndexByte(data[:f.limit+1], '\n') < 0 {
			return nil, false, f.skipLine()
		}
		if len(data) > 0 {
			msgs, batch, n, err := f.frame(data)
			if f.limit > 0 && n > f.limit {
				var id idFinder
				id.feed(data[:n])
				f.start += n
				f.scanned, f.scan = 0, valueScanner{}
				return nil, false, &oversizedError{id: id.id(), size: int64(n), limit: int64(f.limit)}
			}
			if n > 0 || err != nil {
				f.start += n
				f.scanned, f.scan = 0, valueScanner{}
				return msgs, batch, err
			}
			if f.limit > 0 && len(data) > f.limit {
				return nil, false, f.skipLine()
			}
		}
		if f.err != nil {
			if len(data) > 0 && f.err == io.EOF {
				return nil, false, io.ErrUnexpectedEOF
			}
			return nil, false, f.err
		}
		f.fill()
	}
}

// skipLine consumes the rest of the line at start, a message over the
// bound, a buffer at a time (what it skips is not kept), and returns the
// refusal to answer it with: its id, when the line has one at its top
// level, and its size.
func (f *frameReader) skipLine() *oversizedError {
	var id idFinder
	var size int64
	for {
		data := f.buf[f.start:]
		if nl := bytes.IndexByte(data, '\n'); nl >= 0 {
			line := trimRightSpace(data[:nl])
			id.feed(line)
			size += int64(len(line))
			f.start += nl + 1
			break
		}
		id.feed(data)
		size += int64(len(data))
		f.buf, f.start = f.buf[:0], 0
		if f.err != nil {
			break // the line ends the input
		}
		f.fill()
	}
	f.scanned, f.scan = 0, valueScanner{}
	if cap(f.buf) > 1<<20 {
		// Give back what reading the line grew the buffer to.
		rest := f.buf[f.start:]
		f.buf = append(make([]byte, 0, max(64<<10, len(rest))), rest...)
		f.start = 0
	}
	return &oversizedError{id: id.id(), size: size, limit: int64(f.limit)}
}

// fill reads more input into buf.
func (f *frameReader) fill() {
	const minRead = 32 << 10
	if f.start > 0 {
		n := copy(f.buf, f.buf[f.start:])
		f.buf, f.start = f.buf[:n], 0
	}
	if cap(f.buf)-len(f.buf) < minRead {
		buf := make([]byte, len(f.buf), 2*cap(f.buf)+2*minRead)
		copy(buf, f.buf)
		f.buf = buf
	}
	n, err := f.r.Read(f.buf[len(f.buf):cap(f.buf)])
	f.buf = f.buf[:len(f.buf)+n]
	if err != nil {
		f.err = err
	}
}

// frame decodes the value data starts with: it returns its messages and
// how many bytes of data it took, or why data does not start with a
// message; nothing when the value is not complete yet.
//
// As the SDK's reader does, it takes a value as soon as it is complete,
// and refuses one followed by anything but a line end; what follows a
// "\r" is the next message.
func (f *frameReader) frame(data []byte) (msgs []jsonrpc.Message, batch bool, n int, err error) {
	container := data[0] == '{' || data[0] == '['
	if f.scanned == 0 {
		// Most often the value is the line.
		if nl := bytes.IndexByte(data, '\n'); nl >= 0 {
			line := bytes.Clone(data[:nl+1])
			var rest []byte
			msgs, batch, rest, err = decodeValue(line)
			if err == nil {
				consumed := line[:len(line)-len(rest)]
				gap := consumed[len(trimRightSpace(consumed)):]
				if len(gap) == 0 || gap[0] != '\n' && gap[0] != '\r' {
					return nil, false, 0, errTrailing
				}
				return msgs, batch, len(consumed), nil
			}
			if !container {
				return nil, false, 0, err
			}
			// A value that goes on on the next lines (JSON-RPC's
			// framing forbids it, the SDK accepts it), or a syntax error.
		}
	}
	if !container {
		return nil, false, 0, nil // decoded (and refused) at its line's end
	}
	end := f.scan.scan(data[f.scanned:])
	if end < 0 {
		f.scanned = len(data)
		return nil, false, 0, nil
	}
	end += f.scanned
	var rest []byte
	msgs, batch, rest, err = decodeValue(bytes.Clone(data[:end]))
	switch {
	case err != nil:
		return nil, false, 0, err
	case len(rest) > 0:
		return nil, false, 0, errors.New("unmarshaling jsonrpc message: trailing data")
	case end < len(data) && data[end] != '\n' && data[end] != '\r':
		return nil, false, 0, errTrailing
	}
	return msgs, batch, end, nil
}

var errTrailing = errors.New("invalid trailing data at the end of stream")

// parseFlags are the SDK's: keys match fields exactly. Raw messages (a
// request's params) share the line's bytes, which nothing else uses.
const parseFlags = json.DontMatchCaseInsensitiveStructFields | json.DontCopyRawMessage

// maxDepth is the deepest nesting the SDK accepts in a message.
const maxDepth = 1000

// decodeValue decodes the JSON value at the start of data: a message, or
// a batch of them. rest is what follows the value and the spaces after it.
func decodeValue(data []byte) (msgs []jsonrpc.Message, isBatch bool, rest []byte, err error) {
	if bytes.Count(data, []byte{'{'})+bytes.Count(data, []byte{'['}) > maxDepth && tooDeep(data) {
		return nil, false, nil, fmt.Errorf("json: exceeded maximum nesting depth of %d", maxDepth)
	}
	if data[0] == '[' {
		var raws []json.RawMessage
		if rest, err = json.Parse(data, &raws, parseFlags); err == nil {
			if len(raws) == 0 {
				return nil, true, nil, errors.New("empty batch")
			}
			msgs = make([]jsonrpc.Message, len(raws))
			for i, raw := range raws {
				var w wireMessage
				if r, err := json.Parse(raw, &w, parseFlags); err != nil {
					return nil, true, nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
				} else if len(r) > 0 {
					return nil, true, nil, errors.New("unmarshaling jsonrpc message: trailing data")
				}
				if msgs[i], err = w.message(); err != nil {
					return nil, true, nil, err
				}
			}
			return msgs, true, rest, nil
		}
		// Not an array of values: decoded as one message, which fails.
	}
	var w wireMessage
	if rest, err = json.Parse(data, &w, parseFlags); err != nil {
		return nil, false, rest, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
	}
	m, err := w.message()
	if err != nil {
		return nil, false, nil, err
	}
	return []jsonrpc.Message{m}, false, rest, nil
}

// wireMessage is a JSON-RPC message as it arrives: the SDK's form.
type wireMessage struct {
	VersionTag string          `json:"jsonrpc"`
	ID         any             `json:"id,omitempty"`
	Method     json.RawMessage `json:"method"`
	Params     json.RawMessage `json:"params,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`
	Error      *jsonrpc.Error  `json:"error,omitempty"`
}

// message is jsonrpc.DecodeMessage's reading of w.
func (w *wireMessage) message() (jsonrpc.Message, error) {
	if w.VersionTag != "2.0" {
		return nil, fmt.Errorf("invalid message version tag %q; expected %q", w.VersionTag, "2.0")
	}
	id, err := jsonrpc.MakeID(w.ID)
	if err != nil {
		return nil, err
	}
	if len(w.Method) > 0 {
		method, ok := plainString(w.Method)
		if !ok {
			if err := json.Unmarshal(w.Method, &method); err != nil {
				return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
			}
		}
		return &jsonrpc.Request{Method: method, ID: id, Params: w.Params}, nil
	}
	if !id.IsValid() {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request"}
	}
	r := &jsonrpc.Response{ID: id, Result: w.Result}
	if w.Error != nil {
		r.Error = w.Error
	}
	return r, nil
}

// plainString returns the string a JSON string literal of printable ASCII
// without escapes stands for.
func plainString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	s := raw[1 : len(raw)-1]
	for _, c := range s {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return "", false
		}
	}
	return string(s), true
}

// tooDeep reports whether data nests objects and arrays deeper than
// maxDepth (the SDK's check: brackets outside strings).
func tooDeep(data []byte) bool {
	depth := 0
	inString, escaped := false, false
	for _, b := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
			continue
		}
		switch b {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth > maxDepth {
				return true
			}
		case '}', ']':
			if depth > 0 {
				depth--
			}
		}
	}
	return false
}

// valueScanner finds the end of an object or array fed to it in pieces:
// brackets outside strings (the syntax is the decoder's to check).
type valueScanner struct {
	depth             int
	inString, escaped bool
}

// scan scans the next piece; it returns the offset in it just past the
// value's end, or -1 when the value goes on.
func (s *valueScanner) scan(p []byte) int {
	for i, b := range p {
		if s.inString {
			switch {
			case s.escaped:
				s.escaped = false
			case b == '\\':
				s.escaped = true
			case b == '"':
				s.inString = false
			}
			continue
		}
		switch b {
		case '"':
			s.inString = true
		case '{', '[':
			s.depth++
		case '}', ']':
			s.depth--
			if s.depth <= 0 {
				return i + 1
			}
		}
	}
	return -1
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

func trimRightSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}
