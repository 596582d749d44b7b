package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/satchel-dev/satchel/internal/bodyread"
)

// Defaults of the HTTP server's bounds (Config).
const (
	// DefaultMaxSessions bounds the HTTP sessions open at once.
	DefaultMaxSessions = 1000
	// DefaultMaxSessionsPerToken bounds the HTTP sessions one token holds.
	DefaultMaxSessionsPerToken = 64
	// DefaultSessionIdleTimeout closes an HTTP session that has sent
	// nothing for this long.
	DefaultSessionIdleTimeout = 10 * time.Minute
	// DefaultMaxInflightBytes bounds the request bytes the HTTP server
	// holds at once, over every request; one token may hold a quarter of
	// it, or one request of the largest size if that is more.
	DefaultMaxInflightBytes = 32 << 20
	// DefaultBodyReadTimeout bounds the time a request's body may take
	// to arrive.
	DefaultBodyReadTimeout = 30 * time.Second
	// inflightWait is how long a request waits for room among the bytes
	// in flight before it is refused.
	inflightWait = 2 * time.Second
	// chargeChunk is the most a body read takes at once, so that bytes
	// received and not yet charged stay few.
	chargeChunk = 32 << 10
)

const (
	sessionIDHeader       = "Mcp-Session-Id"
	protocolVersionHeader = "Mcp-Protocol-Version"
)

// guard holds the HTTP server's bounds: sessions per token and in all,
// and request bytes in flight.
type guard struct {
	maxSessions, maxPerToken int
	maxRequest               int64
	wait                     time.Duration // for room among the bytes in flight

	mu       sync.Mutex
	sessions map[string]int // open and opening sessions, by credential
	total    int

	bytes *byteSemaphore
}

func newGuard(cfg Config) *guard {
	return &guard{
		maxSessions: cfg.MaxSessions, maxPerToken: cfg.MaxSessionsPerToken,
		maxRequest: cfg.MaxRequestBytes,
		wait:       inflightWait,
		sessions:   map[string]int{},
		bytes:      newByteSemaphore(max(cfg.MaxInflightBytes, cfg.MaxRequestBytes), cfg.MaxRequestBytes),
	}
}

// take counts one more session of credential, unless a bound refuses it:
// then it returns the HTTP status and the message.
func (g *guard) take(credential string) (int, string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if n := g.sessions[credential]; n >= g.maxPerToken {
		return http.StatusTooManyRequests, fmt.Sprintf(
			"too many open sessions for this token: %d, the limit (--max-sessions-per-token); end one (DELETE %s with its %s) or let idle ones expire",
			n, MCPPath, sessionIDHeader)
	}
	if g.total >= g.maxSessions {
		return http.StatusServiceUnavailable, fmt.Sprintf(
			"the server has %d open sessions, its limit (--max-sessions); retry later", g.total)
	}
	g.sessions[credential]++
	g.total++
	return 0, ""
}

// hold counts one more open session of credential, without a bound:
// take admitted it when it opened.
func (g *guard) hold(credential string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.sessions[credential]++
	g.total++
}

// give returns a session of credential that take or hold counted.
func (g *guard) give(credential string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.sessions[credential]--; g.sessions[credential] <= 0 {
		delete(g.sessions, credential)
	}
	g.total--
}

// guard bounds what HTTP requests may hold, before the MCP handler reads
// them: a protocol version the server does not speak is refused; a body
// over the limit is refused from its Content-Length; the bytes of the
// bodies in flight share one budget, charged as they arrive (not as
// declared: a body that trickles in holds only what it sent); a request
// with no session must open one (initialize) and counts against the
// session bounds while it does. Sessions themselves are counted by bind.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rt := versionRoute(r.Header.Get(protocolVersionHeader))
		if rt == unsupported {
			refuseVersion(w, r)
			return
		}
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		g := s.guards
		if r.ContentLength > g.maxRequest {
			http.Error(w, fmt.Sprintf("request body of %d bytes exceeds the limit of %d bytes (--max-request-bytes)", r.ContentLength, g.maxRequest), http.StatusRequestEntityTooLarge)
			return
		}
		c, _ := r.Context().Value(callerCtxKey{}).(caller)
		if r.Body != nil && r.Body != http.NoBody {
			cb := &chargedBody{ReadCloser: r.Body, ctx: r.Context(), sem: g.bytes, key: c.id.Credential, wait: g.wait, n: g.bytes.next()}
			r.Body = cb
			defer cb.release()
		}
		if r.Header.Get(sessionIDHeader) != "" || rt == toSDK {
			next.ServeHTTP(w, r)
			return
		}
		// No session yet: only initialize may open one.
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, g.maxRequest))
		if err != nil {
			s.bodyFailed(w, r, err)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(body, &msg) == nil && msg.Method == "server/discover" {
			next.ServeHTTP(w, r) // opens no session
			return
		}
		if json.Unmarshal(body, &msg) == nil && msg.Method != "initialize" {
			what := "this request"
			if msg.Method != "" {
				what = strconv.Quote(msg.Method)
			}
			http.Error(w, fmt.Sprintf("missing session: %s needs the %s header of a session; send initialize first and repeat the %s it answers with",
				what, sessionIDHeader, sessionIDHeader), http.StatusBadRequest)
			return
		}
		if code, why := g.take(c.id.Credential); code != 0 {
			s.log.Info("session refused", "request_id", r.Header.Get(RequestIDHeader), "credential", c.id.Credential, "reason", why)
			if code == http.StatusServiceUnavailable {
				w.Header().Set("Retry-After", "5")
			}
			http.Error(w, why, code)
			return
		}
		// While it opens, the session counts here; once open, bind counts
		// it until it closes (an instant of double counting errs on the
		// safe side).
		defer g.give(c.id.Credential)
		next.ServeHTTP(w, r)
	})
}

