package mcpserver

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// streamable is satchel's side of MCP's streamable HTTP transport
// (stateful sessions), in place of the SDK's handler: a POST is read and
// decoded once (as IOTransport decodes a line), its messages go to the
// session's mcp.ServerSession as they are, and a call's response is
// written as the one JSON body of the POST, as the SDK encoded its result
// (decision 0080). The SDK's handler decodes each body twice more (its
// batch try and its _meta check, each through a fresh 32 KiB buffer) and
// encodes every result again to validate it.
//
// What it keeps of the protocol (2025-03-26 to 2025-11-25): a session
// opens with initialize, answered with its Mcp-Session-Id, which every
// later request carries (404 for a session that is not, or no longer,
// open; 403 when another token's); a POST of notifications or responses
// only is answered 202; a POST with calls is answered 200 with the
// response (an array for a batch, which a session of 2025-06-18 or later
// refuses); a call whose id is already in flight is refused; GET opens the
// session's one event stream, which carries what the server sends of its
// own accord (no resumption: Last-Event-ID is refused); DELETE ends the
// session; an Mcp-Protocol-Version the server does not speak is refused
// (400, naming the versions it does), whatever the session;
// Content-Type must be application/json and Accept must name both
// application/json and text/event-stream. A request that names a protocol
// version the SDK lists from 2026-07-28 on, and a server/discover, go to
// the SDK's stateless handler (fallback; decision 0135). A session's id is
// signed, and a session this process does not hold is rebuilt from its id
// (replicas.go, decision 0134).
type streamable struct {
	s        *Server
	fallback http.Handler
	maxBody  int64
	idle     time.Duration
	keys     *sessionKeys
	// shared: the store is reached through a database server, which other
	// processes (replicas) may serve: every request of a session reads the
	// session's shared record (sync). A memory or SQLite store is one
	// host's, served by one process.
	shared bool

	mu       sync.Mutex
	sessions map[string]*httpSession
}

func newStreamable(s *Server, fallback http.Handler) *streamable {
	return &streamable{s: s, fallback: fallback, maxBody: s.cfg.MaxRequestBytes, idle: s.cfg.SessionIdleTimeout,
		keys: newSessionKeys(s.cfg.Store), sessions: map[string]*httpSession{}, shared: s.replicated || sharedStore(s.cfg.Store)}
}

// httpSession is an open session: its MCP session and the connection the
// SDK reads it through.
type httpSession struct {
	id         string // signed once initialize is answered (sessionid.go)
	label      string // sessionLabel(id): its shared record's name
	credential string // of the token that opened it ("" without authentication)
	ss         *mcp.ServerSession
	conn       *httpConn
	fast       *fastConn // serves plain tool calls without the SDK's dispatch

	infoMu sync.Mutex
	info   *auth.TokenInfo // the last caller's, reused while the caller is the same
	last   caller

	idle    time.Duration
	timerMu sync.Mutex
	timer   *time.Timer // closes the session once idle; nil: no bound, or stopped
	refs    int         // requests in progress
}

// rejected is the SDK's jsonrpc2.ErrRejected (the same code): a write
// that wraps it fails that message, not the connection.
var rejected = &jsonrpc.Error{Code: -32005, Message: "rejected by transport"}

// ServeHTTP serves MCPPath.
func (h *streamable) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch versionRoute(r.Header.Get(protocolVersionHeader)) {
	case toSDK:
		h.fallback.ServeHTTP(w, r)
		return
	case unsupported:
		refuseVersion(w, r)
		return
	}
	switch r.Method {
	case http.MethodPost:
		h.post(w, r)
	case http.MethodGet:
		h.get(w, r)
	case http.MethodDelete:
		h.delete(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
	}
}

// newestVersion is the first protocol version a stateful server does not
// speak (the SDK serves it statelessly only).
const newestVersion = "2026-07-28"

