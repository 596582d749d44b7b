// Package gitrepo makes every thread a git repository: the mapping of a
// thread's retained commits to git commits (the same satchel history
// gives the same hashes on every backend), git's smart HTTP protocol over
// it (clone, fetch, and fast-forward push at /git/SCOPE/THREAD.git and
// /git/SCOPE.git), and the export and import of real repositories
// (docs/git.md). Objects and pack files are go-git's
// (docs/decisions/0143-git-access-with-go-git.md).
package gitrepo

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/loopback"
)

// Path is where the handler is mounted.
const Path = "/git/"

// NoFullRead is the refusal of a token whose path rules hide paths of
// the thread.
const NoFullRead = "this token cannot read every path of the thread; git access needs it"

// Identity is who a request acts as.
type Identity struct {
	// Scope is the only scope the identity reaches; an operator reaches
	// every scope.
	Scope string
	// Thread, when set, is the only thread it reaches.
	Thread     string
	Agent      string
	Credential string
	// Operator reads every scope and pushes nowhere.
	Operator bool
	// Options are the identity's own workspace options: its token's file
	// rules (satchel.Token.FileOptions) and, for a --review token, its
	// review.
	Options []satchel.WorkspaceOption
}

// Config configures a Handler.
type Config struct {
	Store *satchel.Store
	// MaxRequestBytes bounds the body of a push (the HTTP server's
	// --max-request-bytes); 0 means 64 MiB.
	MaxRequestBytes int64
	// Tokenless, when set, decides whether a request without credentials
	// comes in, and as whom (the loopback rules of the server the handler
	// is mounted in). Without it such a request gets 401.
	Tokenless func(r *http.Request) (Identity, bool)
	// MaxScopes bounds the scopes whose mapping the handler keeps in
	// memory (0: 16); past it the least recently served is dropped, and
	// mapped again when asked for.
	MaxScopes int
	Logger    *slog.Logger
	// AgentFiles, when set, returns an agent's file rules (agent.json's
	// "files"), which its tokens are held to as in every surface.
	AgentFiles func(agent string) satchel.FileRules
	// Review, when set, says whether an agent's changes wait for review
	// (agent.json's "review"): its pushes then go to a review thread.
	Review func(agent string) bool
	// ReadOnly refuses every push's changes (satchel serve --read-only).
	ReadOnly bool
}

// Handler serves git's smart HTTP protocol under Path.
type Handler struct {
	cfg    Config
	mu     sync.Mutex
	scopes map[string]*scopeRepo
	clock  int64 // counts requests, for the scopes' last use
}

// New returns a Handler.
func New(cfg Config) *Handler {
	if cfg.MaxRequestBytes <= 0 {
		cfg.MaxRequestBytes = 64 << 20
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxScopes <= 0 {
		cfg.MaxScopes = 16
	}
	return &Handler{cfg: cfg, scopes: map[string]*scopeRepo{}}
}

// repoName is a repository a URL names: a thread's, or (Thread empty)
// a scope's.
type repoName struct {
	Scope, Thread string
}

// services are the paths git's smart HTTP protocol asks for under a
// repository.
var services = []string{"info/refs", "git-upload-pack", "git-receive-pack"}

// ParseRepoPath splits the path under Path ("SCOPE/THREAD.git/SERVICE"
// or "SCOPE.git/SERVICE"; the ".git" may be left out, as git servers
// allow) into the repository and the service path. It accepts only valid
// scope and thread names, so that no name reaches anything but its scope
// and thread.
func ParseRepoPath(p string) (scope, thread, service string, err error) {
	repo := ""
	for _, svc := range services {
		if r, ok := strings.CutSuffix(p, "/"+svc); ok {
			repo, service = r, svc
			break
		}
	}
	if service == "" {
		return "", "", "", errors.New("not a repository path: want /git/SCOPE/THREAD.git or /git/SCOPE.git")
	}
	repo = strings.TrimSuffix(repo, ".git")
	scope, thread, _ = strings.Cut(repo, "/")
	if err := satchel.ValidScope(scope); err != nil {
		return "", "", "", err
	}
	if strings.Contains(repo, "/") {
		if err := satchel.ValidThreadName(thread); err != nil {
			return "", "", "", err
		}
	}
	return scope, thread, service, nil
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, Path)
	if !ok {
		http.NotFound(w, r)
		return
	}
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && la != nil {
		if loopback.Host(la.String()) && !loopback.Host(r.Host) {
			// Against DNS rebinding, as every endpoint of the server.
			http.Error(w, fmt.Sprintf("invalid Host header %q for a loopback listener", r.Host), http.StatusForbidden)
			return
		}
	}
	scope, thread, service, err := ParseRepoPath(rest)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	id, ok := h.authenticate(w, r)
	if !ok {
		return
	}
	repo := repoName{Scope: scope, Thread: thread}
	if msg, code := h.authorize(r.Context(), id, repo); msg != "" {
		http.Error(w, msg, code)
		return
	}
	switch {
	case service == "info/refs" && r.Method == http.MethodGet:
		svc := r.URL.Query().Get("service")
		if svc != "git-upload-pack" && svc != "git-receive-pack" {
			http.Error(w, "satchel serves git's smart HTTP protocol only (git 1.6.6 or later)", http.StatusForbidden)
			return
		}
		if svc == "git-receive-pack" {
			if msg := canPush(id); msg != "" {
				http.Error(w, msg, http.StatusForbidden)
				return
			}
		}
		h.advertise(w, r, repo, svc, id)
	case service == "git-upload-pack" && r.Method == http.MethodPost:
		h.uploadPack(w, r, repo)
	case service == "git-receive-pack" && r.Method == http.MethodPost:
		if msg := canPush(id); msg != "" {
			http.Error(w, msg, http.StatusForbidden)
			return
		}
		h.receivePack(w, r, repo, id)
	default:
		http.NotFound(w, r)
	}
}

