package satchel_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel/internal/testenv"
)

// TestRootImports: the Go API does not pull in the surfaces' dependencies.
// A program that embeds satchel as a library gets neither the MCP SDK nor
// the Lua interpreter nor the metrics client (docs/decisions/0009).
func TestRootImports(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		testenv.Skip(t, "no go command to list the imports with")
	}
	out, err := exec.Command(gobin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps .: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 || deps[len(deps)-1] != "github.com/satchel-dev/satchel" {
		t.Fatalf("go list -deps . listed %d packages, the last %q", len(deps), deps[len(deps)-1])
	}
	forbidden := []string{
		"github.com/modelcontextprotocol/", // the MCP SDK: mcpserver only
		"github.com/yuin/gopher-lua",       // the Lua host: its own package
		"github.com/prometheus/",           // metrics: mcpserver only
		"github.com/spf13/",                // the CLI
		"github.com/schollz/progressbar",   // the benchmark command
		"github.com/go-git/",               // git access: gitrepo only
	}
	for _, d := range deps {
		for _, f := range forbidden {
			if strings.HasPrefix(d, f) {
				t.Errorf("package satchel depends on %s", d)
			}
		}
	}
}
