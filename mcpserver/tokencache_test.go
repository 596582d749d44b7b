package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/backend/postgres/postgrestest"
	"github.com/satchel-dev/satchel/internal/sqlitetest"
	"github.com/satchel-dev/satchel/internal/testenv"
)

// fakeClock is a clock the test moves.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// The cache's mechanism, on a clock the test moves: a check is reused for
// less than the interval, never past the token's expiry; refusals are not
// remembered; a negative interval checks every time.
func TestTokenCacheBound(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	const ttl = time.Second
	var checks int
	valid := map[string]satchel.Token{"a": {ID: "a"}, "b": {ID: "b"}}
	check := func(_ context.Context, secret string) (satchel.Token, error) {
		checks++
		if tok, ok := valid[secret]; ok {
			return tok, nil
		}
		return satchel.Token{}, &satchel.Error{Kind: satchel.ErrAccessDenied, Msg: "token " + secret + " was revoked"}
	}
	c := newTokenCache(ttl, clock.now)
	auth := func(secret string) error {
		_, err := c.authenticate(context.Background(), secret, check)
		return err
	}
	if err := auth("a"); err != nil || checks != 1 {
		t.Fatalf("first check: %v, %d checks", err, checks)
	}
	// Revoked: the check is reused until the interval has passed since the
	// check, and not a moment longer.
	delete(valid, "a")
	clock.advance(ttl - time.Nanosecond)
	if err := auth("a"); err != nil || checks != 1 {
		t.Errorf("within the interval: %v, %d checks (want the remembered check)", err, checks)
	}
	clock.advance(time.Nanosecond)
	if err := auth("a"); err == nil || !errors.Is(err, satchel.ErrAccessDenied) || checks != 2 {
		t.Errorf("at the interval's end: %v, %d checks (want refused by a new check)", err, checks)
	}
	// A refusal is not remembered: the token is checked again every time.
	if err := auth("a"); err == nil || checks != 3 {
		t.Errorf("after a refusal: %v, %d checks", err, checks)
	}
	valid["a"] = satchel.Token{ID: "a"}
	if err := auth("a"); err != nil || checks != 4 {
		t.Errorf("a token valid again: %v, %d checks", err, checks)
	}

	// An expiring token is remembered until its expiry at most.
	valid["e"] = satchel.Token{ID: "e", Expires: clock.now().Add(ttl / 4)}
	if err := auth("e"); err != nil || checks != 5 {
		t.Fatalf("expiring token: %v, %d checks", err, checks)
	}
	delete(valid, "e") // the store now says expired
	clock.advance(ttl / 4)
	if err := auth("e"); err == nil || checks != 6 {
		t.Errorf("at its expiry: %v, %d checks (want checked again, refused)", err, checks)
	}

	// The interval counts from when the check began, not when it ended: a
	// slow check does not lengthen the bound.
	slow := func(ctx context.Context, secret string) (satchel.Token, error) {
		clock.advance(ttl / 2)
		return check(ctx, secret)
	}
	if _, err := c.authenticate(context.Background(), "b", slow); err != nil {
		t.Fatal(err)
	}
	delete(valid, "b")
	clock.advance(ttl / 2)
	if err := auth("b"); err == nil {
		t.Errorf("b: still accepted %s after its check began", ttl)
	}

	// Every request is checked with a negative interval.
	n := checks
	off := newTokenCache(-1, clock.now)
	for range 3 {
		if _, err := off.authenticate(context.Background(), "a", check); err != nil {
			t.Fatal(err)
		}
	}
	if checks != n+3 {
		t.Errorf("negative interval: %d checks for 3 requests", checks-n)
	}
}

// The cache stays bounded however many tokens pass.
func TestTokenCacheEntriesBounded(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	c := newTokenCache(time.Second, clock.now)
	ok := func(_ context.Context, s string) (satchel.Token, error) { return satchel.Token{ID: s}, nil }
	for i := range tokenCacheEntries + 10 {
		tok, err := c.authenticate(context.Background(), fmt.Sprint(i), ok)
		if err != nil || tok.ID != fmt.Sprint(i) {
			t.Fatalf("token %d: %v %v", i, tok, err)
		}
	}
	if n := len(c.m); n > tokenCacheEntries {
		t.Errorf("%d entries, more than %d", n, tokenCacheEntries)
	}
}

