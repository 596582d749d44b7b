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
	// inflightWait is how long a request waits for room among the bytes
	// in flight before it is refused.
	inflightWait = 2 * time.Second
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
// them: a body over the limit is refused from its Content-Length; the
// bytes of the bodies in flight share one budget; a request with no
// session must open one (initialize) and counts against the session
// bounds while it does. Sessions themselves are counted by bind.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rt := versionRoute(r.Header.Get(protocolVersionHeader))
		if rt == unsupported {
			refuseVersion(w)
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
		n := r.ContentLength
		if n < 0 {
			n = g.maxRequest // unknown length: reserve the most it may be
		}
		n = max(n, 1)
		c, _ := r.Context().Value(callerCtxKey{}).(caller)
		if !g.bytes.acquire(r.Context(), c.id.Credential, n, g.wait) {
			w.Header().Set("Retry-After", "1")
			http.Error(w, fmt.Sprintf("the server is busy: requests holding %d bytes are in flight (--max-inflight-bytes; one token may hold %d); retry shortly", g.bytes.max, g.bytes.perKey), http.StatusServiceUnavailable)
			return
		}
		defer g.bytes.release(c.id.Credential, n)
		if r.Header.Get(sessionIDHeader) != "" || rt == toSDK {
			next.ServeHTTP(w, r)
			return
		}
		// No session yet: only initialize may open one.
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, g.maxRequest))
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				http.Error(w, fmt.Sprintf("request body exceeds the limit of %d bytes (--max-request-bytes)", g.maxRequest), http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, "cannot read the request body: "+err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			Method string `json:"method"`
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

// byteSemaphore shares a budget of bytes among requests, of which one
// credential may hold a quarter (or one request of the largest size):
// a client that sends large bodies without pause cannot take all of it.
type byteSemaphore struct {
	max, perKey int64
	mu          sync.Mutex
	used        int64
	byKey       map[string]int64
	wake        chan struct{} // closed (and replaced) on every release
}

func newByteSemaphore(total, largest int64) *byteSemaphore {
	return &byteSemaphore{max: total, perKey: min(total, max(largest, total/4)), byKey: map[string]int64{}, wake: make(chan struct{})}
}

// acquire takes n bytes of the budget for key, waiting at most wait for
// them (or until ctx ends); it reports whether it took them.
func (b *byteSemaphore) acquire(ctx context.Context, key string, n int64, wait time.Duration) bool {
	n = min(n, b.perKey)
	if b.take(key, n) {
		return true // the common case: room at once, no timer
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
