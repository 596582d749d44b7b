package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/bodyread"
	"github.com/satchel-dev/satchel/internal/loopback"
)

// HTTP endpoints.
const (
	// MCPPath serves streamable HTTP MCP sessions.
	MCPPath = "/mcp"
	// HealthPath answers 200 "ok" when the store answers.
	HealthPath = "/healthz"
	// MetricsPath serves Prometheus metrics.
	MetricsPath = "/metrics"
	// UIPath serves Config.UI, when set.
	UIPath = "/ui/"
	// GitPath serves Config.Git, when set.
	GitPath = "/git/"
)

// ThreadHeader chooses the thread of an HTTP session, within the token's
// scope: it is read when the session starts; a later request of the same
// session may repeat it but not change it. At 2026-07-28, which has no
// sessions, it chooses the thread of each request. A token bound to a
// thread refuses any other. A thread it names that does not exist is made
// by the session's first write; reads before it are refused
// (session.checkNamed).
const ThreadHeader = "X-Satchel-Thread"

// RequestIDHeader carries a request's id: the client's when it sends a
// plausible one, else one the server makes. Responses echo it, and the
// logs of the tool calls the request makes carry it.
const RequestIDHeader = "X-Request-Id"

// callerKey is where the caller's identity travels from the HTTP
// middleware to the MCP handlers: in the bearer token's TokenInfo, which
// the SDK hands to every request of the session.
const callerKey = "satchel.caller"

type caller struct {
	id             Identity
	explicitThread bool
	tokenless      bool // let in without a token (Config.InsecureNoAuth)
}

type callerCtxKey struct{}

// Handler returns the HTTP handler of the server: streamable HTTP MCP
// sessions at MCPPath, each authenticated by a bearer token
// (Store.CreateToken) on every request; HealthPath; MetricsPath. Requests
// arriving on a loopback address with a Host header that is not loopback
// are refused (403), against DNS rebinding.
func (s *Server) Handler() http.Handler {
	// Requests of protocol 2026-07-28 and later, which has no sessions,
	// and server/discover go to the SDK's handler, stateless: each request
	// is served on its own, on any replica (decision 0134).
	sdk := mcp.NewStreamableHTTPHandler(s.httpServer, &mcp.StreamableHTTPOptions{
		Stateless:                    true,
		JSONResponse:                 true,
		Logger:                       s.log,
		MaxRequestBodyBytes:          s.cfg.MaxRequestBytes,
		PropagateRequestCancellation: true,
	})
	// The SDK's middleware puts the TokenInfo where its transport reads it;
	// authenticate has already checked the token, so the verifier only
	// hands over what it found.
	withInfo := auth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
		c, ok := ctx.Value(callerCtxKey{}).(caller)
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: c.id.Credential, Extra: map[string]any{callerKey: c}}, nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(sdk)
	fallback := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c, _ := r.Context().Value(callerCtxKey{}).(caller); c.tokenless {
			sdk.ServeHTTP(w, r)
			return
		}
		withInfo.ServeHTTP(w, r)
	})
	// A call's answer is one JSON body, not an event stream: no tool
	// sends anything before its result, and a stream costs both sides
	// its framing, a flush and a chunked end (docs/mcp-performance.md,
	// decision 0069). Messages of the server's own go on the session's
	// GET stream.
	st := newStreamable(s, fallback)
	s.httpMu.Lock()
	s.streams = append(s.streams, st)
	s.httpMu.Unlock()
	guarded := s.guard(st)

	mux := http.NewServeMux()
	mux.Handle(MCPPath, s.track(s.authenticate(guarded)))
	mux.HandleFunc("GET "+HealthPath, s.health)
	mux.Handle("GET "+MetricsPath, s.metrics.handler())
	mux.HandleFunc("GET "+ProtectedResourcePath, s.protectedResource)
	mux.HandleFunc("GET "+ProtectedResourcePath+MCPPath, s.protectedResource) // RFC 9728 §3.1's path-suffixed form
	if s.cfg.UI != nil {
		mux.Handle(UIPath, s.cfg.UI)
	}
	if s.cfg.Git != nil {
		mux.Handle(GitPath, s.cfg.Git)
	}
	return s.hostCheck(s.requestLog(s.bodyDeadline(mux)))
}

// bodyDeadline gives every request's body Config.BodyReadTimeout to
// arrive (the inspector's under UIPath too): a client that sends its
// headers and then a byte now and then does not hold its connection for
// longer.
func (s *Server) bodyDeadline(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bodyread.Deadline(w, r, s.cfg.BodyReadTimeout)
		next.ServeHTTP(w, r)
	})
}