// bodyFailed answers a request whose body could not be read: over the
// limit (413), no room among the bytes in flight (503), too slow (408),
// or cut off (400).
func (s *Server) bodyFailed(w http.ResponseWriter, r *http.Request, err error) {
	var mbe *http.MaxBytesError
	var busy *busyError
	switch {
	case errors.As(err, &mbe):
		http.Error(w, fmt.Sprintf("request body exceeds the limit of %d bytes (--max-request-bytes)", mbe.Limit), http.StatusRequestEntityTooLarge)
	case errors.As(err, &busy):
		w.Header().Set("Retry-After", "1")
		http.Error(w, busy.Error(), http.StatusServiceUnavailable)
	case errors.Is(err, bodyread.ErrTimeout):
		s.log.Info("request body too slow", "request_id", r.Header.Get(RequestIDHeader), "remote", r.RemoteAddr, "error", err.Error())
		w.Header().Set("Connection", "close")
		http.Error(w, err.Error(), http.StatusRequestTimeout)
	default:
		http.Error(w, "cannot read the request body: "+err.Error(), http.StatusBadRequest)
	}
}

// busyError refuses a body for which the bytes in flight have no room.
type busyError struct{ max, perKey int64 }

func (e *busyError) Error() string {
	return fmt.Sprintf("the server is busy: requests holding %d bytes are in flight (--max-inflight-bytes; one token may hold %d); retry shortly", e.max, e.perKey)
}

// chargedBody charges the bytes of a request's body to the budget of
// bytes in flight as they arrive, and gives them back when the request
// ends. A body that holds nothing yet waits for room (at most wait), and
// so does the oldest body that holds bytes; any other body that holds
// bytes and finds no room is refused at once, giving its bytes back to
// the older ones: no two bodies wait for each other's bytes, and the
// oldest finishes (decision 0111).
type chargedBody struct {
	io.ReadCloser
	ctx     context.Context
	sem     *byteSemaphore
	key     string
	wait    time.Duration
	n       uint64 // the body's number (byteSemaphore.next)
	charged int64
}

func (b *chargedBody) Read(p []byte) (int, error) {
	if len(p) > chargeChunk {
		p = p[:chargeChunk]
	}
	if int64(len(p)) > b.sem.perKey {
		p = p[:max(b.sem.perKey, 1)]
	}
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		wait := b.wait
		if !b.sem.mayWait(b.n, b.charged > 0) {
			wait = 0
		}
		if !b.sem.acquire(b.ctx, b.key, int64(n), wait) {
			return 0, &busyError{max: b.sem.max, perKey: b.sem.perKey}
		}
		if b.charged == 0 {
			b.sem.hold(b.n, true)
		}
		b.charged += int64(n)
	}
	return n, err
}

// release gives back what the body was charged.
func (b *chargedBody) release() {
	if b.charged > 0 {
		b.sem.hold(b.n, false)
		b.sem.release(b.key, b.charged)
		b.charged = 0
	}
}

// byteSemaphore shares a budget of bytes among requests, of which one
// credential may hold a quarter (or one request of the largest size):
// a client that sends large bodies without pause cannot take all of it.
type byteSemaphore struct {
	max, perKey int64
	mu          sync.Mutex
	used        int64
	byKey       map[string]int64
	wake        chan struct{} // closed (and replaced) on every release

	seq     uint64              // the last body's number
	holders map[uint64]struct{} // the numbers of the bodies that hold bytes
}

func newByteSemaphore(total, largest int64) *byteSemaphore {
	return &byteSemaphore{max: total, perKey: min(total, max(largest, total/4)), byKey: map[string]int64{}, wake: make(chan struct{}),
		holders: map[uint64]struct{}{}}
}

// next numbers a body, in the order bodies begin.
func (b *byteSemaphore) next() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seq++
	return b.seq
}

// mayWait reports whether body n may wait for room: it holds nothing, or
// it is the oldest body that holds bytes. At most one body waits while it
// holds bytes, so that no two wait for each other.
func (b *byteSemaphore) mayWait(n uint64, holds bool) bool {
	if !holds {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for h := range b.holders {
		if h < n {
			return false
		}
	}
	return true
}

// hold records whether body n holds bytes.
func (b *byteSemaphore) hold(n uint64, holds bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if holds {
		b.holders[n] = struct{}{}
	} else {
		delete(b.holders, n)
	}
}

// acquire takes n bytes of the budget for key, waiting at most wait for
// them (or until ctx ends); it reports whether it took them.
func (b *byteSemaphore) acquire(ctx context.Context, key string, n int64, wait time.Duration) bool {
	n = min(n, b.perKey)
	if b.take(key, n) {
		return true // the common case: room at once, no timer
	}
	if wait <= 0 {
		return false
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		b.mu.Lock()
		if b.used+n <= b.max && b.byKey[key]+n <= b.perKey {
			b.used += n
			b.byKey[key] += n
			b.mu.Unlock()
			return true
		}
		wake := b.wake
		b.mu.Unlock()
		select {
		case <-wake:
		case <-timer.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// take takes n bytes for key if there is room now.
func (b *byteSemaphore) take(key string, n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n <= b.max && b.byKey[key]+n <= b.perKey {
		b.used += n
		b.byKey[key] += n
		return true
	}
	return false
}

// usedNow is the budget in use.
func (b *byteSemaphore) usedNow() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

func (b *byteSemaphore) release(key string, n int64) {
	n = min(n, b.perKey)
	b.mu.Lock()
	b.used -= n
	if b.byKey[key] -= n; b.byKey[key] <= 0 {
		delete(b.byKey, key)
	}
	close(b.wake)
	b.wake = make(chan struct{})
	b.mu.Unlock()
}
