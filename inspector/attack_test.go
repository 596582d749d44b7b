package inspector

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/satchel-dev/satchel"
)

// browserTarget resolves a Location header against base as a browser's
// URL parser does (WHATWG URL): leading and trailing C0 controls and
// spaces are trimmed, every tab and line end is removed, and a backslash
// is a slash in an http URL. It returns the host the browser would go to.
func browserTarget(base *url.URL, loc string) (string, error) {
	loc = strings.TrimFunc(loc, func(r rune) bool { return r <= ' ' })
	loc = strings.NewReplacer("\t", "", "\n", "", "\r", "", "\\", "/").Replace(loc)
	u, err := url.Parse(loc)
	if err != nil {
		// A browser percent-encodes what Go refuses in a path; the host
		// part is what matters.
		u, err = url.Parse(strings.Map(func(r rune) rune {
			if r < ' ' || r == 0x7f {
				return '_'
			}
			return r
		}, loc))
		if err != nil {
			return "", err
		}
	}
	return base.ResolveReference(u).Host, nil
}

// hostileNexts are destinations after sign-in that lead off the site, in
// a browser or in a lenient client, and so must land on "/".
func hostileNexts() []string {
	vs := []string{
		"/\t/evil.example", "/\n/evil.example", "/\r/evil.example", "\t//evil.example", "/\t\t/evil.example",
		"//evil.example", "///evil.example", "/\\evil.example", "\\/evil.example", "/\\/evil.example", "\\\\evil.example",
		"https://evil.example", "http:evil.example", "javascript:alert(1)", "data:text/html,x", "evil.example",
		"HTTPS://evil.example/", "//evil.example/%2e%2e", " //evil.example", "\x00//evil.example", "/\x00/evil.example",
		"/\x0b/evil.example", "/\x0c/evil.example", "/\x1f/evil.example", "/\x7f/evil.example", "/ /evil.example",
		"/\u00a0/evil.example", "/\u2028/evil.example", "/\u3000/evil.example", "/\ufeff/evil.example", "/\xff/evil.example",
		"/a\r\nSet-Cookie: x=1", "", "x", ".", "./x", "../x", "?next=//evil.example", "#//evil.example",
	}
	// Every control character, alone or twice, between the two slashes.
	for c := 0; c < 0x20; c++ {
		vs = append(vs, "/"+string(rune(c))+"/evil.example", "/"+string(rune(c))+string(rune(c))+"/evil.example", string(rune(c))+"/evil.example")
	}
	return vs
}

