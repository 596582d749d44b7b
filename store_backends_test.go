package satchel

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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

// A file that is not a SQLite database, and a PostgreSQL server that
// cannot be reached, are named in the operator's terms, once.
func TestOpenWrongDatabase(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	name := filepath.Join(dir, "notdb.txt")
	if err := os.WriteFile(name, []byte(strings.Repeat("not a database\n", 20)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, opts := range [][]Option{nil, {ReadOnly()}} {
		_, err := Open(ctx, name, opts...)
		if err == nil || err.Error() != name+" is not a satchel database (SQLite)" || !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("Open(notdb.txt, %d options) = %v", len(opts), err)
		}
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	_, err = Open(ctx, "postgres://postgres@"+addr+"/test?connect_timeout=5")
	if want := "cannot connect to PostgreSQL at " + addr + ": connection refused"; err == nil || err.Error() != want {
		t.Errorf("Open(closed port) = %v, want %q", err, want)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("Open(closed port) = %v, not ECONNREFUSED", err)
	}
}