// knownVersions are the protocol versions the sessions speak.
var knownVersions = slices.DeleteFunc(mcp.SupportedProtocolVersions(), func(v string) bool { return v >= newestVersion })

// sdkVersions are the protocol versions the SDK's handler (fallback)
// answers: the SDK's own, from newestVersion on.
var sdkVersions = slices.DeleteFunc(mcp.SupportedProtocolVersions(), func(v string) bool { return v < newestVersion })

// A route is where a request's Mcp-Protocol-Version sends it.
type route int

const (
	toSessions  route = iota // no header, or a version the sessions speak
	toSDK                    // a version only the SDK's handler speaks
	unsupported              // any other value: refused with 400
)

// versionRoute decides where a request of protocol version v goes. Only
// a version the SDK itself lists goes to its handler: any other value
// (a date no one speaks, or not a date) is refused, whatever the
// session, before it is looked up.
func versionRoute(v string) route {
	switch {
	case v == "" || slices.Contains(knownVersions, v):
		return toSessions
	case slices.Contains(sdkVersions, v):
		return toSDK
	default:
		return unsupported
	}
}

// refuseVersion answers a request whose Mcp-Protocol-Version the server
// does not speak: 400, naming the versions it does. A POST gets it as a
// JSON-RPC error (code -32022, UnsupportedProtocolVersionError: the
// supported versions and the requested one in its data), from which a
// client of 2026-07-28 or later picks a version it shares; its message is
// the same sentence, for the request's id (read from the first
// refusedBodyBytes of the body; null when not found there).
func refuseVersion(w http.ResponseWriter, r *http.Request) {
	msg := fmt.Sprintf("Bad Request: Unsupported protocol version (supported versions: %s)", strings.Join(mcp.SupportedProtocolVersions(), ","))
	if r.Method != http.MethodPost {
		http.Error(w, msg, http.StatusBadRequest)
		return
	}
	var id jsonrpc.ID
	if r.Body != nil {
		body, _ := io.ReadAll(io.LimitReader(r.Body, refusedBodyBytes))
		var m struct {
			ID any `json:"id"`
		}
		if json.Unmarshal(body, &m) == nil {
			id, _ = jsonrpc.MakeID(m.ID)
		}
	}
	data, _ := json.Marshal(mcp.UnsupportedProtocolVersionData{Supported: mcp.SupportedProtocolVersions(), Requested: r.Header.Get(protocolVersionHeader)})
	writeRPCError(w, http.StatusBadRequest, id, &jsonrpc.Error{Code: mcp.CodeUnsupportedProtocolVersion, Message: msg, Data: data})
}

// refusedBodyBytes is the most of a refused request's body read for its id.
const refusedBodyBytes = 64 << 10

// lookup returns the session the request names, or writes why not.
func (h *streamable) lookup(w http.ResponseWriter, r *http.Request, what string) *httpSession {
	id := r.Header.Get(sessionIDHeader)
	if id == "" {
		http.Error(w, fmt.Sprintf("Bad Request: %s requires an %s header", what, sessionIDHeader), http.StatusBadRequest)
		return nil
	}
	h.mu.Lock()
	hs := h.sessions[id]
	h.mu.Unlock()
	if hs == nil || hs.closing() {
		// Not here, or ending here (its idle timeout): its id still names
		// it, unless a DELETE ended it.
		return h.revive(w, r, id)
	}
	if hs.credential != "" {
		c, _ := r.Context().Value(callerCtxKey{}).(caller)
		if c.tokenless || c.id.Credential != hs.credential {
			http.Error(w, "session user mismatch", http.StatusForbidden)
			return nil
		}
	}
	if !h.sync(w, r, hs) {
		return nil
	}
	return hs
}

