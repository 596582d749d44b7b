package mcpserver

import (
	"context"
	"crypto/sha256"
	"sync"
	"time"

	"github.com/satchel-dev/satchel"
)

// Bounds of Config.TokenCheckInterval.
const (
	// DefaultTokenCheckInterval is how long a token's successful check is
	// reused by the HTTP server: a token revoked (by any process on the
	// database) or expired is refused at most this long afterwards.
	DefaultTokenCheckInterval = time.Second
	// MaxTokenCheckInterval is the longest Config.TokenCheckInterval
	// allowed: revocation takes effect within a second.
	MaxTokenCheckInterval = time.Second
	// tokenCacheEntries bounds the tokens remembered at once.
	tokenCacheEntries = 4096
)

// tokenCache remembers the tokens whose check succeeded, by the hash of
// their secret, for at most ttl each (and never past the token's expiry):
// a request within that time is not checked against the store again.
// Refusals are never remembered: a token made a moment ago works at once,
// and a wrong secret costs the store a lookup, as before.
type tokenCache struct {
	ttl time.Duration // <= 0: nothing is remembered
	now func() time.Time

	mu sync.Mutex
	m  map[[sha256.Size]byte]tokenEntry
}

type tokenEntry struct {
	tok   satchel.Token
	until time.Time // by now(); the entry is not used from then on
}

func newTokenCache(ttl time.Duration, now func() time.Time) *tokenCache {
	return &tokenCache{ttl: ttl, now: now, m: map[[sha256.Size]byte]tokenEntry{}}
}

// authenticate returns the token of secret: remembered if it was checked
// less than ttl ago, else checked by check (Store.Authenticate) and, when
// it is valid, remembered.
func (c *tokenCache) authenticate(ctx context.Context, secret string, check func(context.Context, string) (satchel.Token, error)) (satchel.Token, error) {
	if c.ttl <= 0 {
		return check(ctx, secret)
	}
	key := sha256.Sum256([]byte(secret))
	c.mu.Lock()
	e, ok := c.m[key]
	c.mu.Unlock()
	if ok && c.now().Before(e.until) {
		return e.tok, nil
	}
	start := c.now()
	t, err := check(ctx, secret)
	if err != nil {
		if ok {
			c.mu.Lock()
			delete(c.m, key)
			c.mu.Unlock()
		}
		return t, err
	}
	// From the time the check started: a revocation the check just missed
	// is seen at most ttl after it.
	until := start.Add(c.ttl)
	if !t.Expires.IsZero() && t.Expires.Before(until) {
		until = t.Expires
	}
	c.mu.Lock()
	if len(c.m) >= tokenCacheEntries {
		now := c.now()
		for k, old := range c.m {
			if !now.Before(old.until) {
				delete(c.m, k)
			}
		}
		if len(c.m) >= tokenCacheEntries {
			clear(c.m)
		}
	}
	c.m[key] = tokenEntry{tok: t, until: until}
	c.mu.Unlock()
	return t, nil
}

// authenticateToken checks a bearer token's secret, through the cache.
func (s *Server) authenticateToken(ctx context.Context, secret string) (satchel.Token, error) {
	return s.tokens.authenticate(ctx, secret, s.cfg.Store.Authenticate)
}
