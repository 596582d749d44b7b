package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/testenv"
)

// TestBinary builds cmd/satchel and takes it on a short tour, checking the
// exit codes a shell sees.
func TestBinary(t *testing.T) {
	bin := buildBinary(t)
	tmp := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	db := "memory:"
	persistent := false
	if s, err := satchel.Open(ctx, filepath.Join(tmp, "tour.db")); err == nil {
		_ = s.Close()
		db, persistent = filepath.Join(tmp, "tour.db"), true
	} else {
		t.Logf("SQLite backend not linked yet (%v): touring a memory store, one run at a time", err)
	}

	type step struct {
		stdin string
		args  []string
		code  int
		out   string // exact stdout, when persistent or not needing state
		err   string // exact stderr ("" when none); "*" skips the check
		state bool   // needs the earlier steps' state
	}
	steps := []step{
		{args: []string{"--help"}, code: 0, out: "*", err: ""},
		{stdin: "one\ntwo\n", args: []string{"fs", "write", "a.md"}},
		{args: []string{"fs", "read", "a.md", "--start", "2"}, out: "two\n", state: true},
		{args: []string{"fs", "exists", "a.md"}, out: "true\n", state: true},
		{args: []string{"fs", "exists", "b.md"}, out: "false\n"},
		{args: []string{"fs", "read", "b.md"}, code: 1, err: "file not found: b.md\n"},
		{args: []string{"fs", "read", "../x"}, code: 1, err: `invalid path "../x": contains a . or .. segment` + "\n"},
		{args: []string{"retain", "--max-commits", "0"}, code: 1, err: "maxCommits must be at least 1, was 0\n"},
		{args: []string{"checkpoint", "v1"}, out: "*", state: true},
		{args: []string{"fs", "glob", "*.md", "--json"}, out: `["a.md"]` + "\n", state: true},
		{stdin: "<x>", args: []string{"untrusted", "--nonce", "00000000000000000000000000000000"}, out: "*"},
		{args: []string{"bogus"}, code: 2, out: "", err: "*"},
		{args: []string{"fs", "read"}, code: 2, out: "", err: "*"},
		{args: []string{"fs", "read", "a.md", "--nope"}, code: 2, out: "", err: "*"},
	}
	for _, s := range steps {
		if s.state && !persistent {
			continue
		}
		cmd := exec.CommandContext(ctx, bin, append([]string{"--db", db}, s.args...)...)
		cmd.Stdin = strings.NewReader(s.stdin)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		cmd.Env = append(os.Environ(), "SATCHEL_DB=")
		err := cmd.Run()
		code := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatalf("satchel %q: %v", s.args, err)
		}
		if code != s.code {
			t.Errorf("satchel %q: exit %d, want %d (stderr %q)", s.args, code, s.code, stderr.String())
		}
		if s.out != "*" && stdout.String() != s.out {
			t.Errorf("satchel %q: stdout %q, want %q", s.args, stdout.String(), s.out)
		}
		if s.err != "*" && stderr.String() != s.err {
			t.Errorf("satchel %q: stderr %q, want %q", s.args, stderr.String(), s.err)
		}
		if s.code == 2 && !strings.Contains(stderr.String(), "Usage:") && !strings.Contains(stderr.String(), "--help' for its commands.") {
			t.Errorf("satchel %q: a usage error without the usage: %q", s.args, stderr.String())
		}
	}

	// satchel serve < requests.jsonl answers every request before it exits.
	in, err := os.Open(filepath.Join("testdata", "requests.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	serve := exec.CommandContext(ctx, bin, "--db", filepath.Join(tmp, "pipe.db"), "serve")
	serve.Stdin = in
	var stderr bytes.Buffer
	serve.Stderr = &stderr
	out, err := serve.Output()
	if err != nil {
		t.Fatalf("serve < requests.jsonl: %v\n%s", err, stderr.String())
	}
	for _, id := range []string{`"id":1,"result"`, `"id":2,"result"`, `"id":3,"result"`, `"id":4,"result"`} {
		if !bytes.Contains(out, []byte(id)) {
			t.Errorf("serve < requests.jsonl: no %s in %q", id, out)
		}
	}
}

// buildBinary builds cmd/satchel into a temporary directory.
func buildBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		testenv.Skip(t, "no go command to build the binary with")
	}
	bin := filepath.Join(t.TempDir(), "satchel")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, gobin, "build", "-o", bin, "./cmd/satchel")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