func (h *streamable) delete(w http.ResponseWriter, r *http.Request) {
	hs := h.lookup(w, r, "DELETE")
	if hs == nil {
		return
	}
	if hs.label != "" {
		// Ended on every replica: each reads the record before serving.
		st := sessionState{Ended: true}
		if se := h.s.sessionOf(hs.ss); se != nil {
			st.Thread = se.identity().Thread
		}
		if err := h.s.writeSessionState(r.Context(), hs.label, st); err != nil {
			h.s.log.Error("ending a session", "session", hs.label, "error", err.Error())
			http.Error(w, "cannot end the session now", http.StatusServiceUnavailable)
			return
		}
	}
	_ = hs.ss.Close()
	w.WriteHeader(http.StatusNoContent)
}

func (h *streamable) get(w http.ResponseWriter, r *http.Request) {
	if _, streamOK := accepts(r.Header.Values("Accept")); !streamOK {
		http.Error(w, "Accept must contain 'text/event-stream' for GET requests", http.StatusBadRequest)
		return
	}
	hs := h.lookup(w, r, "GET")
	if hs == nil {
		return
	}
	if len(r.Header.Values(lastEventIDHeader)) > 0 {
		http.Error(w, "stream replay unsupported", http.StatusBadRequest)
		return
	}
	hs.conn.serveStream(w, r)
}

const lastEventIDHeader = "Last-Event-ID"

func (h *streamable) post(w http.ResponseWriter, r *http.Request) {
	if ct := r.Header.Get("Content-Type"); ct != "application/json" && baseMediaType(ct) != "application/json" {
		http.Error(w, "Content-Type must be 'application/json'", http.StatusUnsupportedMediaType)
		return
	}
	if jsonOK, streamOK := accepts(r.Header.Values("Accept")); !jsonOK || !streamOK {
		http.Error(w, "Accept must contain both 'application/json' and 'text/event-stream'", http.StatusBadRequest)
		return
	}
	if len(r.Header.Values(lastEventIDHeader)) > 0 {
		http.Error(w, "can't send Last-Event-ID for POST request", http.StatusBadRequest)
		return
	}
	var hs *httpSession
	if r.Header.Get(sessionIDHeader) != "" {
		if hs = h.lookup(w, r, "POST"); hs == nil {
			return
		}
	}
	body, err := readBody(r, h.maxBody)
	if err != nil {
		h.s.bodyFailed(w, r, err)
		return
	}
	msgs, batch, err := parsePost(body)
	if err != nil {
		http.Error(w, fmt.Sprintf("malformed payload: %v", err), http.StatusBadRequest)
		return
	}
	if hs == nil && !batch && len(msgs) == 1 && isDiscover(msgs[0]) {
		// server/discover opens nothing: the SDK's handler of the
		// revisions without sessions answers it, whatever the version.
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.fallback.ServeHTTP(w, r)
		return
	}
	version := r.Header.Get(protocolVersionHeader)
	if batch && version >= batchlessVersion {
		http.Error(w, fmt.Sprintf("JSON-RPC batching is not supported in %s and later (request version: %s)", batchlessVersion, version), http.StatusBadRequest)
		return
	}
	opened := false
	if hs == nil {
		if hs, err = h.open(r); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		opened = true
		defer func() {
			// A session whose initialize failed is no session.
			if hs.ss.InitializeParams() == nil {
				_ = hs.ss.Close()
			}
		}()
	}
	if !opened {
		hs.startPOST() // open held the session already
	}
	defer hs.endPOST()

	extra := &mcp.RequestExtra{TokenInfo: hs.tokenInfo(r), Header: r.Header}
	var p *pendingPost
	for _, m := range msgs {
		req, ok := m.(*jsonrpc.Request)
		if !ok {
			continue
		}
		req.Extra = extra
		if req.IsCall() {
			if p == nil {
				p = &pendingPost{batch: batch, done: make(chan struct{})}
			}
			p.ids = append(p.ids, req.ID)
		}
	}
	c := hs.conn
	for _, m := range msgs {
		hs.fast.cancelled(m)
	}
	if !batch && p != nil {
		if req := hs.fast.take(msgs[0]); req != nil {
			h.serveFast(w, hs, p, req)
			return
		}
	}
	if p == nil {
		// Notifications and responses only (MCP: 202, no body).
		for _, m := range msgs {
			if !c.deliver(m) {
				http.Error(w, "session is closing", http.StatusNotFound)
				return
			}
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if dup, ok := c.await(p); !ok {
		writeRPCError(w, http.StatusBadRequest, dup, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("duplicate in-flight request ID %v", dup.Raw())})
		return
	}
	for _, m := range msgs {
		if !c.deliver(m) {
			c.forget(p)
			http.Error(w, "session is closing", http.StatusNotFound)
			return
		}
	}
	select {
	case <-p.done:
	case <-c.done:
		c.forget(p)
		select {
		case <-p.done: // answered as the session closed
		default:
			http.Error(w, "session closed before the call was answered", http.StatusNotFound)
			return
		}
	case <-r.Context().Done():
		// The client is gone; the call runs on, and its answer is dropped.
		c.forget(p)
		return
	}
	out := p.body()
	if opened && hs.ss.InitializeParams() != nil {
		if err := h.seal(r, hs, out); err != nil {
			h.s.log.Error("signing a session id", "error", err.Error())
			_ = hs.ss.Close()
			http.Error(w, "cannot open a session now", http.StatusServiceUnavailable)
			return
		}
		writeJSON(w, out, true, hs.id)
		return
	}
	writeJSON(w, out, false, "")
}

// serveFast answers the POST of one plain tool call on the fast path,
// in the POST's goroutine, as post answers it through the SDK: the call's
// id is in flight meanwhile, and the call runs on when its client leaves.
func (h *streamable) serveFast(w http.ResponseWriter, hs *httpSession, p *pendingPost, req *mcp.CallToolRequest) {
	c := hs.conn
	if dup, ok := c.await(p); !ok {
		writeRPCError(w, http.StatusBadRequest, dup, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("duplicate in-flight request ID %v", dup.Raw())})
		return
	}
	defer c.forget(p)
	select {
	case <-c.done:
		http.Error(w, "session is closing", http.StatusNotFound)
		return
	default:
	}
	out := hs.fast.serve(p.ids[0], req)
	select {
	case <-c.done:
		// The session's end cancelled the call: through the SDK, its
		// answer would not be written either.
		http.Error(w, "session closed before the call was answered", http.StatusNotFound)
		return
	default:
	}
	writeJSON(w, out, false, "")
}

