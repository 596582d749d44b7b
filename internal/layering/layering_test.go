package layering

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel/internal/testenv"
)

// moduleImports lists, with go list -deps, every package of the module and
// the packages of the module each imports (built code, not tests).
func moduleImports(t *testing.T) map[string][]string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		testenv.Skip(t, "no go command: %v", err)
	}
	touchSources(t)
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", Module+"/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	rel := func(p string) (string, bool) {
		if p == Module {
			return "", true
		}
		r, ok := strings.CutPrefix(p, Module+"/")
		return r, ok
	}
	imports := make(map[string][]string)
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		from, ok := rel(f[0])
		if !ok {
			continue
		}
		imports[from] = nil
		for _, p := range f[1:] {
			if to, ok := rel(p); ok {
				imports[from] = append(imports[from], to)
			}
		}
	}
	return imports
}

// touchSources stats every Go file of the module (two directories up),
// so that go test's cache, which sees what the test reads but not what go
// list reads, runs the test again when an import changes.
func touchSources(t *testing.T) {
	t.Helper()
	err := filepath.WalkDir(filepath.Join("..", ".."), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != filepath.Join("..", "..") && (d.Name() == "testdata" || d.Name() == "node_modules" || d.Name()[0] == '.') {
			return filepath.SkipDir
		}
		if !d.IsDir() && (filepath.Ext(p) == ".go" || d.Name() == "go.mod") {
			_, err = os.Stat(p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestLayers checks every import between the module's packages against
// the table.
func TestLayers(t *testing.T) {
	imports := moduleImports(t)
	if _, ok := imports["internal/engine"]; !ok {
		t.Fatalf("go list listed no internal/engine: %v", imports)
	}
	for _, msg := range Check(imports) {
		t.Error(msg)
	}
	for p := range Packages {
		tree, sub := strings.CutSuffix(p, "/...")
		found := false
		for have := range imports {
			if have == tree || sub && strings.HasPrefix(have, tree+"/") {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("layering.Packages places %q, which does not exist: remove it", p)
		}
	}
}

// TestCheckRefuses plants imports the layers forbid, over the module's
// real imports, and checks that each is reported.
func TestCheckRefuses(t *testing.T) {
	imports := moduleImports(t)
	for _, c := range []struct{ from, to, want string }{
		{"mcpserver", "backend/sqlite", "mcpserver (surface) imports backend/sqlite (backends)"},
		{"internal/cli", "backend", "internal/cli (surface) imports backend (contract)"},
		{"internal/engine", "", "internal/engine (engine) imports satchel (root) (root)"},
		{"backend/memory", "", "backend/memory (backends) imports satchel (root) (root)"},
		{"internal/errs", "backend", "internal/errs (base) imports backend (contract)"},
		{"internal/lines", "backend", "internal/lines (semantics) imports backend (contract)"},
		{"internal/new", "internal/errs", "package internal/new is in no layer"},
	} {
		planted := make(map[string][]string, len(imports)+1)
		for k, v := range imports {
			planted[k] = v
		}
		planted[c.from] = append(append([]string(nil), planted[c.from]...), c.to)
		bad := Check(planted)
		found := false
		for _, m := range bad {
			found = found || strings.HasPrefix(m, c.want)
		}
		if !found {
			t.Errorf("%s -> %q planted: want a report %q, got %q", c.from, c.to, c.want, bad)
		}
	}
}