func TestTokenCheckIntervalRefusedOverBound(t *testing.T) {
	_, err := New(Config{Store: newStore(t), TokenCheckInterval: MaxTokenCheckInterval + time.Millisecond})
	want := "the token check interval must be at most 1s (revocation takes effect within it), was 1.001s"
	if !errors.Is(err, satchel.ErrInvalidArgument) || err == nil || err.Error() != want {
		t.Errorf("New with a 1.001s interval: %v, want %q", err, want)
	}
}

// openShared returns two stores on one database (as two processes would
// open it): a SQLite file, or a fresh PostgreSQL schema. A memory
// database has no second opener: both are the same store.
func openShared(t *testing.T, backend string) (*satchel.Store, *satchel.Store) {
	t.Helper()
	ctx := context.Background()
	var url string
	switch backend {
	case "memory":
		st := newStore(t)
		return st, st
	case "sqlite":
		url = sqlitetest.NewFileAt(t, filepath.Join(t.TempDir(), "shared.db"))
	case "postgres":
		base := testenv.PostgresURL(t)
		url = postgrestest.Schema(t, base, postgrestest.Name("mcptokens"))
	}
	open := func() *satchel.Store {
		st, err := satchel.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		return st
	}
	a := open()
	return a, open()
}

// A token revoked by another process on the database: the server, whose
// clock the test moves, keeps its check for less than the interval, then
// refuses the token's session and any new one.
func TestTokenRevokedElsewhereWithinInterval(t *testing.T) {
	for _, backend := range []string{"memory", "sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			served, other := openShared(t, backend)
			clock := &fakeClock{t: time.Now()}
			f := newHTTP(t, Config{Store: served})
			f.s.tokens.now = clock.now
			secret, tok := token(t, other, satchel.TokenSpec{Agent: "writer", Scope: "acme"})
			c := mustDial(t, f.url, secret, "")
			c.ok("write_file", map[string]any{"path": "a.md", "content": "a"})
			if err := other.RevokeToken(context.Background(), tok.ID); err != nil {
				t.Fatal(err)
			}
			// Within the interval the remembered check still lets it in.
			clock.advance(DefaultTokenCheckInterval - time.Millisecond)
			c.ok("glob", map[string]any{"pattern": "*"})
			clock.advance(time.Millisecond)
			if _, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "glob", Arguments: map[string]any{"pattern": "*"}}); err == nil {
				t.Errorf("the revoked token's session still works %s after its last check", DefaultTokenCheckInterval)
			}
			code, body, _ := post(t, f.url+MCPPath, secret, nil, initialize)
			if code != http.StatusUnauthorized || body != "token "+tok.ID+" was revoked" {
				t.Errorf("a new session with the revoked token: %d %q", code, body)
			}
		})
	}
}

// The same on the real clock, end to end: after a token is revoked by
// another process, no call that begins more than the interval later is
// let in. The test calls until the token is refused (or 10 s pass).
func TestTokenRevocationTakesEffectWithinInterval(t *testing.T) {
	served, other := openShared(t, "sqlite")
	f := newHTTP(t, Config{Store: served})
	secret, tok := token(t, other, satchel.TokenSpec{Agent: "writer", Scope: "acme"})
	c := mustDial(t, f.url, secret, "")
	c.ok("write_file", map[string]any{"path": "a.md", "content": "a"})
	c.ok("glob", map[string]any{"pattern": "*"}) // remembered now
	if err := other.RevokeToken(context.Background(), tok.ID); err != nil {
		t.Fatal(err)
	}
	revoked := time.Now()
	deadline := revoked.Add(10 * time.Second)
	for {
		start := time.Now()
		_, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "glob", Arguments: map[string]any{"pattern": "*"}})
		if err != nil {
			break // refused
		}
		if late := start.Sub(revoked); late >= DefaultTokenCheckInterval {
			t.Fatalf("a call begun %s after the revocation was let in (the bound is %s)", late, DefaultTokenCheckInterval)
		}
		if time.Now().After(deadline) {
			t.Fatal("the revoked token is still accepted")
		}
	}
	code, body, _ := post(t, f.url+MCPPath, secret, nil, initialize)
	if code != http.StatusUnauthorized || body != "token "+tok.ID+" was revoked" {
		t.Errorf("a new session with the revoked token: %d %q", code, body)
	}
}