// writeJSON writes a POST's JSON answer, with the session's id when the
// POST opened it.
func writeJSON(w http.ResponseWriter, out []byte, withID bool, id string) {
	hd := w.Header()
	hd["Content-Type"] = contentJSON
	hd["Cache-Control"] = noCache
	hd["Content-Length"] = []string{strconv.Itoa(len(out))}
	if withID {
		hd[sessionIDHeader] = []string{id}
	}
	_, _ = w.Write(out)
}

var (
	contentJSON = []string{"application/json"}
	noCache     = []string{"no-cache, no-transform"}
)

// open makes a session for a request that carries none.
func (h *streamable) open(r *http.Request) (*httpSession, error) {
	srv := h.s.httpServer(r)
	if srv == nil {
		return nil, errors.New("no server available")
	}
	c, _ := r.Context().Value(callerCtxKey{}).(caller)
	hs := &httpSession{id: crand.Text()}
	if !c.tokenless {
		hs.credential = c.id.Credential
	}
	if err := h.connect(srv, hs, nil); err != nil {
		return nil, err
	}
	hs.startPOST() // the initialize that opens it: not idle meanwhile
	if !h.insert(hs) {
		_ = hs.ss.Close()
		return nil, errors.New("session id taken")
	}
	return hs, nil
}

