//go:build unix

package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServeScriptsSkipsFIFO: a FIFO among the scripts (which blocked
// serve forever) and a link leading out of the directory are skipped,
// logged by name, and refused by run_script naming what they are.
func TestServeScriptsSkipsFIFO(t *testing.T) {
	h := newHarness(t)
	dir := t.TempDir()
	writeScript(t, dir, "a.lua", `print("a")`)
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.lua"), 0o600); err != nil {
		t.Skipf("cannot make a FIFO: %v", err)
	}
	secret := writeScript(t, t.TempDir(), "secret.lua", `print("secret")`)
	if err := os.Symlink(secret, filepath.Join(dir, "out.lua")); err != nil {
		t.Fatal(err)
	}
	stdin, stdout, stderr, wait := h.serving(context.Background(), "serve", "--scripts", dir)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(),
		&mcp.IOTransport{Reader: stdout, Writer: stdin}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr)
	}
	for _, want := range []string{
		`"msg":"script not read","entry":"fifo.lua: skipped: a FIFO, not a regular file"`,
		`"msg":"script not read","entry":"out.lua: skipped: a link leading out of the scripts directory"`,
	} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("the log does not say %s:\n%s", want, stderr)
		}
	}
	for script, want := range map[string]string{
		"a":    "a\n",
		"fifo": "script fifo.lua is a FIFO, not a regular file",
		"out":  "script out.lua is a link leading out of the scripts directory",
	} {
		r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_script", Arguments: map[string]any{"script": script}})
		if err != nil {
			t.Fatal(err)
		}
		if text := r.Content[0].(*mcp.TextContent).Text; text != want || r.IsError != (script != "a") {
			t.Errorf("run_script %s: %q (error %v), want %q", script, text, r.IsError, want)
		}
	}
	_ = cs.Close()
	if code := wait(); code != 0 {
		t.Errorf("serve exited %d: %s", code, stderr)
	}
}