// httpServer returns the MCP server of the caller's agent.
func (s *Server) httpServer(r *http.Request) *mcp.Server {
	c, ok := r.Context().Value(callerCtxKey{}).(caller)
	if !ok {
		return nil
	}
	srv, err := s.server(serverKey{agent: c.id.Agent, http: true})
	if err != nil {
		s.log.Error("cannot serve agent", "agent", c.id.Agent, "error", err.Error())
		return nil
	}
	return srv
}

// track counts the MCP requests in flight, except the event streams
// (GET), which last as long as their session: a graceful shutdown waits
// for the others before it closes the sessions.
func (s *Server) track(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			s.inflight.Add(1)
			defer s.inflight.Add(-1)
		}
		next.ServeHTTP(w, r)
	})
}

// authenticate checks the bearer token of every request (a revoked or
// expired token ends the sessions opened with it, within
// Config.TokenCheckInterval) and the thread it asks for, and passes the
// caller on to next. With Config.InsecureNoAuth, a
// request with no token that arrived on loopback goes to open instead, as
// the configured identity.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secret, ok := bearer(r)
		if !ok && s.cfg.InsecureNoAuth && r.Header.Get("Authorization") == "" && loopback.Arrived(r) {
			s.admit(w, r, caller{id: s.fixed, tokenless: true}, "", next)
			return
		}
		if !ok {
			s.unauthorized(w, r, "missing bearer token: send Authorization: Bearer <token> (make one with satchel token create)")
			return
		}
		t, err := s.authenticateToken(r.Context(), secret)
		if errors.Is(err, satchel.ErrAccessDenied) {
			s.unauthorized(w, r, err.Error())
			return
		}
		if err != nil {
			s.log.Error("authenticating a request", "error", err.Error(), "request_id", r.Header.Get(RequestIDHeader))
			http.Error(w, "cannot check the token now", http.StatusServiceUnavailable)
			return
		}
		if t.Operator {
			http.Error(w, fmt.Sprintf("token %s is an operator token (for the inspector): the MCP server takes an agent's token", t.ID), http.StatusForbidden)
			return
		}
		c := caller{id: Identity{Scope: t.Scope, Agent: t.Agent, Thread: t.Thread, Credential: t.ID, ThreadBound: t.Thread != "", Review: t.Review, Files: t.Files, ReadOnly: t.ReadOnly}}
		if c.id.Thread == "" {
			c.id.Thread = "main"
		}
		bound := ""
		if t.Thread != "" {
			bound = fmt.Sprintf("token %s is bound to thread %q", t.ID, t.Thread)
		}
		s.admit(w, r, c, bound, next)
	})
}

// admit applies the thread a request asks for (refused when bound says
// the caller's thread is fixed and it differs) and passes the caller on.
func (s *Server) admit(w http.ResponseWriter, r *http.Request, c caller, bound string, next http.Handler) {
	if th := r.Header.Get(ThreadHeader); th != "" {
		if err := satchel.ValidThreadName(th); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if bound != "" && th != c.id.Thread {
			http.Error(w, fmt.Sprintf("%s: %s %q is not allowed", bound, ThreadHeader, th), http.StatusForbidden)
			return
		}
		c.id.Thread, c.explicitThread = th, true
	}
	// The agent's tools are built (once) before the SDK asks for them,
	// so that an agent the project does not know is refused clearly.
	if _, err := s.server(serverKey{agent: c.id.Agent, http: true}); err != nil {
		code := http.StatusInternalServerError
		if errors.Is(err, satchel.ErrNotFound) || errors.Is(err, satchel.ErrAccessDenied) || errors.Is(err, satchel.ErrInvalidArgument) {
			code = http.StatusForbidden
		}
		http.Error(w, err.Error(), code)
		return
	}
	next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callerCtxKey{}, c)))
}

func bearer(r *http.Request) (string, bool) {
	f := strings.Fields(r.Header.Get("Authorization"))
	if len(f) != 2 || !strings.EqualFold(f[0], "Bearer") {
		return "", false
	}
	return f[1], true
}

func (s *Server) unauthorized(w http.ResponseWriter, r *http.Request, msg string) {
	s.metrics.unauthorized.Inc()
	s.log.Info("unauthorized request", "request_id", r.Header.Get(RequestIDHeader), "remote", r.RemoteAddr, "reason", msg)
	w.Header().Set("WWW-Authenticate", `Bearer realm="satchel", resource_metadata="`+resourceMetadataURL(r)+`"`)
	http.Error(w, msg, http.StatusUnauthorized)
}

