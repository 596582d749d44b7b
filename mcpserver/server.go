package mcpserver

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/satchel-dev/satchel"
	buildversion "github.com/satchel-dev/satchel/internal/version"
	"github.com/satchel-dev/satchel/spill"
)

// Defaults of Config.
const (
	// DefaultCallTimeout bounds one tool call.
	DefaultCallTimeout = 30 * time.Second
	// DefaultMaxRequestBytes bounds one HTTP request body.
	DefaultMaxRequestBytes = 8 << 20
	// DefaultShutdownTimeout bounds how long a graceful shutdown waits for
	// the calls in flight.
	DefaultShutdownTimeout = 30 * time.Second
	// MaxReadChars is the largest max_chars read_file accepts.
	MaxReadChars = 1 << 20
)

// Config configures a Server.
type Config struct {
	// Store is the store the server serves. Required.
	Store *satchel.Store

	// Scope, Agent and Thread identify the caller of stdio (and of
	// in-process) sessions, and of the HTTP requests that carry no token
	// when InsecureNoAuth is set. Scope defaults to "default" and Thread to
	// "main"; Agent may be empty (an operator).
	Scope, Agent, Thread string

	// InsecureNoAuth lets HTTP requests that carry no bearer token in,
	// acting as Scope, Agent and Thread (a ThreadHeader may still choose
	// the thread), when they arrive on a loopback address: for tools that
	// cannot send a token, such as the MCP conformance suite. A request
	// that does carry a token is still checked. ListenAndServe and Serve
	// refuse an address that is not loopback with it, and the handler
	// refuses a tokenless request that did not arrive on loopback.
	InsecureNoAuth bool

	// ToolPrefix is put before the name of every file tool (read_file
	// becomes ToolPrefix+"read_file"), for clients that mix servers.
	ToolPrefix string

	// Collections, when set, adds the collection tools of each agent.
	Collections Collections

	// Tools are tools of the program's own, added for every session.
	Tools []CustomTool

	// WrapUntrusted wraps the file and document content that tools return
	// in the untrusted envelope (DESIGN §5), with a nonce per session.
	// Results then carry their text only: no structured content, and the
	// tools declare no output schema (decision 0110).
	WrapUntrusted bool

	// MaxInlineBytes is the spill limit: a tool result larger than this is
	// saved under spill/ in the caller's thread and replaced by a preview
	// (DESIGN §4); it is also read_file's default max_chars. 0 means
	// spill.DefaultMaxInlineBytes.
	MaxInlineBytes int

	// CallTimeout bounds each tool call (0: DefaultCallTimeout).
	CallTimeout time.Duration

	// MaxRequestBytes bounds an HTTP request body (0:
	// DefaultMaxRequestBytes).
	MaxRequestBytes int64

	// MaxSessions bounds the HTTP sessions open at once (0:
	// DefaultMaxSessions), MaxSessionsPerToken those of one token (0:
	// DefaultMaxSessionsPerToken); SessionIdleTimeout closes a session
	// idle that long (0: DefaultSessionIdleTimeout). MaxInflightBytes
	// bounds the request bytes held at once (0: DefaultMaxInflightBytes).
	MaxSessions, MaxSessionsPerToken int
	SessionIdleTimeout               time.Duration
	MaxInflightBytes                 int64

	// BodyReadTimeout bounds the time an HTTP request's body may take to
	// arrive, from the end of its headers; past it the request is
	// refused (408) and its connection closed (0: DefaultBodyReadTimeout).
	BodyReadTimeout time.Duration

	// TokenCheckInterval is how long the HTTP server reuses a bearer
	// token's successful check before it asks the store again: a token
	// revoked (by any process on the database) or expired is refused at
	// most this long afterwards. 0 means DefaultTokenCheckInterval; a
	// negative value checks every request; more than
	// MaxTokenCheckInterval is refused.
	TokenCheckInterval time.Duration

	// ShutdownTimeout bounds how long ListenAndServe waits, once its
	// context is done, for the calls in flight (0: DefaultShutdownTimeout).
	ShutdownTimeout time.Duration

	// Logger receives structured logs (nil: slog.Default()). Never point it
	// at standard output when serving stdio.
	Logger *slog.Logger

	// Version is reported to clients as the server's version; empty means
	// the version the build recorded (what `satchel version` prints).
	Version string

	// UI, when set, is served under UIPath on the HTTP listener: the web
	// inspector, which authenticates its own requests.
	UI http.Handler
	// Git, when set, is served under GitPath on the HTTP listener: git's
	// smart HTTP protocol (package gitrepo), which authenticates its own
	// requests.
	Git http.Handler

	// MaxSubscriptions bounds the resource subscriptions one session
	// holds (0: DefaultMaxSubscriptions); one more is refused, naming the
	// bound (subscriptions.go).
	MaxSubscriptions int

	// StaleWrites says what a session's change to a file it has not seen
	// as it is now does (satchel.TrackReads): StaleRefuse (the default,
	// also ""), StaleWarn (apply it, and add the refusal's sentence as a
	// notice) or StaleOff (no read ledger).
	StaleWrites string

	// Review, when set, reports whether an agent's changes wait for
	// review (its agent.json says "review": true): its sessions then
	// work as those of a review token do (satchel.ForReview).
	Review func(agent string) bool
	// AgentFiles, when set, returns an agent's file rules (agent.json's
	// "files"; nil: rw on every path), which every session of that agent
	// is held to (satchel.WithFileRules). ProjectFiles makes it from a
	// project.
	AgentFiles func(agent string) satchel.FileRules
	// FileRules narrow every session's access further, as a token's
	// --files does (for stdio sessions, which have no token).
	FileRules satchel.FileRules
	// ReadOnly makes every file at most readable for every session
	// (satchel serve --read-only).
	ReadOnly bool
}

