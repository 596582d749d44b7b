package inspector

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/bodyread"
	"github.com/satchel-dev/satchel/internal/loopback"
)

// contentSecurityPolicy allows the inspector's own script, style and
// images only: no inline script or style, no other origin, no framing.
// Stored content that slipped past escaping still could not run.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// sessionCookie names the cookie that carries a session's id.
const sessionCookie = "satchel_session"

// sessionTTL is how long a session lasts after sign-in.
const sessionTTL = 12 * time.Hour

// Bounds of the sessions kept: in all, and of one token. A token's
// sign-in past its own bound ends its own oldest session; past the bound
// in all, an agent's sign-in is refused (it never ends another token's
// session), and an operator's ends the oldest agent session.
const (
	maxSessions         = 1024
	maxSessionsPerToken = 16
)

// viewer is who a request acts for: everything (the local user of an
// open inspector, or an operator's token), or one scope (an agent's
// token), perhaps one thread of it.
type viewer struct {
	all                  bool
	scope, thread, agent string
	// who describes the viewer for the page's header.
	who string
	// signedIn is set when a session carries the viewer (sign-out shows);
	// secret is then the session's token, which a live stream checks
	// again while it runs, session the session's id and token the
	// token's ID.
	signedIn       bool
	secret         string
	session, token string
	// files are the token's file rules in flag form ("": none).
	files string
}

// fileOptions are the workspace options of the file rules of the
// request's viewer: an agent's token sees the files its agent's rules
// (the project's agent.json) and its own let it read, no more.
func (in *Inspector) fileOptions(ctx context.Context) []satchel.WorkspaceOption {
	v := viewerOf(ctx)
	if v.all {
		return nil
	}
	opts := []satchel.WorkspaceOption{satchel.WithFileRules(in.cfg.Project.AgentFiles(v.agent))}
	if v.files != "" {
		r, err := satchel.ParseFileRules(v.files)
		if err != nil {
			r = satchel.FileRules{} // rules that do not parse hide everything
		}
		opts = append(opts, satchel.WithFileRules(r))
	}
	return opts
}

func (v viewer) seesScope(scope string) bool { return v.all || scope == v.scope }

func (v viewer) seesThread(scope, thread string) bool {
	return v.seesScope(scope) && (v.all || v.thread == "" || v.thread == thread)
}

type viewerKey struct{}

func viewerOf(ctx context.Context) viewer {
	v, _ := ctx.Value(viewerKey{}).(viewer)
	return v
}

// sessions maps a session id (the cookie's value) to the token secret it
// was made from: every request authenticates the secret again, so a
// revoked or expired token ends its sessions at once.
type sessions struct {
	mu      sync.Mutex
	m       map[string]session
	byToken map[string]int // sessions kept, by token ID
	now     func() time.Time
}

type session struct {
	secret   string
	token    string // the token's ID
	operator bool
	expires  time.Time
}

func newSessions() *sessions {
	return &sessions{m: map[string]session{}, byToken: map[string]int{}, now: time.Now}
}

// create makes a session for the token t of secret, within the bounds:
// see maxSessions.
func (s *sessions) create(secret string, t satchel.Token) (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	id := base64.RawURLEncoding.EncodeToString(b[:])
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range s.m {
		if now.After(v.expires) {
			s.dropLocked(k)
		}
	}
	if s.byToken[t.ID] >= maxSessionsPerToken {
		s.dropLocked(s.oldestLocked(func(v session) bool { return v.token == t.ID }))
	} else if len(s.m) >= maxSessions {
		victim := ""
		if t.Operator {
			victim = s.oldestLocked(func(v session) bool { return !v.operator })
		}
		if victim == "" {
			return "", &limitRefusal{code: http.StatusServiceUnavailable, msg: fmt.Sprintf(
				"the inspector holds %d sessions, its limit: sign out elsewhere, or retry once sessions expire (%s after their sign-in)", len(s.m), sessionTTL)}
		}
		s.dropLocked(victim)
	}
	s.m[id] = session{secret: secret, token: t.ID, operator: t.Operator, expires: now.Add(sessionTTL)}
	s.byToken[t.ID]++
	return id, nil
}

// oldestLocked returns the id of the oldest session that keep accepts,
// or "".
func (s *sessions) oldestLocked(keep func(session) bool) string {
	oldest := ""
	for k, v := range s.m {
		if keep(v) && (oldest == "" || v.expires.Before(s.m[oldest].expires)) {
			oldest = k
		}
	}
	return oldest
}

