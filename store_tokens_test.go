package satchel_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/memory"
	"github.com/satchel-dev/satchel/internal/backendof"
)

// clockBackend is a memory backend whose clock the test sets.
type clockBackend struct {
	backend.Backend
	mu  sync.Mutex
	now time.Time
}

func (b *clockBackend) Now(context.Context) (time.Time, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.now, nil
}

func (b *clockBackend) advance(d time.Duration) {
	b.mu.Lock()
	b.now = b.now.Add(d)
	b.mu.Unlock()
}

func newClockStore(t *testing.T) (*satchel.Store, *clockBackend) {
	t.Helper()
	b := &clockBackend{Backend: memory.New(), now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	s := satchel.New(b)
	t.Cleanup(func() { _ = s.Close() })
	return s, b
}

func TestTokens(t *testing.T) {
	ctx := context.Background()
	s, clock := newClockStore(t)

	secret, tok, err := s.CreateToken(ctx, satchel.TokenSpec{Agent: "research", Scope: "acme", Thread: "main", Expires: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, "stk_"+tok.ID+"_") || len(secret) != 4+16+1+43 {
		t.Errorf("secret %q does not have the shape stk_<id>_<43 base64url>", secret)
	}
	if tok.Agent != "research" || tok.Scope != "acme" || tok.Thread != "main" ||
		!tok.Created.Equal(clock.now) || !tok.Expires.Equal(clock.now.Add(time.Hour)) {
		t.Errorf("token = %+v", tok)
	}

	// Only the hash is stored: the secret appears nowhere in the settings.
	m, err := backendof.Store(s).Settings(ctx, "", "", "token:")
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 1 {
		t.Fatalf("settings = %v, want one token", m)
	}
	for _, v := range m {
		if strings.Contains(string(v), secret[len("stk_")+17:]) {
			t.Errorf("the stored token holds its secret: %s", v)
		}
	}

	got, err := s.Authenticate(ctx, secret)
	if err != nil || got != tok {
		t.Fatalf("Authenticate = %+v, %v; want %+v", got, err, tok)
	}

	// Wrong, malformed and unknown secrets.
	other := secret[:len(secret)-1] + "A"
	if other == secret {
		other = secret[:len(secret)-1] + "B"
	}
	for _, bad := range []string{"", "stk_", "nope", other, "stk_0123456789abcdef_" + secret[len(secret)-43:], strings.ToUpper(secret)} {
		_, err := s.Authenticate(ctx, bad)
		if !errors.Is(err, satchel.ErrAccessDenied) || err.Error() != "invalid token" {
			t.Errorf("Authenticate(%q) = %v, want invalid token (access denied)", bad, err)
		}
	}

	// Expiry by the backend's clock.
	clock.advance(time.Hour - time.Second)
	if _, err := s.Authenticate(ctx, secret); err != nil {
		t.Errorf("before expiry: %v", err)
	}
	clock.advance(time.Second)
	_, err = s.Authenticate(ctx, secret)
	if want := "token " + tok.ID + " expired at 2026-01-02T04:04:05Z"; !errors.Is(err, satchel.ErrAccessDenied) || err == nil || err.Error() != want {
		t.Errorf("after expiry: %v, want %q", err, want)
	}

	// A token without expiry, then revoked.
	secret2, tok2, err := s.CreateToken(ctx, satchel.TokenSpec{Agent: "writer", Scope: "beta"})
	if err != nil {
		t.Fatal(err)
	}
	if !tok2.Expires.IsZero() || tok2.Thread != "" {
		t.Errorf("token 2 = %+v", tok2)
	}
	clock.advance(1000 * time.Hour)
	if _, err := s.Authenticate(ctx, secret2); err != nil {
		t.Errorf("token without expiry: %v", err)
	}
	if err := s.RevokeToken(ctx, tok2.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeToken(ctx, tok2.ID); err != nil {
		t.Errorf("revoking twice: %v", err)
	}
	_, err = s.Authenticate(ctx, secret2)
	if !errors.Is(err, satchel.ErrAccessDenied) || err.Error() != "token "+tok2.ID+" was revoked" {
		t.Errorf("revoked: %v", err)
	}
	err = s.RevokeToken(ctx, "0000000000000000")
	if !errors.Is(err, satchel.ErrNotFound) || err.Error() != "token not found: 0000000000000000" {
		t.Errorf("revoking an unknown token: %v", err)
	}

	list, err := s.Tokens(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != tok.ID || list[1].ID != tok2.ID || !list[1].Revoked.Equal(clock.now) || !list[0].Revoked.IsZero() {
		t.Errorf("Tokens = %+v", list)
	}
}

func TestCreateTokenRefusals(t *testing.T) {
	ctx := context.Background()
	s, _ := newClockStore(t)
	_, _, err := s.CreateToken(ctx, satchel.TokenSpec{Agent: "Bad", Scope: "", Thread: "123", Expires: -time.Second})
	want := `invalid agent name "Bad": a name is lowercase letters, digits, - and _, starting with a letter, at most 48 characters
invalid scope "": must be 1 to 128 letters, digits, '.', '_', '-', '@' or ':'
invalid thread name "123": must not be all digits (a number means a sequence)
expires must not be negative, was -1s`
	if !errors.Is(err, satchel.ErrInvalidArgument) || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	if list, _ := s.Tokens(ctx); len(list) != 0 {
		t.Errorf("a refused token was stored: %+v", list)
	}
}

func TestCheckAgentName(t *testing.T) {
	for name, ok := range map[string]bool{
		"a": true, "research-notes_2": true, strings.Repeat("a", 48): true,
		"": false, "1a": false, "A": false, "a.b": false, strings.Repeat("a", 49): false, "-a": false,
	} {
		if err := satchel.ValidAgentName(name); (err == nil) != ok {
			t.Errorf("ValidAgentName(%q) = %v", name, err)
		}
	}
}

func TestOperatorTokens(t *testing.T) {
	ctx := context.Background()
	s, _ := newClockStore(t)
	secret, tok, err := s.CreateToken(ctx, satchel.TokenSpec{Operator: true})
	if err != nil || !tok.Operator || tok.Scope != "" || tok.Agent != "" {
		t.Fatalf("CreateToken(Operator) = %+v, %v", tok, err)
	}
	got, err := s.Authenticate(ctx, secret)
	if err != nil || !got.Operator {
		t.Errorf("Authenticate(operator) = %+v, %v", got, err)
	}
	for _, spec := range []satchel.TokenSpec{
		{Operator: true, Scope: "acme"}, {Operator: true, Agent: "a"}, {Operator: true, Thread: "main"},
	} {
		_, _, err := s.CreateToken(ctx, spec)
		if !errors.Is(err, satchel.ErrInvalidArgument) || !strings.Contains(err.Error(), "an operator token sees every scope") {
			t.Errorf("CreateToken(%+v) = %v, want a refusal", spec, err)
		}
	}
	// Agent tokens are not operators.
	_, agent, err := s.CreateToken(ctx, satchel.TokenSpec{Agent: "a", Scope: "acme"})
	if err != nil || agent.Operator {
		t.Errorf("an agent token: %+v, %v", agent, err)
	}
}

// UsableTokens counts the tokens neither revoked nor expired.
func TestUsableTokens(t *testing.T) {
	ctx := context.Background()
	st, err := satchel.Open(ctx, "memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	count := func(want int) {
		t.Helper()
		if n, err := st.UsableTokens(ctx); err != nil || n != want {
			t.Fatalf("UsableTokens = %d, %v; want %d", n, err, want)
		}
	}
	count(0)
	_, a, err := st.CreateToken(ctx, satchel.TokenSpec{Agent: "a", Scope: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.CreateToken(ctx, satchel.TokenSpec{Agent: "b", Scope: "acme", Expires: time.Nanosecond}); err != nil {
		t.Fatal(err)
	}
	count(1) // the second expired at once
	if err := st.RevokeToken(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	count(0)
}
