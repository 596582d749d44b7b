//go:build linux

package cli

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The child process of the tests below runs Main with the arguments in
// SATCHEL_CLI_CHILD (a JSON array) and exits with its code.
func TestCLIChild(t *testing.T) {
	js := os.Getenv("SATCHEL_CLI_CHILD")
	if js == "" {
		t.Skip("the child of the fs import bomb tests")
	}
	var args []string
	if err := json.Unmarshal([]byte(js), &args); err != nil {
		t.Fatal(err)
	}
	code := Main(args, strings.NewReader(""), os.Stdout, os.Stderr)
	// The peak resident memory of this process since its exec (getrusage
	// of a child counts the parent's pages it shared before its exec).
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			fmt.Fprintf(os.Stderr, "\nVmHWM:%s\n", v)
		}
	}
	os.Exit(code)
}

// runChild runs Main in a child process and returns its exit code, its
// standard error and its peak resident memory (VmHWM).
func runChild(t *testing.T, args ...string) (code int, stderr string, peak int64) {
	t.Helper()
	js, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^TestCLIChild$")
	cmd.Env = append(os.Environ(), "SATCHEL_CLI_CHILD="+string(js), "GOMEMLIMIT=off", "GOGC=100")
	var e bytes.Buffer
	cmd.Stderr = &e
	err := cmd.Run()
	if cmd.ProcessState == nil {
		t.Fatalf("child: %v", err)
	}
	errs, hwm, ok := strings.Cut(e.String(), "\nVmHWM:")
	var kib int64
	if _, err := fmt.Sscanf(strings.TrimSpace(hwm), "%d kB", &kib); !ok || err != nil {
		t.Fatalf("child: no VmHWM in its standard error %q (%v)", e.String(), err)
	}
	return cmd.ProcessState.ExitCode(), errs, kib << 10
}

// bombTarGz writes a tar.gz of n files of size zero bytes each, without
// compressing the zeros more than once: a gzip file may be several
// members, and the zeros' member is the same for every file.
func bombTarGz(t *testing.T, path string, n int, size int64) {
	t.Helper()
	member := func(b []byte) []byte {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
		zw.Write(b)
		zw.Close()
		return buf.Bytes()
	}
	zeros := member(make([]byte, size))
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for i := range n {
		var hb bytes.Buffer
		tw := tar.NewWriter(&hb)
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: fmt.Sprintf("zeros/%02d.bin", i), Size: size, Mode: 0o644, Format: tar.FormatUSTAR}); err != nil {
			t.Fatal(err)
		}
		if hb.Len() != 512 || size%512 != 0 {
			t.Fatalf("a header of %d bytes, or a size not a multiple of 512", hb.Len())
		}
		f.Write(member(hb.Bytes()))
		f.Write(zeros)
	}
	if _, err := f.Write(member(make([]byte, 1024))); err != nil { // the end of the archive
		t.Fatal(err)
	}
}

// checkBombRefused runs fs import of src in a child and checks that it
// ends with the bound's refusal, that its peak memory stays under 256 MiB
// above the same child's importing one small file, and that nothing was
// written.
func checkBombRefused(t *testing.T, db, src string, extra ...string) {
	t.Helper()
	small := filepath.Join(t.TempDir(), "small")
	if err := os.MkdirAll(small, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(small, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	startDB := filepath.Join(t.TempDir(), "start.db")
	code, errs, start := runChild(t, "--db", startDB, "fs", "import", small)
	if code != 0 {
		t.Fatalf("importing one small file: exit %d, %s", code, errs)
	}
	code, errs, peak := runChild(t, append([]string{"--db", db, "fs", "import", src}, extra...)...)
	t.Logf("peak resident memory: %d MiB, importing one small file %d MiB", peak>>20, start>>20)
	if code != 1 || !strings.Contains(errs, "limit exceeded: the workspace would hold ") || !strings.Contains(errs, "over maxBytes 1.00 GiB") {
		t.Fatalf("fs import of the bomb: exit %d, stderr %q, want the maxBytes refusal", code, errs)
	}
	if grew := peak - start; grew > 256<<20 {
		t.Errorf("fs import of the bomb peaked at %d MiB, %d MiB above a small import: over 256 MiB", peak>>20, grew>>20)
	}
	if out := mainOK(t, "", "--db", db, "fs", "ls", "--json"); strings.Contains(out, ".bin") {
		t.Errorf("a refused import wrote files: %s", out)
	}
}

// A 3 MB tar.gz of 50 files of 60 MiB of zeros used to be held whole in
// memory until its one commit (out of memory at 2.36 GB), although the
// workspace's 1 GiB bound refuses it. It is refused when the count of what
// it holds passes the bound, before it is held, with --batch too.
func TestAttackFSImportTarBomb(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes over 3 GiB of zeros")
	}
	dir := t.TempDir()
	bomb := filepath.Join(dir, "bomb.tar.gz")
	bombTarGz(t, bomb, 50, 60<<20)
	db := filepath.Join(dir, "w.db")
	mainOK(t, "", "--db", db, "fs", "write", "keep.txt", "kept")
	checkBombRefused(t, db, bomb)
	checkBombRefused(t, db, bomb, "--batch", "1")
	if got := mainOK(t, "", "--db", db, "fs", "read", "keep.txt"); got != "kept" {
		t.Errorf("keep.txt after the refused imports: %q", got)
	}
}

// A directory of 40 sparse files of 60 MiB each (2.4 GB that take no
// disk) is refused from the files' sizes, before one is read.
func TestAttackFSImportSparseDirBomb(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "zeros")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		f, err := os.Create(filepath.Join(src, fmt.Sprintf("%02d.bin", i)))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(60 << 20); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	checkBombRefused(t, filepath.Join(dir, "w.db"), src)
}