// ProjectFiles returns the Config.AgentFiles of a project's agents.
func ProjectFiles(p *satchel.Project) func(agent string) satchel.FileRules {
	return p.AgentFiles
}

// FileOptions are the workspace options of id's file rules: its agent's,
// its token's, and the server's.
func (cfg *Config) FileOptions(id Identity) []satchel.WorkspaceOption {
	var opts []satchel.WorkspaceOption
	if cfg.AgentFiles != nil {
		if r := cfg.AgentFiles(id.Agent); r != nil {
			opts = append(opts, satchel.WithFileRules(r))
		}
	}
	if id.Files != "" {
		r, err := satchel.ParseFileRules(id.Files)
		if err != nil {
			r = satchel.FileRules{} // rules that do not parse hide everything
		}
		opts = append(opts, satchel.WithFileRules(r))
	}
	if cfg.FileRules != nil {
		opts = append(opts, satchel.WithFileRules(cfg.FileRules))
	}
	if id.ReadOnly || cfg.ReadOnly {
		opts = append(opts, satchel.ReadOnlyFiles())
	}
	return opts
}

// The values of Config.StaleWrites.
const (
	StaleRefuse = "refuse"
	StaleWarn   = "warn"
	StaleOff    = "off"
)

// Identity is who a session acts as: the scope it may touch (the only
// one), the agent, the thread, and the credential (a token's ID; "" over
// stdio). It comes from the server's configuration or from a token, never
// from a tool argument.
type Identity struct {
	Scope      string `json:"scope"`
	Agent      string `json:"agent,omitempty"`
	Thread     string `json:"thread"`
	Credential string `json:"credential,omitempty"`
	// ThreadBound is set for a token bound to Thread: the session can
	// reach no other thread (no switch_thread, no fork, no THREAD@REF of
	// another thread), and list_threads shows it only its own.
	ThreadBound bool `json:"thread_bound,omitempty"`
	// Review is set for a token made with review (satchel.TokenSpec.Review):
	// the session's changes wait for review (satchel.ForReview).
	Review bool `json:"review,omitempty"`
	// Files and ReadOnly are the token's file rules (satchel.Token's;
	// Files in flag form, "" for none): the session's access is the
	// stricter of its agent's and these.
	Files    string `json:"files,omitempty"`
	ReadOnly bool   `json:"read_only,omitempty"`
	// Client and ClientVersion are the MCP client's name and version from
	// the session's initialize request, set for each tool call (they are
	// agent-chosen text; the audit trail records them).
	Client        string `json:"client,omitempty"`
	ClientVersion string `json:"client_version,omitempty"`
}

