package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/satchel-dev/satchel/internal/testenv"
	"github.com/satchel-dev/satchel/internal/version"
)

func TestVersion(t *testing.T) {
	h := newHarness(t)
	want := version.Get().String()
	if got := h.ok("--version"); got != "satchel "+want+"\n" {
		t.Errorf("--version printed %q, want %q", got, "satchel "+want+"\n")
	}
	out := h.ok("version")
	if first, _, _ := strings.Cut(out, "\n"); first != "satchel "+want {
		t.Errorf("version's first line is %q, want %q", first, "satchel "+want)
	}
	if !strings.Contains(out, "\ncommit ") {
		t.Errorf("version does not say the commit: %q", out)
	}
	var in version.Info
	if err := json.Unmarshal([]byte(h.ok("version", "--json")), &in); err != nil || in.Version == "" {
		t.Errorf("version --json: %+v, %v", in, err)
	}
	if serverVersion() != want {
		t.Errorf("the MCP server reports %q, satchel version %q", serverVersion(), want)
	}
}

// TestVersionFromVCS builds the binary with version control information
// (the machine may set GOFLAGS=-buildvcs=false) and checks that it names
// the checkout's commit.
func TestVersionFromVCS(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		testenv.Skip(t, "no go command to build the binary with")
	}
	gitbin, err := exec.LookPath("git")
	if err != nil {
		testenv.Skip(t, "no git command")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	root := filepath.Join("..", "..")
	if fi, err := os.Stat(filepath.Join(root, ".git")); err != nil || !fi.IsDir() {
		// The go command finds a checkout by a .git directory only: it
		// records nothing in a git worktree (whose .git is a file).
		testenv.Skip(t, "no .git directory at the module's root (not a clone, or a git worktree)")
	}
	rev, err := exec.CommandContext(ctx, gitbin, "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		testenv.Skip(t, "not a git checkout: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "satchel")
	build := exec.CommandContext(ctx, gobin, "build", "-buildvcs=true", "-o", bin, "./cmd/satchel")
	build.Dir = root
	build.Env = append(os.Environ(), "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.CommandContext(ctx, bin, "version", "--json").Output()
	if err != nil {
		t.Fatalf("satchel version: %v", err)
	}
	var in version.Info
	if err := json.Unmarshal(out, &in); err != nil {
		t.Fatalf("satchel version --json: %v: %q", err, out)
	}
	if in.Commit != strings.TrimSpace(string(rev)) {
		t.Errorf("satchel version says commit %q, the checkout is at %q", in.Commit, strings.TrimSpace(string(rev)))
	}
	if len(in.Commit) < 12 {
		return
	}
	short, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil || !strings.Contains(string(short), in.Commit[:12]) {
		t.Errorf("satchel --version = %q (%v): does not name commit %s", short, err, in.Commit[:12])
	}
}
