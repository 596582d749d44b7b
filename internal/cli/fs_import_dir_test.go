package cli

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/testenv"
)

// diffTrees runs diff -r on two directories, which must be identical.
func diffTrees(t *testing.T, a, b string, excludes ...string) {
	t.Helper()
	diff, err := exec.LookPath("diff")
	if err != nil {
		testenv.Skip(t, "no diff program")
	}
	args := []string{"-r"}
	for _, x := range excludes {
		args = append(args, "-x", x)
	}
	out, err := exec.Command(diff, append(args, a, b)...).CombinedOutput()
	if err != nil {
		t.Fatalf("diff -r %s %s: %v\n%s", a, b, err, out)
	}
}

// TestImportExportSourceTree imports the project's own source tree,
// exports it to a directory and to a .tar.gz, imports the archive again:
// diff -r finds every copy identical.
func TestImportExportSourceTree(t *testing.T) {
	src, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t)
	out := h.ok("fs", "import", src, "--exclude", ".git", "--exclude", ".cache/", "--batch", "100", "--verbose")
	n := strings.Count(out, "\n")
	if n < 100 || !strings.Contains(out, "internal/cli/fs_import_dir.go\n") {
		t.Fatalf("imported %d files:\n%s", n, out)
	}
	dst := filepath.Join(t.TempDir(), "tree")
	h.ok("fs", "export", dst)
	diffTrees(t, src, dst, ".git", ".cache")

	archive := filepath.Join(t.TempDir(), "tree.tar.gz")
	h.ok("fs", "export", archive)
	h2 := newHarness(t)
	if got := h2.ok("fs", "import", archive, "--verbose"); got != out {
		t.Errorf("the archive imported other paths than the directory")
	}
	dst2 := filepath.Join(t.TempDir(), "tree2")
	h2.ok("fs", "export", dst2)
	diffTrees(t, src, dst2, ".git", ".cache")
	// An exported file has the workspace's modified time.
	var st struct{ Modified time.Time }
	if err := json.Unmarshal([]byte(h2.ok("fs", "stat", "go.mod", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dst2, "go.mod")); err != nil || !fi.ModTime().Equal(st.Modified) {
		t.Errorf("exported go.mod modified %v (%v), the workspace says %v", fi.ModTime(), err, st.Modified)
	}
}

type tarEntry struct {
	hdr  tar.Header
	data string
}

func writeTar(t *testing.T, path string, gz bool, entries []tarEntry) {
	t.Helper()
	var buf bytes.Buffer
	var w = &buf
	var zw *gzip.Writer
	tw := tar.NewWriter(w)
	if gz {
		zw = gzip.NewWriter(w)
		tw = tar.NewWriter(zw)
	}
	for _, e := range entries {
		h := e.hdr
		h.Size = int64(len(e.data))
		if h.Typeflag != tar.TypeReg {
			h.Size = 0
		}
		if h.Mode == 0 {
			h.Mode = 0o644
		}
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write([]byte(e.data)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestImportHostileArchive: links, devices, pipes and paths that escape
// are reported and skipped, never followed; bytes are kept exactly.
func TestImportHostileArchive(t *testing.T) {
	bin := "\x00\xff\xfe\r\n"
	entries := []tarEntry{
		{tar.Header{Typeflag: tar.TypeDir, Name: "./dir/"}, ""},
		{tar.Header{Typeflag: tar.TypeReg, Name: "./dir/ok.txt"}, "first"},
		{tar.Header{Typeflag: tar.TypeReg, Name: "bin.dat"}, bin},
		{tar.Header{Typeflag: tar.TypeSymlink, Name: "link", Linkname: "/etc/passwd"}, ""},
		{tar.Header{Typeflag: tar.TypeLink, Name: "hard", Linkname: "bin.dat"}, ""},
		{tar.Header{Typeflag: tar.TypeChar, Name: "dev/null", Devmajor: 1, Devminor: 3}, ""},
		{tar.Header{Typeflag: tar.TypeFifo, Name: "pipe"}, ""},
		{tar.Header{Typeflag: tar.TypeReg, Name: "../escape.txt"}, "x"},
		{tar.Header{Typeflag: tar.TypeReg, Name: "/abs.txt"}, "x"},
		{tar.Header{Typeflag: tar.TypeReg, Name: "dir/ok.txt"}, "second"},
		{tar.Header{Typeflag: tar.TypeReg, Name: "skip.log"}, "x"},
	}
	for _, gz := range []bool{false, true} {
		h := newHarness(t)
		archive := filepath.Join(t.TempDir(), "in.tar") // gzip is recognised by its bytes
		writeTar(t, archive, gz, entries)
		r := h.run("fs", "import", archive, "--exclude", "*.log")
		if r.Code != 0 || r.Out != "imported 2 files\n" {
			t.Fatalf("import (gzip %v) = %+v", gz, r)
		}
		wantErr := strings.Join([]string{
			"skipped link: a symbolic link",
			"skipped hard: a hard link",
			"skipped dev/null: a device",
			"skipped pipe: a named pipe",
			`skipped ../escape.txt: invalid path "../escape.txt": contains a . or .. segment`,
			`skipped /abs.txt: invalid path "/abs.txt": must be relative (no leading /)`,
		}, "\n") + "\n"
		equal(t, "skipped", r.Err, wantErr)
		equal(t, "the last entry of a path wins", h.ok("fs", "read", "dir/ok.txt"), "second")
		equal(t, "binary bytes", h.ok("fs", "read", "bin.dat"), bin)
		equal(t, "one commit", strings.Count(h.ok("log"), "\n"), 1)
	}
}

func TestImportBatchAndExclude(t *testing.T) {
	h := newHarness(t)
	src := t.TempDir()
	writeTree(t, src, map[string]string{
		"a.txt": "a", "b.txt": "b", "c.log": "c", "keep.log": "k",
		"build/out.bin": "o", "src/build/x": "x", "src/main.go": "m", "node_modules/m/i.js": "i",
	})
	out := h.ok("fs", "import", src, "--batch", "2", "--exclude", "*.log", "--exclude", "!keep.log",
		"--exclude", "/build/", "--exclude", "node_modules/", "--verbose")
	equal(t, "imported", out, "a.txt\nb.txt\nkeep.log\nsrc/build/x\nsrc/main.go\nimported 5 files\n")
	equal(t, "three commits of at most 2 files", strings.Count(h.ok("log"), "\n"), 3)
	h.refused(`invalid exclude pattern "[": syntax error in pattern`, "fs", "import", src, "--exclude", "[")
	h.refused("--batch must not be negative, was -1", "fs", "import", src, "--batch", "-1")
}

func TestImportOverLimit(t *testing.T) {
	h := newHarness(t)
	if err := h.store.SetLimits(t.Context(), "default", "", satchel.Limits{MaxFileBytes: 10}); err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	writeTree(t, src, map[string]string{"small": "ok", "big": strings.Repeat("x", 11)})
	h.refused("limit exceeded: big is 11 B, over the per-file limit of 10 B", "fs", "import", src)
	equal(t, "nothing committed", h.ok("fs", "ls"), "")
}

func TestExportArchiveRefusesExisting(t *testing.T) {
	h := newHarness(t)
	h.ok("fs", "write", "a", "1")
	f := filepath.Join(t.TempDir(), "x.tar")
	h.ok("fs", "export", f)
	h.refused(f+" exists: remove it, or give --force to replace it", "fs", "export", f)
	h.ok("fs", "export", f, "--force")
}