// Server serves a satchel store over MCP: stdio (Run) or streamable HTTP
// (Handler, ListenAndServe). It is safe for concurrent use.
type Server struct {
	cfg     Config
	log     *slog.Logger
	metrics *metrics
	fixed   Identity // the identity of stdio sessions

	mu      sync.Mutex
	servers map[serverKey]*mcp.Server
	fast    map[*mcp.Server]*fastCalls // each server's fast path for tools/call

	sessions sync.Map // *mcp.ServerSession -> *session
	callers  sync.Map // callerStateKey -> *callerState (2026-07-28 over HTTP)

	replicated bool // set by tests: servers on one memory store stand for replicas

	httpMu   sync.Mutex
	streams  []*streamable // the sessions of each Handler, for NotifySession
	draining sync.Map      // *mcp.ServerSession -> true, while Run shuts down
	counted  sync.Map      // *mcp.ServerSession -> *pendingCalls, counted by the middleware
	subs     sync.Map      // *mcp.ServerSession -> *sessionSubs (subscriptions.go)

	inflight atomic.Int64 // HTTP MCP requests in flight, event streams aside
	guards   *guard       // the HTTP server's bounds
	tokens   *tokenCache  // bearer tokens checked less than TokenCheckInterval ago
}

// serverKey names one MCP server: one per agent (the tools differ), and
// apart for stdio (fixed identity) and HTTP (identity per request).
type serverKey struct {
	agent string
	http  bool
}

