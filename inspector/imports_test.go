package inspector

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The inspector is a surface: it calls the Go API (package satchel) and
// the standard library, nothing else of ours (but the rules the network
// listeners share: internal/loopback, what is local, and
// internal/bodyread, how long a body may take), no backend and no other
// module.
func TestImports(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			std := !strings.Contains(strings.Split(p, "/")[0], ".")
			if !std && p != "github.com/satchel-dev/satchel" && p != "github.com/satchel-dev/satchel/internal/loopback" &&
				p != "github.com/satchel-dev/satchel/internal/bodyread" {
				t.Errorf("%s imports %s: the inspector uses the Go API only", name, p)
			}
		}
	}
}
