package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeTree writes files (slash paths to contents) below dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestImport(t *testing.T) {
	h := newHarness(t)
	src := t.TempDir()
	writeTree(t, src, map[string]string{
		"README.md":        "# hi\n",
		"docs/guide.md":    "guide",
		"docs/deep/x.txt":  "x",
		".hidden/conf":     "c",
		"empty-dir/.keep2": "",
	})
	outside := t.TempDir()
	writeTree(t, outside, map[string]string{"secret.txt": "secret"})
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(src, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(src, "linkdir")); err != nil {
		t.Fatal(err)
	}

	h.ok("fs", "write", "README.md", "old")
	h.ok("fs", "write", "keep.md", "kept")
	r := h.run("fs", "import", src, "-v")
	want := ".hidden/conf\nREADME.md\ndocs/deep/x.txt\ndocs/guide.md\nempty-dir/.keep2\nimported 5 files\n"
	if r.Code != 0 || r.Out != want {
		t.Fatalf("import = %+v, want stdout %q", r, want)
	}
	equal(t, "skipped", r.Err, "skipped link.txt: a symbolic link\nskipped linkdir: a symbolic link\n")
	equal(t, "files", h.ok("fs", "ls"), ".hidden/conf\nREADME.md\ndocs/deep/x.txt\ndocs/guide.md\nempty-dir/.keep2\nkeep.md\n")
	equal(t, "replaced", h.ok("fs", "read", "README.md"), "# hi\n")
	// One commit for the whole import.
	rows := logFields(t, h.ok("log"))
	if len(rows) != 3 || rows[0][0] != "3" {
		t.Errorf("log after import = %q", rows)
	}

	equal(t, "import --under --json", h.ok("fs", "import", filepath.Join(src, "docs"), "--under", "imported/", "--json"),
		`["imported/deep/x.txt","imported/guide.md"]`+"\n")
	equal(t, "imported content", h.ok("fs", "read", "imported/guide.md"), "guide")
	h.refused(`invalid path "../up": contains a . or .. segment`, "fs", "import", src, "--under", "../up")

	// DIR itself may be a link.
	h2 := newHarness(t)
	h2.ok("fs", "import", filepath.Join(src, "linkdir"))
	equal(t, "import through a linked DIR", h2.ok("fs", "ls"), "secret.txt\n")

	// An empty directory imports nothing and makes no commit.
	h3 := newHarness(t)
	equal(t, "import empty", h3.ok("fs", "import", t.TempDir()), "imported 0 files\n")
	equal(t, "no commit", h3.ok("log"), "")
	equal(t, "import empty --json", h3.ok("fs", "import", t.TempDir(), "--json"), "[]\n")
}

func TestImportSkipsBadPaths(t *testing.T) {
	h := newHarness(t)
	src := t.TempDir()
	writeTree(t, src, map[string]string{
		"ok.md":        "ok",
		"dot.":         "x",
		"sub/CON.txt":  "x",
		"sub/space ":   "x",
		"back\\slash":  "x",
		"fine/also.md": "ok",
	})
	r := h.run("fs", "import", src)
	want := strings.Join([]string{
		`skipped back\slash: invalid path "back\\slash": contains a backslash`,
		`skipped dot.: invalid path "dot.": has a segment ending in a dot or a space`,
		`skipped sub/CON.txt: invalid path "sub/CON.txt": uses the reserved device name CON`,
		`skipped sub/space : invalid path "sub/space ": has a segment ending in a dot or a space`,
	}, "\n") + "\n"
	equal(t, "import with bad paths", r, result{Code: 0, Out: "imported 2 files\n", Err: want})
	equal(t, "the others imported", h.ok("fs", "ls"), "fine/also.md\nok.md\n")

	r = h.run("fs", "import", filepath.Join(src, "missing"))
	if r.Code != 1 || !strings.Contains(r.Err, "no such file or directory") {
		t.Errorf("import of a missing directory = %+v", r)
	}
	r = h.run("fs", "import", filepath.Join(src, "ok.md"))
	equal(t, "import of a file", r, result{Code: 1, Err: "cannot import " + filepath.Join(src, "ok.md") + ": not a directory or a .tar, .tar.gz or .tgz archive\n"})
}

func TestExport(t *testing.T) {
	h := newHarness(t)
	h.ok("fs", "write", "a.md", "v1")
	h.ok("fs", "write", "notes/deep/b.md", "b\n")
	h.ok("checkpoint", "first")
	h.ok("fs", "write", "a.md", "v2")
	h.ok("fs", "write", "c.md", "c")

	dst := filepath.Join(t.TempDir(), "out")
	equal(t, "export", h.ok("fs", "export", dst, "--verbose"), "a.md\nc.md\nnotes/deep/b.md\nexported 3 files to "+dst+"\n")
	for p, want := range map[string]string{"a.md": "v2", "c.md": "c", "notes/deep/b.md": "b\n"} {
		got, err := os.ReadFile(filepath.Join(dst, filepath.FromSlash(p)))
		if err != nil || string(got) != want {
			t.Errorf("exported %s = %q, %v; want %q", p, got, err, want)
		}
	}
	fi, err := os.Stat(filepath.Join(dst, "notes", "deep", "b.md"))
	if err != nil || fi.Mode().Perm()&^0o644 != 0 {
		t.Errorf("exported file mode %v, %v", fi.Mode(), err)
	}
	di, err := os.Stat(filepath.Join(dst, "notes", "deep"))
	if err != nil || !di.IsDir() || di.Mode().Perm()&^0o755 != 0 {
		t.Errorf("exported directory mode %v, %v", di.Mode(), err)
	}

	// A directory that is not empty is refused, before anything is written.
	r := h.run("fs", "export", dst, "--at", "first")
	equal(t, "export into a full directory", r, result{Code: 1, Err: "cannot export into " + dst + ": it is not empty (use --force to write into it)\n"})
	equal(t, "export --at --force --json", h.ok("fs", "export", dst, "--at", "first", "--force", "--json"),
		`["a.md","notes/deep/b.md"]`+"\n")
	h.ok("fs", "export", dst, "--at", "first", "--overwrite") // the older name of --force
	got, _ := os.ReadFile(filepath.Join(dst, "a.md"))
	equal(t, "overwritten", string(got), "v1")
	got, _ = os.ReadFile(filepath.Join(dst, "c.md"))
	equal(t, "other files left alone", string(got), "c")
	h.refused("checkpoint not found: nope", "fs", "export", dst, "--at", "nope")

	// Round trip.
	h2 := newHarness(t)
	h2.ok("fs", "import", dst)
	equal(t, "round trip", h2.ok("fs", "ls"), "a.md\nc.md\nnotes/deep/b.md\n")
}

func TestExportStaysInside(t *testing.T) {
	h := newHarness(t)
	h.ok("fs", "write", "evil/x.md", "pwned")
	dst, outside := t.TempDir(), t.TempDir()
	// A link inside DIR that leads out of it is not followed.
	if err := os.Symlink(outside, filepath.Join(dst, "evil")); err != nil {
		t.Fatal(err)
	}
	r := h.run("fs", "export", dst, "--force")
	if r.Code != 1 || r.Out != "" || !strings.HasPrefix(r.Err, "cannot export evil/x.md into "+dst+": ") {
		t.Errorf("export through a link out of DIR = %+v", r)
	}
	if _, err := os.Stat(filepath.Join(outside, "x.md")); err == nil {
		t.Fatal("export wrote outside DIR through a symbolic link")
	}
}