// New returns a server for cfg.
func New(cfg Config) (*Server, error) {
	if cfg.Store == nil {
		return nil, errors.New("mcpserver: Config.Store is required")
	}
	if cfg.Scope == "" {
		cfg.Scope = "default"
	}
	if cfg.Thread == "" {
		cfg.Thread = "main"
	}
	var problems []string
	if err := satchel.ValidScope(cfg.Scope); err != nil {
		problems = append(problems, err.Error())
	}
	if err := satchel.ValidThreadName(cfg.Thread); err != nil {
		problems = append(problems, err.Error())
	}
	if cfg.Agent != "" {
		if err := satchel.ValidAgentName(cfg.Agent); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if cfg.MaxInlineBytes < 0 || cfg.CallTimeout < 0 || cfg.MaxRequestBytes < 0 || cfg.ShutdownTimeout < 0 ||
		cfg.MaxSessions < 0 || cfg.MaxSessionsPerToken < 0 || cfg.SessionIdleTimeout < 0 || cfg.MaxInflightBytes < 0 ||
		cfg.BodyReadTimeout < 0 || cfg.MaxSubscriptions < 0 {
		problems = append(problems, "limits and timeouts must not be negative")
	}
	switch cfg.StaleWrites {
	case "":
		cfg.StaleWrites = StaleRefuse
	case StaleRefuse, StaleWarn, StaleOff:
	default:
		problems = append(problems, fmt.Sprintf("stale writes must be refuse, warn or off, was %q", cfg.StaleWrites))
	}
	if cfg.TokenCheckInterval > MaxTokenCheckInterval {
		problems = append(problems, fmt.Sprintf("the token check interval must be at most %s (revocation takes effect within it), was %s", MaxTokenCheckInterval, cfg.TokenCheckInterval))
	}
	if len(problems) > 0 {
		return nil, &satchel.Error{Kind: satchel.ErrInvalidArgument, Msg: joinLines(problems)}
	}
	if cfg.MaxInlineBytes == 0 {
		cfg.MaxInlineBytes = spill.DefaultMaxInlineBytes
	}
	if cfg.CallTimeout == 0 {
		cfg.CallTimeout = DefaultCallTimeout
	}
	if cfg.MaxRequestBytes == 0 {
		cfg.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if cfg.ShutdownTimeout == 0 {
		cfg.ShutdownTimeout = DefaultShutdownTimeout
	}
	cfg.MaxSessions = cmp.Or(cfg.MaxSessions, DefaultMaxSessions)
	cfg.MaxSessionsPerToken = cmp.Or(cfg.MaxSessionsPerToken, DefaultMaxSessionsPerToken)
	cfg.SessionIdleTimeout = cmp.Or(cfg.SessionIdleTimeout, DefaultSessionIdleTimeout)
	cfg.MaxInflightBytes = cmp.Or(cfg.MaxInflightBytes, DefaultMaxInflightBytes)
	cfg.BodyReadTimeout = cmp.Or(cfg.BodyReadTimeout, DefaultBodyReadTimeout)
	cfg.TokenCheckInterval = cmp.Or(cfg.TokenCheckInterval, DefaultTokenCheckInterval)
	cfg.MaxSubscriptions = cmp.Or(cfg.MaxSubscriptions, DefaultMaxSubscriptions)
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	s := &Server{
		cfg:     cfg,
		log:     log,
		metrics: newMetrics(),
		fixed:   Identity{Scope: cfg.Scope, Agent: cfg.Agent, Thread: cfg.Thread},
		servers: map[serverKey]*mcp.Server{},
		fast:    map[*mcp.Server]*fastCalls{},
		guards:  newGuard(cfg),
		tokens:  newTokenCache(cfg.TokenCheckInterval, time.Now),
	}
	s.metrics.gate = s.operatorOnly
	s.metrics.reg.MustRegister(refusalCollector{cfg.Store})
	if _, ok := cfg.Store.PoolStats(); ok {
		s.metrics.reg.MustRegister(poolCollector{cfg.Store})
	}
	if sk, ok := cfg.Collections.(interface{ skipped() []string }); ok {
		for _, e := range sk.skipped() {
			log.Warn("project entry not read", "entry", e)
		}
	}
	// Build the stdio server now, so that a collection loader's error
	// shows at start rather than at the first call.
	if _, err := s.server(serverKey{agent: cfg.Agent}); err != nil {
		return nil, err
	}
	return s, nil
}

func joinLines(s []string) string { return strings.Join(s, "\n") }

// Run serves one session over t (IOTransport or mcp.StdioTransport for
// stdio, or an in-memory transport) as the configured identity, until the
// client disconnects or ctx is done. When ctx is done, Run refuses new requests,
// waits for the calls in flight to be answered (at most the shutdown
// timeout), then closes the session. Over IOTransport a call counts until
// its answer is written, and the end of input too waits for the answers;
// over another transport, until its handler returns.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	srv, err := s.server(serverKey{agent: s.cfg.Agent})
	if err != nil {
		return err
	}
	// The calls are counted where no wrapper hides the connection's
	// session hooks from the SDK (through them its own transports learn
	// the negotiated protocol version): by satchel's transport itself, or
	// else by the middleware, from a call's start to its handler's return.
	p := newPendingCalls(s.cfg.ShutdownTimeout)
	var fast *fastConn
	if it, ok := t.(*IOTransport); ok {
		counted := *it
		counted.calls = p
		fast = newFastConn(s.fastCalls(srv))
		counted.fast = fast
		t = &counted
	} else {
		p.viaMiddleware = true
	}
	ss, err := srv.Connect(context.WithoutCancel(ctx), t, nil)
	if err != nil {
		fast.close()
		return err
	}
	if fast != nil {
		fast.ss.Store(ss) // from now on, calls may take the fast path
	}
	if p.viaMiddleware {
		s.counted.Store(ss, p)
		defer s.counted.Delete(ss)
	}
	done := make(chan error, 1)
	go func() { done <- ss.Wait() }()
	select {
	case err := <-done:
		return ignoreClosed(err)
	case <-ctx.Done():
	}
	s.log.Info("shutting down: finishing the calls in flight")
	s.draining.Store(ss, true)
	defer s.draining.Delete(ss)
	p.awaitAnswers(context.Background())
	if p.n.Load() > 0 {
		s.log.Warn("shutdown timed out; calls in flight were abandoned")
	}
	_ = ss.Close()
	return nil
}

// pendingCalls counts the calls of a connection not yet answered.
type pendingCalls struct {
	n        atomic.Int64
	answered chan struct{} // a call was answered (buffered: one wake-up)
	drain    time.Duration // how long awaitAnswers waits at most

	// viaMiddleware: counted by the middleware (a transport other than
	// IOTransport), from a call's start to its handler's return, which is
	// a little before its answer is written.
	viaMiddleware bool
}

func newPendingCalls(drain time.Duration) *pendingCalls {
	return &pendingCalls{answered: make(chan struct{}, 1), drain: drain}
}

// answer counts one call answered.
func (p *pendingCalls) answer() {
	p.n.Add(-1)
	select {
	case p.answered <- struct{}{}:
	default:
	}
}

// awaitAnswers waits until every call counted is answered, at most p.drain.
// Two may wait at once (Run once its context is done, and the read loop at
// the end of input), and answer wakes one: a waiter that finds every call
// answered passes the wake-up on, or the other would wait out p.drain.
func (p *pendingCalls) awaitAnswers(ctx context.Context) {
	timeout := time.NewTimer(p.drain)
	defer timeout.Stop()
	for p.n.Load() > 0 {
		select {
		case <-p.answered:
			if p.n.Load() <= 0 {
				select {
				case p.answered <- struct{}{}:
				default:
				}
			}
		case <-timeout.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

func ignoreClosed(err error) error {
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) {
		return nil
	}
	return err
}

// server returns (building it on first use) the MCP server of key.
func (s *Server) server(key serverKey) (*mcp.Server, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if srv, ok := s.servers[key]; ok {
		return srv, nil
	}
	srv, err := s.build(key)
	if err != nil {
		return nil, err
	}
	s.servers[key] = srv
	return srv, nil
}

// fastCalls returns the fast path of srv, a server s built.
func (s *Server) fastCalls(srv *mcp.Server) *fastCalls {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fast[srv]
}

// allServers returns the MCP servers built so far.
func (s *Server) allServers() []*mcp.Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*mcp.Server, 0, len(s.servers))
	for _, srv := range s.servers {
		out = append(out, srv)
	}
	return out
}

const serverInstructions = `satchel is a versioned workspace: files you write here persist across calls and sessions, and every change is a commit.
Paths are relative and '/'-separated (notes/plan.md). Read with read_file (numbered lines by default; use start_line/end_line for large files), change files with write_file, append_file and edit_file (old_text must occur exactly once), find them with {{glob}}, {{grep}} and list_files.
Before a risky change, take a {{checkpoint}}; {{history}} lists commits, {{diff}} compares them, {{restore}} goes back (nothing is lost).
To try an alternative without touching your thread: {{fork}} {"name": "try-b"}, then {{switch_thread}} {"thread": "try-b"} and work there; read_file with at "main" (or "main@3") reads the other thread, {{diff}} {"from": "main", "to": "try-b"} shows what the fork changed, and {{switch_thread}} {"thread": "main"} goes back, and {{merge}} {"from": "try-b"} brings the fork's changes into main. list_threads lists your threads.
Before you change a file that exists, read it (any part of it) in this session: a change to a file that changed since you last read it, or that you never read, is refused with a message that says who changed it; read it again, then change it.
When a result says "your changes wait for review R-...", your changes go to a review thread of your own, not to your thread: you read them as usual, and a person approves (merges) or rejects them; a notice tells you which, and your next change starts a new review.
Large results are saved under spill/ and replaced by a preview that says how to read the rest.`

// build makes the MCP server of key: the file tools, the agent's
// collection tools, and the file resources.
func (s *Server) build(key serverKey) (*mcp.Server, error) {
	version := s.cfg.Version
	if version == "" {
		version = buildversion.Get().String()
	}
	var srv *mcp.Server
	srv = mcp.NewServer(&mcp.Implementation{Name: "satchel", Title: "satchel workspace", Version: version}, &mcp.ServerOptions{
		Instructions: prefixed(serverInstructions, s.cfg.ToolPrefix),
		Capabilities: &mcp.ServerCapabilities{},
		// Resources may be subscribed to (subscriptions.go).
		SubscribeHandler:   func(ctx context.Context, req *mcp.SubscribeRequest) error { return s.subscribe(srv)(ctx, req) },
		UnsubscribeHandler: s.unsubscribe,
		// Every result depends on the caller's scope and agent (files,
		// resources, granted tools): no shared cache may reuse one.
		SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) { c.CacheScope = "private" },
	})
	names := map[string]bool{}
	handlers := map[string]mcp.ToolHandler{}
	add := func(t *mcp.Tool, h mcp.ToolHandler) {
		if s.cfg.WrapUntrusted && t.OutputSchema != nil {
			// Results carry no structured content (render): the tool
			// declares none (decision 0110).
			t2 := *t
			t2.OutputSchema = nil
			t = &t2
		}
		names[t.Name] = true
		handlers[t.Name] = h
		srv.AddTool(t, h)
	}
	for _, t := range fileTools(s.cfg) {
		add(t.tool, s.fileHandler(t))
	}
	if s.cfg.Collections != nil && key.agent != "" {
		tools, err := s.cfg.Collections.Tools(key.agent)
		if err != nil {
			return nil, fmt.Errorf("collection tools of agent %q: %w", key.agent, err)
		}
		for _, ct := range tools {
			if names[ct.Name] {
				return nil, fmt.Errorf("collection tool %q has the name of a file tool", ct.Name)
			}
			add(ct.mcpTool(), s.collectionHandler(ct))
		}
	}
	for _, t := range s.cfg.Tools {
		if names[t.Name] {
			return nil, fmt.Errorf("tool %q is defined twice", t.Name)
		}
		add(t.mcpTool(), s.customHandler(t))
	}
	s.addResources(srv)
	mw := s.middleware(key, names)
	srv.AddReceivingMiddleware(mw)
	srv.AddSendingMiddleware(s.dueFilter)
	s.fast[srv] = newFastCalls(handlers, mw)
	return srv, nil
}