// The destination after sign-in (next) used to let a tab through:
// next=/%09/evil.com answered 303 Location: /\t/evil.com, which a browser
// reads as //evil.com. Every hostile destination now lands on "/" (the
// base of the inspector), in the form the GET shows and after the POST,
// and the inspector's own destinations still come back.
func TestAttackSignInNext(t *testing.T) {
	for _, base := range []string{"", "/ui"} {
		st, err := satchel.Open(context.Background(), "memory:")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		secret, _, err := st.CreateToken(context.Background(), satchel.TokenSpec{Agent: "research", Scope: "acme"})
		if err != nil {
			t.Fatal(err)
		}
		in, err := New(Config{Store: st, Base: base, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		h := in.Handler()
		signIn := func(body string) *http.Response {
			t.Helper()
			req, _ := http.NewRequest("POST", "http://127.0.0.1"+base+"/signin", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Origin", "http://127.0.0.1")
			req.RemoteAddr = "127.0.0.1:1234"
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			return rec.Result()
		}
		self, _ := url.Parse("http://127.0.0.1" + base + "/signin")
		// The reproduction, byte for byte.
		resp := signIn("token=" + secret + "&next=/%09/evil.com")
		if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || loc != base+"/" {
			t.Errorf("base %q, next=/%%09/evil.com: %d to %q, want %q", base, resp.StatusCode, loc, base+"/")
		}
		for _, next := range hostileNexts() {
			resp := signIn(url.Values{"token": {secret}, "next": {next}}.Encode())
			loc := resp.Header.Get("Location")
			if resp.StatusCode != http.StatusSeeOther || loc != base+"/" {
				t.Errorf("base %q, next %q: %d to %q, want %q", base, next, resp.StatusCode, loc, base+"/")
			}
			if host, err := browserTarget(self, loc); err != nil || host != "127.0.0.1" {
				t.Errorf("base %q, next %q: a browser goes to host %q (%v)", base, next, host, err)
			}
			if got := safeNext(next); got != "/" {
				t.Errorf("safeNext(%q) = %q, want /", next, got)
			}
		}
		for _, next := range []string{"/", "/s/acme/", "/s/acme/t/main/?before=3", "/s/acme/t/main/files/notes/a%20b.md", "/s/acme/t/main/search?grep=a%2Fb&include=%2A%2A", "/s/a:b/"} {
			resp := signIn(url.Values{"token": {secret}, "next": {next}}.Encode())
			if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || loc != base+next {
				t.Errorf("base %q, next %q: %d to %q, want %q", base, next, resp.StatusCode, loc, base+next)
			}
		}
	}
}

// 1,100 sign-ins with one agent's token used to push every other session
// out, the operator's included (1,024 sessions, the oldest dropped). A
// token's sign-ins now end only its own older sessions: the operator's
// and another agent's stay.
func TestAttackSignInsEvictOnlyTheirOwn(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	op, _, _ := f.st.CreateToken(ctx, satchel.TokenSpec{Operator: true})
	other, _, _ := f.st.CreateToken(ctx, satchel.TokenSpec{Agent: "research", Scope: "acme"})
	flooder, tok, _ := f.st.CreateToken(ctx, satchel.TokenSpec{Agent: "research", Scope: "acme"})
	_, oc := f.signIn(t, op)
	_, ac := f.signIn(t, other)
	var first, last *http.Cookie
	for i := range 1100 {
		resp, c := f.signIn(t, flooder)
		if c == nil {
			t.Fatalf("sign-in %d: %d", i, resp.StatusCode)
		}
		if i == 0 {
			first = c
		}
		last = c
	}
	for what, c := range map[string]*http.Cookie{"the operator's": oc, "another agent's": ac, "the flooder's newest": last} {
		if resp, _ := f.get(t, "/s/acme/", "Cookie", c.Name+"="+c.Value); resp.StatusCode != http.StatusOK {
			t.Errorf("%s session after the flood: %d, want 200", what, resp.StatusCode)
		}
	}
	if resp, _ := f.get(t, "/s/acme/", "Cookie", first.Name+"="+first.Value); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("the flooder's oldest sign-in after the flood: %d, want a redirect to sign in", resp.StatusCode)
	}
	f.in.sessions.mu.Lock()
	kept, total := f.in.sessions.byToken[tok.ID], len(f.in.sessions.m)
	f.in.sessions.mu.Unlock()
	if kept != maxSessionsPerToken || total != maxSessionsPerToken+2 {
		t.Errorf("after the flood: %d sessions of the flooder, %d in all; want %d and %d", kept, total, maxSessionsPerToken, maxSessionsPerToken+2)
	}
}

// Once the inspector holds its bound of sessions in all, an agent's
// sign-in is refused (503, saying why) rather than ending another token's
// session, and an operator's ends the oldest agent session.
func TestAttackSessionsFull(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	s := f.in.sessions
	var oldest string
	for i := range maxSessions / maxSessionsPerToken {
		for j := range maxSessionsPerToken {
			id, err := s.create("secret", satchel.Token{ID: fmt.Sprintf("agent%d", i)})
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 && j == 0 {
				oldest = id
			}
		}
	}
	agent, _, _ := f.st.CreateToken(ctx, satchel.TokenSpec{Agent: "research", Scope: "acme"})
	resp, c := f.signIn(t, agent)
	if resp.StatusCode != http.StatusServiceUnavailable || c != nil || resp.Header.Get("Retry-After") == "" {
		t.Errorf("an agent's sign-in when full: %d, cookie %v; want 503", resp.StatusCode, c)
	}
	op, _, _ := f.st.CreateToken(ctx, satchel.TokenSpec{Operator: true})
	if resp, c := f.signIn(t, op); resp.StatusCode != http.StatusSeeOther || c == nil {
		t.Fatalf("an operator's sign-in when full: %d", resp.StatusCode)
	}
	if _, ok := s.get(oldest); ok {
		t.Errorf("the oldest agent session is still there")
	}
	if n := len(s.m); n != maxSessions {
		t.Errorf("%d sessions, want %d", n, maxSessions)
	}
	// Operators fill it too: then an operator's sign-in is refused.
	for i := range maxSessions - 1 {
		if _, err := s.create("secret", satchel.Token{ID: fmt.Sprintf("op%d", i/maxSessionsPerToken), Operator: true}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.create("secret", satchel.Token{ID: "op-last", Operator: true}); !errors.Is(err, satchel.ErrLimitExceeded) {
		t.Errorf("an operator's sign-in when operators fill the bound: %v", err)
	}
}

// openStream opens a thread's live stream with cookie and returns its
// status; a stream let in stays open until the test ends.
func openStream(t *testing.T, f *fixture, cookie *http.Cookie) (int, string, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", f.srv.URL+"/s/acme/t/main/events?after=0", nil)
	if cookie != nil {
		req.Header.Set("Cookie", cookie.Name+"="+cookie.Value)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b), cancel
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Scan() // the opening comment: the stream is open
	t.Cleanup(func() { resp.Body.Close() })
	return resp.StatusCode, "", func() { cancel(); resp.Body.Close() }
}

// One session used to open 10,000 live streams (441 MB, 10,025 file
// descriptors). Streams are bounded per session (4) and per token
// (--max-streams-per-token, 8), refused with 429 past either; another
// token is not refused, and a stream that ends gives its place back.
func TestAttackLiveStreamFlood(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	flooder, _, _ := f.st.CreateToken(ctx, satchel.TokenSpec{Agent: "research", Scope: "acme"})
	other, _, _ := f.st.CreateToken(ctx, satchel.TokenSpec{Agent: "research", Scope: "acme"})
	_, s1 := f.signIn(t, flooder)
	_, s2 := f.signIn(t, flooder)
	_, s3 := f.signIn(t, other)
	var ends []context.CancelFunc
	for range maxStreamsPerSession {
		code, body, end := openStream(t, f, s1)
		if code != http.StatusOK {
			t.Fatalf("a stream within the bounds: %d %s", code, body)
		}
		ends = append(ends, end)
	}
	if code, body, _ := openStream(t, f, s1); code != http.StatusTooManyRequests || !strings.Contains(body, "too many live pages for this session: 4") {
		t.Errorf("a session's fifth stream: %d %s, want 429", code, body)
	}
	for range DefaultMaxStreamsPerToken - maxStreamsPerSession {
		if code, body, _ := openStream(t, f, s2); code != http.StatusOK {
			t.Fatalf("the token's other session: %d %s", code, body)
		}
	}
	_, s4 := f.signIn(t, flooder)
	if code, body, _ := openStream(t, f, s4); code != http.StatusTooManyRequests || !strings.Contains(body, "too many live pages for this token: 8, the limit (--max-streams-per-token)") {
		t.Errorf("the token's ninth stream: %d %s, want 429", code, body)
	}
	if code, body, _ := openStream(t, f, s3); code != http.StatusOK {
		t.Errorf("another token's stream: %d %s", code, body)
	}
	ends[0]()
	waitFor(t, "the ended stream's place", func() bool {
		code, _, _ := openStream(t, f, s1)
		return code == http.StatusOK
	})
}

// The local user (no token exists) counts as one token.
func TestAttackLiveStreamFloodLocal(t *testing.T) {
	st, err := satchel.Open(context.Background(), "memory:")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	ws, _ := st.Workspace(context.Background(), "acme", "main")
	_ = ws.Write(context.Background(), "a.md", "x")
	in, err := New(Config{Store: st, MaxStreamsPerToken: 2, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{st: st, in: in, srv: httptest.NewServer(in.Handler())}
	t.Cleanup(f.srv.Close)
	for range 2 {
		if code, body, _ := openStream(t, f, nil); code != http.StatusOK {
			t.Fatalf("the local user's stream: %d %s", code, body)
		}
	}
	if code, body, _ := openStream(t, f, nil); code != http.StatusTooManyRequests || !strings.Contains(body, "too many live pages for this token: 2") {
		t.Errorf("the local user's third stream: %d %s, want 429", code, body)
	}
}

// waitFor retries cond until it holds (at most 20 s).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("waited 20 s for %s", what)
}

// The sign-in form has --body-read-timeout to arrive: a client that
// sends the headers and then stops gets 408, and its connection closes.
func TestAttackSignInBodyTimeout(t *testing.T) {
	f := newFixture(t)
	in, err := New(Config{Store: f.st, BodyReadTimeout: 100 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(in.Handler())
	t.Cleanup(srv.Close)
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	host := srv.Listener.Addr().String()
	if _, err := conn.Write([]byte("POST /signin HTTP/1.1\r\nHost: " + host + "\r\nOrigin: http://" + host +
		"\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\ntoken=")); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(b), "did not arrive within 100ms (--body-read-timeout)") {
		t.Errorf("a sign-in form that stops: %d %q, want 408", resp.StatusCode, b)
	}
}
