// Package frameworks holds examples in other languages that connect agent
// frameworks to satchel over MCP; its test checks that each parses and
// names only flags satchel serve has.
package frameworks

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/satchel-dev/satchel/internal/cli"
	"github.com/satchel-dev/satchel/internal/testenv"
)

// serveFlags are the flags `satchel serve --help` lists.
func serveFlags(t *testing.T) map[string]bool {
	t.Helper()
	var out, errb bytes.Buffer
	if code := cli.Main([]string{"serve", "--help"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("satchel serve --help: exit %d: %s", code, errb.String())
	}
	flags := map[string]bool{}
	for _, m := range regexp.MustCompile(`--([a-z][a-z-]*)`).FindAllStringSubmatch(out.String(), -1) {
		flags[m[1]] = true
	}
	return flags
}

// checkFlags fails for a --flag in src that satchel serve does not have.
func checkFlags(t *testing.T, name, src string, flags map[string]bool) {
	t.Helper()
	for _, m := range regexp.MustCompile(`["'](--[a-z][a-z-]*)["']`).FindAllStringSubmatch(src, -1) {
		if !flags[strings.TrimPrefix(m[1], "--")] {
			t.Errorf("%s passes %s, which satchel serve does not have", name, m[1])
		}
	}
}

func read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestMCPConfigs parses the client configurations and checks that they
// start satchel serve with absolute paths and flags it has.
func TestMCPConfigs(t *testing.T) {
	flags := serveFlags(t)
	files, _ := filepath.Glob(filepath.Join("..", "mcp", "*.json"))
	if len(files) == 0 {
		t.Fatal("no configurations in examples/mcp")
	}
	for _, f := range files {
		var cfg struct {
			MCPServers map[string]server `json:"mcpServers"`
			Servers    map[string]server `json:"servers"`
		}
		dec := json.NewDecoder(strings.NewReader(read(t, f)))
		if err := dec.Decode(&cfg); err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		servers := cfg.MCPServers
		if servers == nil {
			servers = cfg.Servers
		}
		if len(servers) == 0 {
			t.Errorf("%s: no servers", f)
		}
		for name, s := range servers {
			if s.URL != "" {
				if !strings.HasSuffix(s.URL, "/mcp") || !strings.HasPrefix(s.Headers["Authorization"], "Bearer ") {
					t.Errorf("%s: %s: an HTTP server at %q with Authorization %q", f, name, s.URL, s.Headers["Authorization"])
				}
				continue
			}
			if !filepath.IsAbs(s.Command) || len(s.Args) == 0 || s.Args[0] != "serve" {
				t.Errorf("%s: %s: command %q %q is not an absolute satchel serve", f, name, s.Command, s.Args)
			}
			for i, a := range s.Args {
				if (a == "--db" || a == "--dir") && (i+1 == len(s.Args) || !filepath.IsAbs(s.Args[i+1])) {
					t.Errorf("%s: %s: %s is not given an absolute path", f, name, a)
				}
				if strings.HasPrefix(a, "--") && !flags[strings.TrimPrefix(a, "--")] {
					t.Errorf("%s: %s: satchel serve has no flag %s", f, name, a)
				}
			}
		}
	}
}

type server struct {
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
}

// TestPython parses the Python examples with python3's own parser.
func TestPython(t *testing.T) {
	flags := serveFlags(t)
	py, err := exec.LookPath("python3")
	if err != nil {
		testenv.Skip(t, "no python3 to parse the Python examples with")
	}
	files, _ := filepath.Glob("*.py")
	if len(files) < 2 {
		t.Fatalf("Python examples: %v", files)
	}
	for _, f := range files {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		out, err := exec.CommandContext(ctx, py, "-c", "import ast, sys; ast.parse(open(sys.argv[1]).read(), sys.argv[1])", f).CombinedOutput()
		cancel()
		if err != nil {
			t.Errorf("%s does not parse: %v\n%s", f, err, out)
		}
		checkFlags(t, f, read(t, f), flags)
	}
}

// TestTypeScript checks the TypeScript examples, written so that they are
// also JavaScript, with node --check.
func TestTypeScript(t *testing.T) {
	flags := serveFlags(t)
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.Skip(t, "no node to check the TypeScript examples with")
	}
	files, _ := filepath.Glob("*.ts")
	if len(files) == 0 {
		t.Fatal("no TypeScript examples")
	}
	for _, f := range files {
		src := read(t, f)
		// node checks JavaScript: the examples carry no type annotations,
		// so as an ES module they are the same program.
		mjs := filepath.Join(t.TempDir(), strings.TrimSuffix(f, ".ts")+".mjs")
		if err := os.WriteFile(mjs, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		out, err := exec.CommandContext(ctx, node, "--check", mjs).CombinedOutput()
		cancel()
		if err != nil {
			t.Errorf("%s does not parse: %v\n%s", f, err, out)
		}
		checkFlags(t, f, src, flags)
	}
}