// prefixed names the file tools in a description or the instructions as
// the server exposes them: "{{name}}" marks a tool whose name is also a
// word (diff, history), and names with an underscore are tools wherever
// they occur as a word.
func prefixed(text, prefix string) string {
	out := text
	for _, n := range fileToolNames {
		out = strings.ReplaceAll(out, "{{"+n+"}}", prefix+n)
		if prefix != "" && strings.Contains(n, "_") {
			out = replaceWord(out, n, prefix+n)
		}
	}
	return out
}

// session is what one MCP session keeps: who it is and its run (the
// envelope's nonce).
type session struct {
	// id is who the session is; its Thread changes with switch_thread,
	// under wsMu (read it with identity).
	id    Identity
	start string // the thread the session started on (ThreadHeader's)
	// named is set while the session's thread is the one ThreadHeader
	// named and it has not been seen to exist: its reads are refused
	// until a write makes it (checkNamed).
	named bool
	run   *satchel.Run
	label string // for logs

	// ctx ends when the session ends (SessionContext).
	ctx context.Context
	end context.CancelCauseFunc

	wsMu sync.Mutex
	ws   *satchel.Workspace // opened on first use; calls take cheap ForActor handles

	// onSwitch, when set, records a switch_thread where every replica
	// reads it (an HTTP session, decision 0134); it runs before the
	// session moves, and its error refuses the switch.
	onSwitch func(ctx context.Context, thread string) error
	// perRequest marks the state of one request of a revision without
	// sessions (2026-07-28): each request names its thread, and
	// switch_thread has nothing to move.
	perRequest bool
	// caller, for a request at 2026-07-28 over HTTP, is its caller's
	// state on this process: the subscriptions of the caller's listens
	// are bounded together (Server.subscribe).
	caller *callerState
}