// connect connects hs to srv, as a new session (state nil) or as one
// opened elsewhere (state from its id), with its fast path and idle timer.
func (h *streamable) connect(srv *mcp.Server, hs *httpSession, state *mcp.ServerSessionState) error {
	var opts *mcp.ServerSessionOptions
	if state != nil {
		opts = &mcp.ServerSessionOptions{State: state}
	}
	hs.conn = newHTTPConn(hs.id)
	ss, err := srv.Connect(context.Background(), &httpTransport{conn: hs.conn}, opts)
	if err != nil {
		return fmt.Errorf("failed connection: %w", err)
	}
	hs.ss = ss
	hs.fast = newFastConn(h.s.fastCalls(srv))
	if hs.fast != nil {
		hs.fast.ss.Store(ss)
	}
	if h.idle > 0 {
		// Armed when the session's first request ends (endPOST), or by
		// revive: a session is not idle while it opens.
		hs.idle = h.idle
		hs.timer = time.AfterFunc(h.idle, func() { _ = ss.Close() })
		hs.timer.Stop()
	}
	return nil
}

// armIdle starts the idle timer of a session no request holds.
func (hs *httpSession) armIdle() {
	hs.timerMu.Lock()
	defer hs.timerMu.Unlock()
	if hs.timer != nil && hs.refs == 0 {
		hs.timer.Reset(hs.idle)
	}
}

// closing reports whether hs's session is ending.
func (hs *httpSession) closing() bool {
	select {
	case <-hs.conn.done:
		return true
	default:
		return false
	}
}

// insert makes hs findable by its id until its session ends; false (and
// nothing done) when another session that is not ending has the id.
func (h *streamable) insert(hs *httpSession) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if old := h.sessions[hs.id]; old != nil && !old.closing() {
		return false
	}
	h.sessions[hs.id] = hs
	go func() {
		_ = hs.ss.Wait()
		hs.fast.close()
		hs.stopTimer()
		h.mu.Lock()
		if h.sessions[hs.id] == hs {
			delete(h.sessions, hs.id)
		}
		h.mu.Unlock()
	}()
	return true
}

// tokenInfo returns what the session's handlers learn of the request's
// caller (mcp.RequestExtra.TokenInfo): nil for the tokenless caller of
// Config.InsecureNoAuth, whose identity the handlers take from the
// configuration and the request's headers. The session reuses it while
// its caller stays the same.
func (hs *httpSession) tokenInfo(r *http.Request) *auth.TokenInfo {
	c, ok := r.Context().Value(callerCtxKey{}).(caller)
	if !ok || c.tokenless {
		return nil
	}
	hs.infoMu.Lock()
	defer hs.infoMu.Unlock()
	if hs.info == nil || hs.last != c {
		hs.info = &auth.TokenInfo{UserID: c.id.Credential, Extra: map[string]any{callerKey: c}}
		hs.last = c
	}
	return hs.info
}

func (hs *httpSession) startPOST() {
	hs.timerMu.Lock()
	defer hs.timerMu.Unlock()
	if hs.timer == nil {
		return
	}
	if hs.refs == 0 {
		hs.timer.Stop()
	}
	hs.refs++
}

func (hs *httpSession) endPOST() {
	hs.timerMu.Lock()
	defer hs.timerMu.Unlock()
	if hs.timer == nil {
		return
	}
	if hs.refs--; hs.refs == 0 {
		hs.timer.Reset(hs.idle)
	}
}

func (hs *httpSession) stopTimer() {
	hs.timerMu.Lock()
	defer hs.timerMu.Unlock()
	if hs.timer != nil {
		hs.timer.Stop()
		hs.timer = nil
	}
}

