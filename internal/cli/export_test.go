package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runMain runs the command as a user does, with its own databases.
func runMain(t *testing.T, stdin string, args ...string) (code int, out, errs string) {
	t.Helper()
	var o, e bytes.Buffer
	code = Main(args, strings.NewReader(stdin), &o, &e)
	return code, o.String(), e.String()
}

func mainOK(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	code, out, errs := runMain(t, stdin, args...)
	if code != 0 {
		t.Fatalf("satchel %s: exit %d, stderr %q", strings.Join(args, " "), code, errs)
	}
	return out
}

// TestExportImportCLI moves a SQLite database into another through a
// file, project definitions included, and refuses what it must.
func TestExportImportCLI(t *testing.T) {
	dir := t.TempDir()
	proj := filepath.Join(dir, "proj")
	if err := os.MkdirAll(filepath.Join(proj, "stores"), 0o755); err != nil {
		t.Fatal(err)
	}
	def := `{"key": "{id}", "schema": {"id": {"type": "string"}}, "history": {"versions": 3}}`
	if err := os.WriteFile(filepath.Join(proj, "stores", "notes.json"), []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	a, b := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	bin := "\x00\xff\xfebinary\r\n"
	mainOK(t, bin, "--db", a, "fs", "write", "data.bin")
	mainOK(t, "", "--db", a, "checkpoint", "one")
	mainOK(t, "", "--db", a, "fs", "write", "notes.md", "# notes")
	mainOK(t, "", "--db", a, "doc", "set", "notes", `{"id": "k"}`, "--dir", proj)
	file := filepath.Join(dir, "a.satchel")
	out := mainOK(t, "", "--db", a, "export", "-o", file, "--dir", proj)
	if !strings.Contains(out, "exported 1 threads, 2 commits, 2 blobs, 1 documents, 0 tokens, 0 reviews, 1 project files") {
		t.Errorf("export printed %q", out)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("export file: %v %v, want mode 0600", fi, err)
	}
	if code, _, errs := runMain(t, "", "--db", a, "export", "-o", file); code != 1 || !strings.Contains(errs, "exists") {
		t.Errorf("export over a file: exit %d, %q", code, errs)
	}
	dst := filepath.Join(dir, "dst")
	out = mainOK(t, "", "--db", b, "import", file, "--dir", dst, "--json")
	if !strings.Contains(out, `"threads":1,"spill_areas":0,"commits":2`) || !strings.Contains(out, "notes.json") {
		t.Errorf("import printed %q", out)
	}
	if got, err := os.ReadFile(filepath.Join(dst, "stores", "notes.json")); err != nil || string(got) != def {
		t.Errorf("project file: %q %v", got, err)
	}
	if got := mainOK(t, "", "--db", b, "fs", "read", "data.bin", "--at", "one"); got != bin {
		t.Errorf("binary file at one: %q, want %q", got, bin)
	}
	if got := mainOK(t, "", "--db", b, "doc", "get", "notes", "k", "--dir", dst); !strings.Contains(got, `"id": "k"`) {
		t.Errorf("document: %q", got)
	}
	if code, _, errs := runMain(t, "", "--db", b, "import", file); code != 1 || !strings.Contains(errs, "import refused: it would overwrite thread main of scope default") {
		t.Errorf("second import: exit %d, %q", code, errs)
	}
	mainOK(t, "", "--db", b, "import", file, "--replace")
	// The file keeps times to the microsecond: the import's export is the
	// same bytes.
	again := filepath.Join(dir, "b.satchel")
	mainOK(t, "", "--db", b, "export", "-o", again, "--dir", dst)
	fa, _ := os.ReadFile(file)
	fb, _ := os.ReadFile(again)
	if len(fa) == 0 || !bytes.Equal(fa, fb) {
		t.Errorf("the imported database exports %d bytes, the original %d, not the same", len(fb), len(fa))
	}
}