// reviewKey names the session's review (satchel.ForReview): its MCP
// session ID, the same on every replica, else its label.
func (se *session) reviewKey() string {
	if se.label == "" {
		se.label = "local-" + newRequestID()
	}
	return se.id.Scope + "/" + se.label
}

// identity returns the session's identity as it is now.
func (se *session) identity() Identity {
	se.wsMu.Lock()
	defer se.wsMu.Unlock()
	return se.id
}

// switchTo moves the session to ws, a workspace of another thread.
func (se *session) switchTo(ws *satchel.Workspace) {
	se.wsMu.Lock()
	defer se.wsMu.Unlock()
	se.ws, se.id.Thread, se.named = ws, ws.Thread(), false
}

// checkNamed refuses a read of the thread ThreadHeader named while that
// thread does not exist, with the CLI's message and the scope's threads,
// so that a mistyped header is not an empty workspace; a write creates
// the thread, as it always has.
func (se *session) checkNamed(ctx context.Context, st *satchel.Store) error {
	se.wsMu.Lock()
	named, id := se.named, se.id
	se.wsMu.Unlock()
	if !named {
		return nil
	}
	if err := st.CheckThread(ctx, id.Scope, id.Thread); err != nil {
		return err
	}
	se.wsMu.Lock()
	if se.id.Thread == id.Thread {
		se.named = false
	}
	se.wsMu.Unlock()
	return nil
}