// readBody reads a request's body, at most limit bytes (<= 0: no bound).
// A body of known length is read into a buffer of that size, up to
// maxPrealloc: what is allocated before the bytes arrive is not what the
// client declares.
func readBody(r *http.Request, limit int64) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	n := r.ContentLength
	if limit > 0 && n > limit {
		return nil, &http.MaxBytesError{Limit: limit}
	}
	size := int64(512)
	if n >= 0 {
		size = min(n+1, maxPrealloc)
	}
	buf := make([]byte, 0, size)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)] // room to read into
		}
		m, err := r.Body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if limit > 0 && int64(len(buf)) > limit {
			return nil, &http.MaxBytesError{Limit: limit}
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// maxPrealloc is the most readBody allocates before a body's bytes
// arrive.
const maxPrealloc = 64 << 10

// parsePost decodes the body of a POST: one JSON-RPC message, or a batch
// of them (JSON-RPC 2.0's array), alone but for white space.
func parsePost(body []byte) (msgs []jsonrpc.Message, batch bool, err error) {
	body = bytes.TrimLeft(body, " \t\r\n")
	if len(body) == 0 {
		return nil, false, errors.New("POST requires a non-empty body")
	}
	msgs, batch, rest, err := decodeValue(body)
	if err != nil {
		return nil, batch, err
	}
	if len(bytes.TrimLeft(rest, " \t\r\n")) > 0 {
		return nil, batch, errors.New("unmarshaling jsonrpc message: trailing data")
	}
	return msgs, batch, nil
}

// accepts reports whether Accept values admit JSON and an event stream.
func accepts(values []string) (jsonOK, streamOK bool) {
	for _, value := range values {
		for raw := range strings.SplitSeq(value, ",") {
			base, _, _ := strings.Cut(raw, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK, streamOK
}

func baseMediaType(v string) string {
	t, _, err := mime.ParseMediaType(v)
	if err != nil {
		return ""
	}
	return t
}

func writeRPCError(w http.ResponseWriter, status int, id jsonrpc.ID, e *jsonrpc.Error) {
	data, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: e})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if err == nil {
		_, _ = w.Write(data)
	}
}

// pendingPost is a POST waiting for the responses to its calls.
type pendingPost struct {
	ids   []jsonrpc.ID
	batch bool

	mu        sync.Mutex
	responses [][]byte
	done      chan struct{} // closed once every call is answered
}

// add records a response; it reports whether it was the last.
func (p *pendingPost) add(data []byte) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.responses = append(p.responses, data)
	if len(p.responses) == len(p.ids) {
		close(p.done)
		return true
	}
	return false
}

// body is the POST's answer: the response, or a batch's array of them.
func (p *pendingPost) body() []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.batch && len(p.responses) == 1 {
		return p.responses[0]
	}
	n := 2 + len(p.responses)
	for _, r := range p.responses {
		n += len(r)
	}
	b := make([]byte, 0, n)
	b = append(b, '[')
	for i, r := range p.responses {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, r...)
	}
	return append(b, ']')
}

// httpTransport connects an mcp.ServerSession to an httpConn.
type httpTransport struct{ conn *httpConn }

func (t *httpTransport) Connect(context.Context) (mcp.Connection, error) { return t.conn, nil }

// SupportsProtocolVersion implements mcp.ProtocolVersionSupporter.
func (t *httpTransport) SupportsProtocolVersion(v string) bool {
	return slices.Contains(knownVersions, v)
}

// httpConn is the mcp.Connection of an HTTP session: what POSTs deliver
// is read, a response goes to the POST that carried its call, anything
// else to the session's event stream.
type httpConn struct {
	sessionID string
	incoming  chan jsonrpc.Message

	mu      sync.Mutex
	waiting map[jsonrpc.ID]*pendingPost // calls in flight, by id
	stream  *eventStream                // the GET stream, when one is open

	closeOnce sync.Once
	done      chan struct{}
}

func newHTTPConn(id string) *httpConn {
	return &httpConn{sessionID: id, incoming: make(chan jsonrpc.Message, 16), waiting: map[jsonrpc.ID]*pendingPost{}, done: make(chan struct{})}
}

