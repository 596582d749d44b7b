//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel"
)

// With DIR/agents/evil -> ../../outside planted, import --dir DIR used to
// write outside/agent.json. It is refused before anything is written,
// naming the link; a link that stays inside DIR is followed.
func TestAttackImportThroughLink(t *testing.T) {
	base := t.TempDir()
	proj := filepath.Join(base, "proj")
	agent := `{"name": "Evil", "stores": {}}`
	if err := os.MkdirAll(filepath.Join(proj, "agents", "evil"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, "agents", "evil", "agent.json"), []byte(agent), 0o644); err != nil {
		t.Fatal(err)
	}
	a, b := filepath.Join(base, "a.db"), filepath.Join(base, "b.db")
	mainOK(t, "", "--db", a, "--scope", "acme", "fs", "write", "x.txt", "x")
	file := filepath.Join(base, "a.satchel")
	mainOK(t, "", "--db", a, "export", "-o", file, "--dir", proj)

	dir := filepath.Join(base, "work", "dir")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(dir, "agents"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(dir, "agents", "evil")
	if err := os.Symlink(filepath.Join("..", "..", "..", "outside"), link); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(link, ".")); err != nil {
		t.Fatalf("the planted link does not lead to outside: %v", err)
	}
	code, out, errs := runMain(t, "", "--db", b, "import", file, "--dir", dir)
	if code == 0 || !strings.Contains(errs, link+" is a symbolic link that leads out of "+dir) {
		t.Fatalf("import through a link: exit %d, out %q, err %q", code, out, errs)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("the import wrote outside DIR: %v", ents)
	}
	nothingImported(t, b)

	// Writing goes through os.Root too: a link made after the check is
	// not followed out of DIR.
	if _, _, err := writeProjectFiles(dir, nil, false); err != nil {
		t.Fatal(err)
	}
	if _, _, err := writeProjectFilesFor(dir, "agents/evil/agent.json", agent); err == nil {
		t.Fatal("writeProjectFiles wrote through a link out of DIR")
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("writeProjectFiles wrote outside DIR: %v", ents)
	}

	// A link inside DIR is fine.
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("..", "real"), link); err != nil {
		t.Fatal(err)
	}
	mainOK(t, "", "--db", b, "import", file, "--dir", dir)
	if got, err := os.ReadFile(filepath.Join(dir, "real", "agent.json")); err != nil || string(got) != agent {
		t.Fatalf("agent.json through a link inside DIR: %q %v", got, err)
	}
}

func writeProjectFilesFor(dir, path, content string) ([]string, []string, error) {
	return writeProjectFiles(dir, []satchel.ProjectFile{{Path: path, Content: []byte(content)}}, false)
}
