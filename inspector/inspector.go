// Package inspector is satchel's web inspector: pages over the Go API
// that show a store's scopes, threads, histories, fork trees, commits and
// their diffs, files at any commit, collections, and the changes that wait
// for review, with live updates of a thread's pages as agents write
// (server-sent events). It changes nothing but a review's state: an
// operator's session approves or rejects one (reviews.go).
//
// Serve it alone (ListenAndServe, what `satchel ui` runs) or mount Handler
// next to the MCP server (`satchel serve --http ADDR --ui`, under /ui/).
// Access follows the HTTP server's tokens: with no usable token in the
// store, a request that arrived on a loopback address is let in as the
// local user; once a token exists, every request needs a session made on
// the sign-in page from a token. An agent's token sees its own scope (and
// only its thread when it is bound to one); an operator's token sees every
// scope. Every page escapes stored content (html/template), sets a strict
// Content-Security-Policy, and refuses a foreign Origin or, on a loopback
// listener, a Host that is not loopback (CSRF and DNS rebinding).
package inspector

import (
	"cmp"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/loopback"
)

// DefaultAddr is where `satchel ui` listens by default.
const DefaultAddr = "127.0.0.1:8765"

// DefaultPollInterval is how often a live page's stream reads its thread's
// head to learn of commits made by other processes.
const DefaultPollInterval = time.Second

// Config configures an inspector.
type Config struct {
	// Store is the store shown. Required.
	Store *satchel.Store
	// Project, when set, gives the collections (stores/*.json) to browse.
	Project *satchel.Project
	// Base is the path the inspector is mounted at ("" for the root, "/ui"
	// under the MCP server). Handler strips it from requests and puts it in
	// every link.
	Base string
	// PollInterval is how often a live stream reads its thread's head (0:
	// DefaultPollInterval).
	PollInterval time.Duration
	// GrepTimeout bounds a grep of the search page (0: the Go API's
	// default, satchel.DefaultGrepTimeout).
	GrepTimeout time.Duration
	// MaxStreamsPerToken bounds the live streams (a thread page's
	// updates) one token's sessions hold open at once, the local user's
	// counting as one token; past it a page's stream is refused with 429
	// (0: DefaultMaxStreamsPerToken). One session holds at most four.
	MaxStreamsPerToken int
	// BodyReadTimeout bounds the time a request's body may take to
	// arrive (0: DefaultBodyReadTimeout).
	BodyReadTimeout time.Duration
	// Logger receives errors (nil: slog.Default()).
	Logger *slog.Logger
	// Git, when set, is served under /git/ beside the inspector (satchel
	// ui --git): git's smart HTTP protocol, which authenticates its own
	// requests.
	Git http.Handler
}

// DefaultBodyReadTimeout is how long a request's body may take to arrive.
const DefaultBodyReadTimeout = 30 * time.Second

// Inspector serves the inspector's pages. It is safe for concurrent use.
type Inspector struct {
	cfg      Config
	log      *slog.Logger
	pages    map[string]*template.Template
	static   http.Handler
	sessions *sessions
	streams  sync.WaitGroup // live streams in flight (tests wait on it)
	live     *liveStreams   // the live streams open, by session and token
	recheck  time.Duration  // how often a live stream checks its access
}

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// New returns an inspector over cfg.Store.
func New(cfg Config) (*Inspector, error) {
	if cfg.Store == nil {
		return nil, errors.New("inspector: Config.Store is required")
	}
	cfg.Base = strings.TrimSuffix(cfg.Base, "/")
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.MaxStreamsPerToken < 0 || cfg.BodyReadTimeout < 0 {
		return nil, &satchel.Error{Kind: satchel.ErrInvalidArgument, Msg: "inspector: limits and timeouts must not be negative"}
	}
	cfg.MaxStreamsPerToken = cmp.Or(cfg.MaxStreamsPerToken, DefaultMaxStreamsPerToken)
	cfg.BodyReadTimeout = cmp.Or(cfg.BodyReadTimeout, DefaultBodyReadTimeout)
	in := &Inspector{cfg: cfg, log: cfg.Logger, sessions: newSessions(), recheck: accessRecheck, live: newLiveStreams(cfg.MaxStreamsPerToken)}
	if in.log == nil {
		in.log = slog.Default()
	}
	var err error
	if in.pages, err = parsePages(cfg.Base); err != nil {
		return nil, err
	}
	sub, _ := fs.Sub(staticFS, "static")
	in.static = http.StripPrefix("/static/", http.FileServer(http.FS(sub)))
	return in, nil
}

// Handler returns the inspector's HTTP handler, which expects the paths
// under Config.Base.
func (in *Inspector) Handler() http.Handler {
	mux := http.NewServeMux()
	in.routes(mux)
	var h http.Handler = in.guard(mux)
	if in.cfg.Base != "" {
		h = http.StripPrefix(in.cfg.Base, h)
	}
	if in.cfg.Git != nil {
		outer := http.NewServeMux()
		outer.Handle("/git/", in.cfg.Git)
		outer.Handle("/", h)
		h = outer
	}
	return h
}

// ListenAndServe refuses an address that is not loopback while no usable
// token exists (as `satchel serve --http` does), then serves Handler on
// addr until ctx is done.
func (in *Inspector) ListenAndServe(ctx context.Context, addr string) error {
	if err := CheckExposure(ctx, in.cfg.Store, addr); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return in.Serve(ctx, ln)
}

// Serve serves Handler on ln until ctx is done, then closes the live
// streams and shuts down.
func (in *Inspector) Serve(ctx context.Context, ln net.Listener) error {
	if err := CheckExposure(ctx, in.cfg.Store, ln.Addr().String()); err != nil {
		_ = ln.Close()
		return err
	}
	hs := &http.Server{
		Handler:           in.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ErrorLog:          slog.NewLogLogger(in.log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// The streams' contexts derive from ctx: they end now.
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		_ = hs.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// CheckExposure refuses to listen on addr when it is not a loopback
// address and no usable token exists: without a token, the inspector is
// open to whoever reaches it.
func CheckExposure(ctx context.Context, st *satchel.Store, addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("invalid address %q: %w", addr, err)
	}
	if host != "" && loopback.Host(host) {
		return nil
	}
	n, err := st.UsableTokens(ctx)
	if err != nil {
		return err
	}
	if n == 0 {
		return &satchel.Error{Kind: satchel.ErrAccessDenied, Msg: fmt.Sprintf(
			"refusing to listen on %s: it is not a loopback address and no access token exists; create one with `satchel token create --operator`, or listen on 127.0.0.1", addr)}
	}
	return nil
}