func (s *sessions) dropLocked(id string) {
	v, ok := s.m[id]
	if !ok {
		return
	}
	delete(s.m, id)
	if s.byToken[v.token]--; s.byToken[v.token] <= 0 {
		delete(s.byToken, v.token)
	}
}

func (s *sessions) get(id string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[id]
	if !ok || s.now().After(v.expires) {
		s.dropLocked(id)
		return "", false
	}
	return v.secret, true
}

func (s *sessions) drop(id string) {
	s.mu.Lock()
	s.dropLocked(id)
	s.mu.Unlock()
}

// guard applies what every request needs: security headers, the Host and
// Origin checks, read-only methods, and the viewer (or the sign-in page).
func (in *Inspector) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bodyread.Deadline(w, r, in.cfg.BodyReadTimeout)
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		if loopback.Arrived(r) && !loopback.Host(r.Host) {
			http.Error(w, "invalid Host header for a loopback listener: "+r.Host, http.StatusForbidden)
			return
		}
		if msg := foreignOrigin(r); msg != "" {
			http.Error(w, msg, http.StatusForbidden)
			return
		}
		post := r.Method == http.MethodPost && (r.URL.Path == "/signin" || r.URL.Path == "/signout") || reviewAction(r)
		if r.Method != http.MethodGet && r.Method != http.MethodHead && !post {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "the inspector is read-only: "+r.Method+" is not allowed", http.StatusMethodNotAllowed)
			return
		}
		if strings.HasPrefix(r.URL.Path, "/static/") {
			h.Set("Cache-Control", "no-cache")
			in.static.ServeHTTP(w, r)
			return
		}
		if r.URL.Path == "/signin" || r.URL.Path == "/signout" {
			next.ServeHTTP(w, r)
			return
		}
		h.Set("Cache-Control", "no-store")
		v, err := in.viewerFor(w, r)
		if errors.Is(err, errSignIn) {
			in.redirectSignIn(w, r)
			return
		}
		if err != nil {
			in.fail(w, r, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), viewerKey{}, v)))
	})
}

var errSignIn = errors.New("sign in")

// viewerFor finds the request's viewer: its session's token, else, with
// no usable token in the store, the local user on a loopback listener.
func (in *Inspector) viewerFor(w http.ResponseWriter, r *http.Request) (viewer, error) {
	if c, err := r.Cookie(sessionCookie); err == nil {
		if secret, ok := in.sessions.get(c.Value); ok {
			t, err := in.cfg.Store.Authenticate(r.Context(), secret)
			if err == nil {
				v := tokenViewer(t)
				v.secret, v.session, v.token = secret, c.Value, t.ID
				return v, nil
			}
			if !errors.Is(err, satchel.ErrAccessDenied) {
				return viewer{}, err
			}
			in.sessions.drop(c.Value)
		}
		in.clearCookie(w, r)
	}
	if !loopback.Arrived(r) {
		return viewer{}, errSignIn
	}
	n, err := in.cfg.Store.UsableTokens(r.Context())
	if err != nil {
		return viewer{}, err
	}
	if n > 0 {
		return viewer{}, errSignIn
	}
	return viewer{all: true, who: "local user (no token exists)"}, nil
}

// stillAllowed reports whether v may still read: its token is still
// valid, or, for the local user, still no token exists. A live stream
// asks it as it runs, so that revoking a token (or making the first one)
// also ends the streams opened before.
func (in *Inspector) stillAllowed(ctx context.Context, v viewer) (bool, error) {
	if v.signedIn {
		_, err := in.cfg.Store.Authenticate(ctx, v.secret)
		if errors.Is(err, satchel.ErrAccessDenied) {
			return false, nil
		}
		return err == nil, err
	}
	n, err := in.cfg.Store.UsableTokens(ctx)
	return err == nil && n == 0, err
}

func tokenViewer(t satchel.Token) viewer {
	if t.Operator {
		return viewer{all: true, who: "operator (token " + t.ID + ")", signedIn: true}
	}
	who := "agent " + t.Agent + " in scope " + t.Scope
	if t.Thread != "" {
		who += ", thread " + t.Thread
	}
	return viewer{scope: t.Scope, thread: t.Thread, agent: t.Agent, who: who + " (token " + t.ID + ")", signedIn: true, files: t.Files}
}