// workspaceOptions are the options of a workspace opened for id, at every
// revision and on every transport: its read ledger, its thread binding,
// its review (one a reviewKey: satchel.ForReview) and its file rules.
func (cfg *Config) workspaceOptions(id Identity, reviewKey string, tracked bool) []satchel.WorkspaceOption {
	var opts []satchel.WorkspaceOption
	if tracked && cfg.StaleWrites != StaleOff {
		opts = append(opts, satchel.TrackReads()) // the caller's read ledger
	}
	if id.ThreadBound {
		opts = append(opts, satchel.OnlyThread())
	}
	if id.Review || cfg.Review != nil && id.Agent != "" && cfg.Review(id.Agent) {
		opts = append(opts, satchel.ForReview("mcp:"+reviewKey))
	}
	opts = append(opts, cfg.FileOptions(id)...)
	// Reads of the caller's own (resources) name it in refusals.
	return append(opts, satchel.WorkspaceActor(satchel.Actor{Agent: id.Agent, Credential: id.Credential}))
}

// workspace returns the session's workspace, opening it (and reading its
// bounds) once. It may be the handle an earlier call used (adopt), whose
// commits name that call's tool: read through it, and mutate through a
// handle of one's own (ForActor), as call.workspace does.
func (se *session) workspace(ctx context.Context, cfg *Config) (*satchel.Workspace, error) {
	se.wsMu.Lock()
	defer se.wsMu.Unlock()
	if se.ws == nil {
		opts := cfg.workspaceOptions(se.id, se.reviewKey(), true)
		ws, err := cfg.Store.Workspace(ctx, se.id.Scope, se.id.Thread, opts...)
		if err != nil {
			return nil, err
		}
		se.ws = ws
	}
	return se.ws, nil
}

// adopt makes h, a handle of the session's workspace given to a call,
// the one the next calls' handles come from. A workspace learns its
// thread's id at its first use and ForActor passes on the id its receiver
// knows: handles made from the session's first workspace, which no call
// uses itself, would each look the id up again (a query per call).
func (se *session) adopt(h *satchel.Workspace) {
	se.wsMu.Lock()
	if h.Thread() == se.id.Thread { // not a call that began before a switch_thread
		se.ws = h
	}
	se.wsMu.Unlock()
}

type sessionKey struct{}

// sessionFrom returns the session a handler runs in.
func sessionFrom(ctx context.Context) *session {
	se, _ := ctx.Value(sessionKey{}).(*session)
	return se
}

// middleware binds each request to its session (creating the session's
// state on first sight), refuses a change of thread within a session,
// serves resources/list from the caller's workspace, and turns a call of an
// unknown (or ungranted) tool into a tool error the model can read.
func (s *Server) middleware(key serverKey, tools map[string]bool) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil {
				if _, stopping := s.draining.Load(ss); stopping {
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the server is shutting down"}
				}
				if p, ok := s.counted.Load(ss); ok && !strings.HasPrefix(method, "notifications/") && method != listenMethod {
					p.(*pendingCalls).n.Add(1)
					defer p.(*pendingCalls).answer()
				}
			}
			switch method {
			case "initialize", "tools/call", "resources/list", "resources/read",
				"resources/subscribe", "resources/unsubscribe", "subscriptions/listen":
			case "prompts/list", "prompts/get":
				// No prompts capability: at 2026-07-28 the SDK would answer
				// an empty list, which claims prompts it does not declare.
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: " + method + " (satchel has no prompts)"}
			default:
				return next(ctx, method, req)
			}
			ss, _ := req.GetSession().(*mcp.ServerSession)
			se, err := s.bind(ss, key, req)
			if err != nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: err.Error()}
			}
			if th, ok := metaThread(req); ok && !key.http {
				// stdio at 2026-07-28: this request's thread (over HTTP,
				// bind read it).
				if se, err = s.requestThread(ctx, se, th); err != nil {
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: err.Error()}
				}
			}
			ctx = context.WithValue(ctx, sessionKey{}, se)
			switch method {
			case "tools/call":
				if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && !tools[p.Name] {
					s.metrics.call("unknown", 0, true)
					return toolError(&satchel.Error{Kind: satchel.ErrNotFound, Msg: fmt.Sprintf("unknown tool %q", p.Name)}), nil
				}
			case "resources/list":
				p, _ := req.GetParams().(*mcp.ListResourcesParams)
				return s.listResources(ctx, se, p)
			}
			return next(ctx, method, req)
		}
	}
}