func (c *httpConn) SessionID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessionID
}

// rename gives the connection its signed id.
func (c *httpConn) rename(id string) {
	c.mu.Lock()
	c.sessionID = id
	c.mu.Unlock()
}

// await registers p's calls, unless one of their ids is in flight
// already: then it returns that id.
func (c *httpConn) await(p *pendingPost) (jsonrpc.ID, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, id := range p.ids {
		if _, busy := c.waiting[id]; busy || slices.Contains(p.ids[:i], id) {
			return id, false
		}
	}
	for _, id := range p.ids {
		c.waiting[id] = p
	}
	return jsonrpc.ID{}, true
}

// forget drops p's calls not yet answered: their answers have nowhere to go.
func (c *httpConn) forget(p *pendingPost) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range p.ids {
		if c.waiting[id] == p {
			delete(c.waiting, id)
		}
	}
}

// deliver hands m to the session; false once the session is closed.
func (c *httpConn) deliver(m jsonrpc.Message) bool {
	select {
	case c.incoming <- m:
		return true
	case <-c.done:
		return false
	}
}

// Read implements mcp.Connection.
func (c *httpConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case m := <-c.incoming:
		return m, nil
	case <-c.done:
		return nil, io.EOF
	}
}

// Write implements mcp.Connection.
func (c *httpConn) Write(ctx context.Context, m jsonrpc.Message) error {
	if r, ok := m.(*jsonrpc.Response); ok {
		c.mu.Lock()
		p := c.waiting[r.ID]
		delete(c.waiting, r.ID)
		c.mu.Unlock()
		if p == nil {
			return fmt.Errorf("%w: no request awaits the response to %v", rejected, r.ID.Raw())
		}
		data := encodeResponse(r)
		if data != nil {
			data = data[:len(data)-1] // no line end
		} else {
			var err error
			if data, err = jsonrpc.EncodeMessage(r); err != nil {
				return err
			}
		}
		p.add(data)
		return nil
	}
	data, err := jsonrpc.EncodeMessage(m)
	if err != nil {
		return err
	}
	c.mu.Lock()
	st := c.stream
	c.mu.Unlock()
	if st == nil || !st.send(data) {
		return fmt.Errorf("%w: no event stream is open", rejected)
	}
	return nil
}

// Close implements mcp.Connection.
func (c *httpConn) Close() error {
	c.closeOnce.Do(func() { close(c.done) })
	return nil
}

// eventStream is a session's GET stream.
type eventStream struct {
	msgs chan []byte
	gone chan struct{} // closed when the GET ends
}

// send queues data for the stream; false when the stream has ended or
// its client does not keep up.
func (e *eventStream) send(data []byte) bool {
	select {
	case <-e.gone:
		return false
	default:
	}
	select {
	case e.msgs <- data:
		return true
	case <-e.gone:
		return false
	default:
		return false
	}
}

// serveStream serves the session's GET stream until its client leaves or
// the session ends. A session has one.
func (c *httpConn) serveStream(w http.ResponseWriter, r *http.Request) {
	st := &eventStream{msgs: make(chan []byte, 64), gone: make(chan struct{})}
	c.mu.Lock()
	if c.stream != nil {
		c.mu.Unlock()
		http.Error(w, "the session's event stream is already open", http.StatusConflict)
		return
	}
	c.stream = st
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.stream = nil
		c.mu.Unlock()
		close(st.gone)
	}()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache, no-transform")
	w.Header().Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	for {
		select {
		case data := <-st.msgs:
			b := make([]byte, 0, len("event: message\ndata: \n\n")+len(data))
			b = append(b, "event: message\ndata: "...)
			b = append(b, data...)
			b = append(b, "\n\n"...)
			if _, err := w.Write(b); err != nil {
				return
			}
			_ = rc.Flush()
		case <-r.Context().Done():
			return
		case <-c.done:
			return
		}
	}
}