// foreignOrigin returns why a request from another origin is refused, or
// "" when it is not. A browser sends Origin on every POST and on
// cross-origin fetches; Sec-Fetch-Site says the same where Origin is
// absent. Navigations from other sites (a pasted or followed link) stay
// allowed for GET: they carry no cookie (SameSite=Strict) and change
// nothing.
func foreignOrigin(r *http.Request) string {
	origin := r.Header.Get("Origin")
	safe := r.Method == http.MethodGet || r.Method == http.MethodHead
	if origin != "" {
		if origin == "null" && safe && r.Header.Get("Sec-Fetch-Mode") == "navigate" {
			return ""
		}
		if origin != "http://"+r.Host && origin != "https://"+r.Host {
			return "refused: a request from origin " + origin + " (the inspector answers its own pages only)"
		}
		return ""
	}
	site := r.Header.Get("Sec-Fetch-Site")
	if safe {
		if site == "cross-site" && r.Header.Get("Sec-Fetch-Mode") != "navigate" {
			return "refused: a cross-site request (the inspector answers its own pages only)"
		}
		return ""
	}
	if site != "same-origin" {
		return "refused: a " + r.Method + " without a same-origin Origin header"
	}
	return ""
}

func (in *Inspector) cookiePath() string { return in.cfg.Base + "/" }

func (in *Inspector) clearCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: in.cookiePath(), MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
}

func (in *Inspector) redirectSignIn(w http.ResponseWriter, r *http.Request) {
	next := r.URL.RequestURI()
	http.Redirect(w, r, in.cfg.Base+"/signin?next="+url.QueryEscape(next), http.StatusSeeOther)
}

// safeNext keeps a post-sign-in destination within the inspector: a
// path of this site, or "/". The destination the inspector itself sends
// (a request's escaped RequestURI) is printable ASCII, so anything else is
// refused rather than interpreted: a control character (a browser drops a
// tab or a line end from a URL, so "/\t/evil.example" is read as
// "//evil.example"), a space or any byte past ASCII, "//" or a backslash
// (both name another host), and anything that does not parse as a path
// alone (a scheme, a host).
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") {
		return "/"
	}
	for i := 0; i < len(next); i++ {
		if c := next[i]; c <= ' ' || c >= 0x7f || c == '\\' {
			return "/"
		}
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" || !strings.HasPrefix(u.Path, "/") || strings.HasPrefix(u.Path, "//") {
		return "/"
	}
	return next
}

// signIn shows the sign-in form (GET) or makes a session from a token
// (POST).
func (in *Inspector) signIn(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if r.Method == http.MethodPost {
		r.Body = http.MaxBytesReader(w, r.Body, 4096)
		if err := r.ParseForm(); err != nil {
			code, msg := http.StatusBadRequest, "cannot read the sign-in form: "+err.Error()
			var mbe *http.MaxBytesError
			switch {
			case errors.As(err, &mbe):
				code, msg = http.StatusRequestEntityTooLarge, "the sign-in form is over 4096 bytes"
			case errors.Is(err, bodyread.ErrTimeout):
				code = http.StatusRequestTimeout
				w.Header().Set("Connection", "close")
			}
			http.Error(w, msg, code)
			return
		}
	}
	next := safeNext(r.FormValue("next"))
	if r.Method != http.MethodPost {
		in.render(w, r, http.StatusOK, "signin", pageData{Title: "Sign in", Data: signInData{Next: next}})
		return
	}
	secret := strings.TrimSpace(r.PostFormValue("token"))
	t, err := in.cfg.Store.Authenticate(r.Context(), secret)
	if err != nil {
		code := http.StatusUnauthorized
		if !errors.Is(err, satchel.ErrAccessDenied) {
			code = http.StatusServiceUnavailable
		}
		in.render(w, r, code, "signin", pageData{Title: "Sign in", Data: signInData{Next: next, Error: err.Error()}})
		return
	}
	id, err := in.sessions.create(secret, t)
	var lr *limitRefusal
	if errors.As(err, &lr) {
		in.log.Warn("inspector sign-in refused", "token", t.ID, "reason", lr.msg)
		w.Header().Set("Retry-After", "60")
		in.render(w, r, lr.code, "signin", pageData{Title: "Sign in", Data: signInData{Next: next, Error: lr.msg}})
		return
	}
	if err != nil {
		in.fail(w, r, err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: id, Path: in.cookiePath(), MaxAge: int(sessionTTL / time.Second),
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	in.log.Info("inspector sign-in", "token", t.ID, "operator", t.Operator)
	http.Redirect(w, r, in.cfg.Base+next, http.StatusSeeOther)
}

func (in *Inspector) signOut(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "sign out with POST", http.StatusMethodNotAllowed)
		return
	}
	if c, err := r.Cookie(sessionCookie); err == nil {
		in.sessions.drop(c.Value)
	}
	in.clearCookie(w, r)
	http.Redirect(w, r, in.cfg.Base+"/signin", http.StatusSeeOther)
}

type signInData struct {
	Next, Error string
}
