package inspector

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

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
