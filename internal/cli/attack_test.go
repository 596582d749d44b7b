package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/spill"
)

// A grep that reaches its timeout inside one long line prints the
// matches found so far, says "grep stopped" and exits non-zero.
func TestAttackGrepStopped(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	ws, err := h.store.Workspace(ctx, "default", "main")
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.Write(ctx, "a.txt", "b\n"); err != nil {
		t.Fatal(err)
	}
	if err := ws.Write(ctx, "big.txt", strings.Repeat("x", 1<<20)); err != nil {
		t.Fatal(err)
	}
	r := h.run("fs", "grep", `.{1000}.{1000}.{1000}b|^b$`, "--timeout", "50ms")
	if r.Code == 0 || r.Out != "a.txt:1:b\n" || !strings.HasPrefix(r.Err, "grep stopped after 50ms") {
		t.Fatalf("grep past its timeout: %+v", r)
	}
}

// endless yields zeros forever, counting them.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	clear(p)
	e.n += int64(len(p))
	return len(p), nil
}

// runReader runs args with r as standard input.
func (h *harness) runReader(r io.Reader, args ...string) result {
	var out, errb bytes.Buffer
	a := newApp(r, &out, &errb)
	a.getenv = func(k string) string { return h.env[k] }
	a.openStore = func(context.Context, string) (*satchel.Store, error) { return h.store, nil }
	a.closeStore = false
	code := run(context.Background(), a, args)
	return result{Code: code, Out: out.String(), Err: errb.String()}
}

// fs write, fs append and spill save read standard input only to their
// limit plus one byte: an endless input is refused, not read whole.
func TestAttackEndlessStandardInput(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	if err := h.store.SetLimits(ctx, "default", "", satchel.Limits{MaxFileBytes: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range [][]string{{"fs", "write", "a.txt"}, {"fs", "append", "a.txt"}} {
		e := &endless{}
		r := h.runReader(e, cmd...)
		if r.Code == 0 || r.Err != "limit exceeded: standard input is over the per-file limit of 1.00 MiB\n" {
			t.Errorf("%v: %+v", cmd, r)
		}
		if e.n != 1<<20+1 {
			t.Errorf("%v read %d bytes, want %d", cmd, e.n, 1<<20+1)
		}
	}
	e := &endless{}
	if r := h.runReader(e, "untrusted"); r.Code == 0 || e.n != satchel.DefaultMaxFileBytes+1 {
		t.Errorf("untrusted: %+v after %d bytes", r, e.n)
	}
	e = &endless{}
	r := h.runReader(e, "spill", "save", "--backend", "workspace", "--name", "x")
	if r.Code == 0 || !strings.Contains(r.Err, "over the spill limit of 64.00 MiB") || e.n != spill.MaxSaveBytes+1 {
		t.Errorf("spill save: %+v after %d bytes", r, e.n)
	}
}

// A doc import line over 64 MiB used to end with "bufio.Scanner: token
// too long": the refusal names the limit and the line.
func TestAttackDocImportLongLine(t *testing.T) {
	h := newHarness(t)
	dir := seedProject(t)
	in := io.MultiReader(strings.NewReader(noteJSON("a", "t", 0.5)+"\n"), &endless{})
	r := h.runReader(in, "doc", "--dir", dir, "import", "research-notes", "-")
	want := "limit exceeded: line 2 of - is over 67108864 bytes (64 MiB), the longest line doc import reads; documents imported before it: 1\n"
	if r.Code == 0 || r.Err != want {
		t.Fatalf("a line over the limit: exit %d, stderr %q", r.Code, r.Err)
	}
}

// fs import of a file over the per-file limit (a 2 GiB sparse file used
// to be read whole, 4.2 GB at the peak) is refused from its size.
func TestAttackImportSparseFile(t *testing.T) {
	h := newHarness(t)
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "sparse.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(2 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	r := h.run("fs", "import", dir)
	if r.Code == 0 || !strings.Contains(r.Err, "is 2.00 GiB, over the per-file limit of 64.00 MiB") {
		t.Fatalf("import of a 2 GiB sparse file: %+v", r)
	}
	// satchel run --input-file reads its file the same way.
	script := writeScript(t, t.TempDir(), "summarize.lua", summarize)
	r = h.run("run", script, "--input-file", filepath.Join(dir, "sparse.bin"))
	if r.Code == 0 || !strings.Contains(r.Err, "is 2.00 GiB, over the per-file limit of 64.00 MiB") {
		t.Fatalf("run --input-file of a 2 GiB sparse file: %+v", r)
	}
	if ok, err := func() (bool, error) {
		ws, err := h.store.Workspace(context.Background(), "default", "main")
		if err != nil {
			return false, err
		}
		return ws.Exists(context.Background(), "sparse.bin")
	}(); err != nil || ok {
		t.Fatalf("the refused file was imported: %v %v", ok, err)
	}
}