func canPush(id Identity) string {
	if id.Operator {
		return "an operator token reads every scope but pushes to none: push with an agent's token"
	}
	return ""
}

// authenticate reads the token from HTTP basic authentication (any user
// name, the token as password).
func (h *Handler) authenticate(w http.ResponseWriter, r *http.Request) (Identity, bool) {
	_, secret, ok := r.BasicAuth()
	if !ok || secret == "" {
		if h.cfg.Tokenless != nil && r.Header.Get("Authorization") == "" {
			if id, ok := h.cfg.Tokenless(r); ok {
				return id, true
			}
		}
		unauthorized(w, "authentication required: use an access token as the password (any user name)")
		return Identity{}, false
	}
	t, err := h.cfg.Store.Authenticate(r.Context(), secret)
	if errors.Is(err, satchel.ErrAccessDenied) {
		unauthorized(w, err.Error())
		return Identity{}, false
	}
	if err != nil {
		h.cfg.Logger.Error("authenticating a git request", "error", err.Error())
		http.Error(w, "cannot check the token now", http.StatusServiceUnavailable)
		return Identity{}, false
	}
	id := Identity{Scope: t.Scope, Thread: t.Thread, Agent: t.Agent, Credential: t.ID, Operator: t.Operator, Options: t.FileOptions()}
	if t.Review || h.cfg.Review != nil && t.Agent != "" && h.cfg.Review(t.Agent) {
		// One review a token: its pushes wait for review together.
		id.Options = append(id.Options, satchel.ForReview("git:"+t.ID))
	}
	return id, true
}

func unauthorized(w http.ResponseWriter, msg string) {
	w.Header().Set("WWW-Authenticate", `Basic realm="satchel"`)
	http.Error(w, msg, http.StatusUnauthorized)
}

// authorize says why id may not reach repo ("" when it may).
func (h *Handler) authorize(ctx context.Context, id Identity, repo repoName) (string, int) {
	if !id.Operator {
		if id.Scope != repo.Scope {
			return fmt.Sprintf("token %s is for scope %q, not %q", id.Credential, id.Scope, repo.Scope), http.StatusForbidden
		}
		if id.Thread != "" && repo.Thread != id.Thread {
			return fmt.Sprintf("token %s is bound to thread %q: clone /git/%s/%s.git", id.Credential, id.Thread, id.Scope, id.Thread), http.StatusForbidden
		}
	}
	threads := []string{repo.Thread}
	if repo.Thread == "" {
		infos, err := h.cfg.Store.Threads(ctx, repo.Scope)
		if err != nil {
			return err.Error(), http.StatusInternalServerError
		}
		threads = threads[:0]
		for _, t := range infos {
			threads = append(threads, t.Name)
		}
	}
	for _, th := range threads {
		ws, err := h.workspace(ctx, id, repo.Scope, th, "")
		if err != nil {
			return err.Error(), http.StatusInternalServerError
		}
		if !ws.ReadsEverything() {
			return NoFullRead, http.StatusForbidden
		}
	}
	return "", 0
}

// workspace opens a thread's workspace as id, through via.
func (h *Handler) workspace(ctx context.Context, id Identity, scope, thread, via string) (*satchel.Workspace, error) {
	opts := append([]satchel.WorkspaceOption{satchel.WorkspaceActor(satchel.Actor{Agent: id.Agent, Credential: id.Credential, Via: via})}, id.Options...)
	if h.cfg.AgentFiles != nil && id.Agent != "" {
		if r := h.cfg.AgentFiles(id.Agent); r != nil {
			opts = append(opts, satchel.WithFileRules(r))
		}
	}
	if h.cfg.ReadOnly {
		opts = append(opts, satchel.ReadOnlyFiles())
	}
	return h.cfg.Store.Workspace(ctx, scope, thread, opts...)
}

// repo returns the scope's mapping, locked, refreshed for a request;
// the caller unlocks it.
func (h *Handler) repo(ctx context.Context, scope string) (*scopeRepo, error) {
	h.mu.Lock()
	h.clock++
	r := h.scopes[scope]
	if r == nil {
		if len(h.scopes) >= h.cfg.MaxScopes {
			oldest := ""
			for name, sr := range h.scopes {
				if oldest == "" || sr.used < h.scopes[oldest].used {
					oldest = name
				}
			}
			delete(h.scopes, oldest)
		}
		r = newScopeRepo(h.cfg.Store, scope)
		r.logger = h.cfg.Logger
		h.scopes[scope] = r
	}
	r.used = h.clock
	h.mu.Unlock()
	r.mu.Lock()
	if err := r.refresh(ctx); err != nil {
		r.mu.Unlock()
		return nil, err
	}
	return r, nil
}

// body returns a request's body, gunzipped when git sent it so.
func body(r *http.Request) (io.Reader, error) {
	if r.Header.Get("Content-Encoding") == "gzip" {
		return gzip.NewReader(r.Body)
	}
	return r.Body, nil
}

// ref is a reference a repository advertises.
type ref struct {
	name string
	hash plumbing.Hash
}