// health answers whether the store answers.
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	if _, err := s.cfg.Store.Now(ctx); err != nil {
		s.log.Error("health check failed", "error", err.Error())
		http.Error(w, "store unavailable", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok\n"))
}

// hostCheck refuses, on a loopback listener, a Host header that is not
// loopback: a page of another origin that rebinds its DNS name to
// 127.0.0.1 cannot reach the server. (The SDK checks its own endpoint the
// same way; this covers every endpoint.)
func (s *Server) hostCheck(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && la != nil {
			if loopback.Host(la.String()) && !loopback.Host(r.Host) {
				http.Error(w, fmt.Sprintf("invalid Host header %q for a loopback listener", r.Host), http.StatusForbidden)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// requestLog gives each request an id and logs it.
func (s *Server) requestLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rid := r.Header.Get(RequestIDHeader)
		if !plausibleID(rid) {
			rid = newRequestID()
			r.Header.Set(RequestIDHeader, rid)
		}
		w.Header().Set(RequestIDHeader, rid)
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r)
		if s.log.Enabled(r.Context(), slog.LevelDebug) {
			s.log.Debug("http request", "request_id", rid, "method", r.Method, "path", r.URL.Path,
				"status", sw.status, "duration_ms", float64(time.Since(start).Microseconds())/1000)
		}
	})
}

func plausibleID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

// Flush lets server-sent events through.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// ListenAndServe listens on addr and serves Handler until ctx is done,
// then shuts down gracefully: it stops accepting, lets the calls in
// flight finish (at most Config.ShutdownTimeout), and closes the
// sessions. It refuses to listen on an address that is not loopback while
// no usable token exists.
func (s *Server) ListenAndServe(ctx context.Context, addr string) error {
	if err := s.checkExposure(ctx, addr); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return s.serve(ctx, ln) // checked: its warnings are said once
}

// shutdownLinger is how long a shutdown leaves sessions open after the
// last call in flight answered, so that the answer reaches its client.
const shutdownLinger = 200 * time.Millisecond

// Serve is ListenAndServe on a listener of the caller's.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if err := s.checkExposure(ctx, ln.Addr().String()); err != nil {
		_ = ln.Close()
		return err
	}
	return s.serve(ctx, ln)
}

// serve is Serve once the address is checked.
func (s *Server) serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	// Shutdown waits for requests in flight, but a session's event stream
	// (GET) never ends by itself: once the calls in flight are answered,
	// closing the sessions ends the streams.
	hs.RegisterOnShutdown(func() {
		deadline := time.Now().Add(s.cfg.ShutdownTimeout)
		for s.inflight.Load() > 0 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		// A call's handler has returned, but its client may still be
		// reading the answer: a client that sees its session's stream end
		// first fails the call (the SDK's does). Linger a moment.
		if linger := time.Until(deadline); linger > 0 {
			time.Sleep(min(linger, shutdownLinger))
		}
		s.closeSessions()
	})
	go func() {
		// The shared records of sessions ended or switched long ago.
		if err := s.pruneSessionStates(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("pruning session records", "error", err.Error())
		}
	}()
	s.log.Info("serving MCP over HTTP", "addr", ln.Addr().String(), "endpoint", MCPPath)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.log.Info("shutting down: finishing the calls in flight")
	sctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	err := hs.Shutdown(sctx)
	if err != nil {
		s.log.Warn("shutdown timed out; closing the remaining connections", "error", err.Error())
		_ = hs.Close()
	}
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	return nil
}

// closeSessions closes every open session; each close waits for the
// session's calls in flight.
func (s *Server) closeSessions() {
	for _, srv := range s.allServers() {
		for ss := range srv.Sessions() {
			go func() { _ = ss.Close() }()
		}
	}
}

// checkExposure refuses an address that is not loopback when no usable
// token exists, and warns on a loopback one.
func (s *Server) checkExposure(ctx context.Context, addr string) error {
	n, err := s.cfg.Store.UsableTokens(ctx)
	if err != nil {
		return err
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("invalid address %q: %w", addr, err)
	}
	if s.cfg.InsecureNoAuth {
		if host == "" || !loopback.Host(host) {
			return &satchel.Error{Kind: satchel.ErrAccessDenied, Msg: fmt.Sprintf(
				"refusing to listen on %s without authentication: --insecure-no-auth is allowed only on a loopback address (127.0.0.1, [::1] or localhost)", addr)}
		}
		s.log.Warn("serving without authentication: requests with no token act as the configured scope and agent (loopback only)",
			"scope", s.fixed.Scope, "agent", s.fixed.Agent, "thread", s.fixed.Thread)
		return nil
	}
	if n > 0 {
		return nil
	}
	if host == "" || !loopback.Host(host) {
		return &satchel.Error{Kind: satchel.ErrAccessDenied, Msg: fmt.Sprintf(
			"refusing to listen on %s: it is not a loopback address and no access token exists; create one with `satchel token create --agent NAME --scope SCOPE`, or listen on 127.0.0.1", addr)}
	}
	s.log.Warn("no access token exists: every request is refused until one is made with `satchel token create`")
	return nil
}