// bind returns the state of ss, made on its first request from the
// request's identity. Later requests must keep the session's identity.
func (s *Server) bind(ss *mcp.ServerSession, key serverKey, req mcp.Request) (*session, error) {
	extra := req.GetExtra()
	id, explicit, err := s.identify(key, extra)
	if err != nil {
		return nil, err
	}
	if ss == nil {
		se, err := s.newSession(id)
		if se != nil {
			se.named = explicit
		}
		return se, err
	}
	if key.http && extra != nil && extra.Header.Get(protocolVersionHeader) >= newestVersion {
		return s.perRequestSession(id, explicit, req)
	}
	if v, ok := s.sessions.Load(ss); ok {
		se := v.(*session)
		if se.id.Scope != id.Scope || se.id.Agent != id.Agent || se.id.Credential != id.Credential {
			return nil, errors.New("this session belongs to another identity")
		}
		if explicit && id.Thread != se.start {
			return nil, fmt.Errorf("this session works on thread %q; %s %q cannot change it (open a new session)", se.start, ThreadHeader, id.Thread)
		}
		return se, nil
	}
	se, err := s.newSession(id)
	if err != nil {
		return nil, err
	}
	se.named = explicit
	se.label = ss.ID()
	if se.label == "" {
		se.label = "local-" + newRequestID()
	}
	return s.register(ss, key, se)
}

// register makes se the state of ss, unless ss has one already (then
// that one is returned), until ss ends.
func (s *Server) register(ss *mcp.ServerSession, key serverKey, se *session) (*session, error) {
	id := se.id
	if v, loaded := s.sessions.LoadOrStore(ss, se); loaded {
		return v.(*session), nil
	}
	s.metrics.sessions.Inc()
	if key.http {
		s.guards.hold(id.Credential)
	}
	s.log.Info("session opened", "session", se.label, "scope", id.Scope, "agent", id.Agent, "thread", id.Thread, "credential", id.Credential)
	go func() {
		_ = ss.Wait()
		se.end(errSessionEnded)
		s.sessions.Delete(ss)
		s.metrics.sessions.Dec()
		if key.http {
			s.guards.give(id.Credential)
		}
		s.log.Info("session closed", "session", se.label)
	}()
	return se, nil
}

func (s *Server) newSession(id Identity) (*session, error) {
	run, err := satchel.NewRun()
	if err != nil {
		return nil, err
	}
	ctx, end := context.WithCancelCause(context.Background())
	return &session{id: id, start: id.Thread, run: run, ctx: ctx, end: end}, nil
}

// errSessionEnded is why a session's context ends.
var errSessionEnded = errors.New("its session ended")

// identify returns the identity of a request: the configured one for
// stdio servers; for HTTP, the one the authentication middleware found.
// explicit says the request named its thread.
func (s *Server) identify(key serverKey, extra *mcp.RequestExtra) (Identity, bool, error) {
	if !key.http {
		return s.fixed, false, nil
	}
	if extra != nil && extra.TokenInfo != nil {
		if c, ok := extra.TokenInfo.Extra[callerKey].(caller); ok {
			return c.id, c.explicitThread, nil
		}
	}
	if s.cfg.InsecureNoAuth && extra != nil && extra.TokenInfo == nil {
		// authenticate let this tokenless request in (loopback, thread
		// header checked): it acts as the configured identity.
		id := s.fixed
		if th := extra.Header.Get(ThreadHeader); th != "" {
			id.Thread = th
			return id, true, nil
		}
		return id, false, nil
	}
	return Identity{}, false, errors.New("unauthenticated request")
}

// newRequestID returns a short random id for logs.
func newRequestID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// replaceWord replaces the whole-word occurrences of old in text.
func replaceWord(text, old, new string) string {
	var b strings.Builder
	for {
		i := strings.Index(text, old)
		if i < 0 {
			b.WriteString(text)
			return b.String()
		}
		end := i + len(old)
		whole := (i == 0 || !wordByte(text[i-1])) && (end == len(text) || !wordByte(text[end]))
		b.WriteString(text[:i])
		if whole {
			b.WriteString(new)
		} else {
			b.WriteString(old)
		}
		text = text[end:]
	}
}

func wordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
