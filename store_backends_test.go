package satchel

import (
	"strings"
	"testing"
)

// FuzzURLScheme: urlScheme finds a scheme only where the dsn starts with
// one as RFC 3986 spells it, followed by "://"; what it does not take for
// a URL is opened as a SQLite path.
func FuzzURLScheme(f *testing.F) {
	for _, s := range []string{"mysql://x", "postgres://h/db", "file:///a/b.db", "./satchel.db", "C://x", "a+b.c-d://", "1x://y", "://x", "x:/y", "dir/a://b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, dsn string) {
		scheme, ok := urlScheme(dsn)
		if !ok {
			if scheme != "" {
				t.Fatalf("urlScheme(%q) = %q, false", dsn, scheme)
			}
			return
		}
		if !strings.HasPrefix(dsn, scheme+"://") || scheme == "" {
			t.Fatalf("urlScheme(%q) = %q, not the dsn's start", dsn, scheme)
		}
		for i, c := range scheme {
			letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
			if i == 0 && !letter || !letter && !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.') {
				t.Fatalf("urlScheme(%q) = %q, which is no scheme", dsn, scheme)
			}
		}
	})
}
