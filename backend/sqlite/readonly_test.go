package sqlite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/internal/testenv"
)

// seed makes a database at path with one thread of n commits, then closes
// it (which removes its -wal and -shm files).
func seed(t *testing.T, path string, n int) {
	t.Helper()
	b, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	th, err := b.CreateThread(t.Context(), "s", "main")
	if err != nil {
		t.Fatal(err)
	}
	for seq := int64(1); seq <= int64(n); seq++ {
		res, err := b.Append(t.Context(), []backend.NewCommit{{Thread: th.ID, Seq: seq, Root: []byte("r"), Meta: []byte("{}"), Pack: []byte("pack")}})
		if err != nil || res[0].Err != nil {
			t.Fatal(err, res[0].Err)
		}
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
}

// readsAll checks that b serves reads of what seed wrote, and refuses a
// write as read-only.
func readsAll(t *testing.T, b *Backend, n int64) {
	t.Helper()
	ctx := t.Context()
	th, err := b.Thread(ctx, "s", "main", false)
	if err != nil {
		t.Fatal(err)
	}
	c, ok, err := b.Head(ctx, th.ID)
	if err != nil || !ok || c.Seq != n {
		t.Errorf("head: %+v %v %v, want seq %d", c, ok, err, n)
	}
	if l, err := b.Log(ctx, th.ID, 0, 0); err != nil || len(l) != int(n) {
		t.Errorf("log: %d commits, %v", len(l), err)
	}
	_, err = b.Append(ctx, []backend.NewCommit{{Thread: th.ID, Seq: n + 1, Root: []byte("r"), Meta: []byte("{}")}})
	want := "the database " + b.Path() + " is read-only: it can be read, not written"
	if !errors.Is(err, backend.ErrReadOnly) || err.Error() != want {
		t.Errorf("a write: %v, want %q", err, want)
	}
	if _, err := b.CreateThread(ctx, "s", "other"); !errors.Is(err, backend.ErrReadOnly) {
		t.Errorf("creating a thread: %v", err)
	}
}

// leftBeside lists the files beside the database besides itself.
func leftBeside(t *testing.T, path string) []string {
	t.Helper()
	var out []string
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		if _, err := os.Stat(path + suffix); err == nil {
			out = append(out, filepath.Base(path+suffix))
		}
	}
	return out
}

func TestOpenReadOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "satchel.db")
	if _, err := OpenReadOnly(t.Context(), path); !errors.Is(err, fs.ErrNotExist) || err.Error() != "no database at "+path {
		t.Errorf("a missing file: %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("OpenReadOnly created %s", path)
	}
	seed(t, path, 3)
	b, err := OpenReadOnly(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	readsAll(t, b, 3)
	b.Close()
	if left := leftBeside(t, path); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestOpenReadOnlyMode0444: a file this process may not write (mode 0444,
// for a user other than root) is read, and nothing is left beside it.
func TestOpenReadOnlyMode0444(t *testing.T) {
	if os.Geteuid() == 0 {
		// Not a missing capability: root may write any file, so the case
		// does not arise; TestOpenReadOnlyMount covers a file no one writes.
		t.Skip("root may write a 0444 file: TestOpenReadOnlyMount covers a read-only file")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "satchel.db")
	seed(t, path, 2)
	if err := os.Chmod(path, 0o444); err != nil {
		t.Fatal(err)
	}
	b, err := OpenReadOnly(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	readsAll(t, b, 2)
	b.Close()
	if _, err := Open(t.Context(), path); !errors.Is(err, backend.ErrReadOnly) {
		t.Errorf("opening a 0444 file for writing: %v", err)
	}
	if left := leftBeside(t, path); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// tmpfs mounts a tmpfs of size bytes, or skips the test where mounting is
// not allowed.
func tmpfs(t *testing.T, size int) string {
	t.Helper()
	dir := t.TempDir()
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput()
	if err != nil {
		testenv.Skip(t, "cannot mount a tmpfs (needs root): %v %s", err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	return dir
}

// TestOpenReadOnlyMount: a database on a read-only mount is read, nothing
// is written beside it, and opening it for writing says it is read-only.
func TestOpenReadOnlyMount(t *testing.T) {
	dir := tmpfs(t, 4<<20)
	path := filepath.Join(dir, "satchel.db")
	seed(t, path, 2)
	if out, err := exec.Command("mount", "-o", "remount,ro", dir).CombinedOutput(); err != nil {
		t.Fatalf("remount ro: %v %s", err, out)
	}
	b, err := OpenReadOnly(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	readsAll(t, b, 2)
	b.Close()
	_, err = Open(t.Context(), path)
	if want := "the database " + path + " is read-only: it can be read, not written"; !errors.Is(err, backend.ErrReadOnly) || err.Error() != want {
		t.Errorf("opening for writing: %v, want %q", err, want)
	}
	if left := leftBeside(t, path); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestFullDisk fills the disk under a database while it is written: every
// commit acknowledged before the disk filled is kept, the refusal says the
// disk is full, and the database can still be opened and read.
func TestFullDisk(t *testing.T) {
	dir := tmpfs(t, 2<<20)
	path := filepath.Join(dir, "satchel.db")
	ctx := context.Background()
	b, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() }) // before the unmount
	th, err := b.CreateThread(ctx, "s", "main")
	if err != nil {
		t.Fatal(err)
	}
	pack := bytes.Repeat([]byte("0123456789abcdef"), 1<<10) // 16 KiB
	var acked int64
	var werr error
	for seq := int64(1); seq < 10_000; seq++ {
		res, err := b.Append(ctx, []backend.NewCommit{{Thread: th.ID, Seq: seq, Root: []byte("r"), Meta: []byte("{}"), Pack: pack}})
		if err == nil {
			err = res[0].Err
		}
		if err != nil {
			werr = err
			break
		}
		acked = seq
	}
	full := "the disk holding " + path + " is full"
	if werr == nil || werr.Error() != full {
		t.Fatalf("after %d commits: %v, want %q", acked, werr, full)
	}
	if acked == 0 {
		t.Fatal("no commit before the disk filled")
	}
	// The same process still reads everything acknowledged.
	if c, ok, err := b.Head(ctx, th.ID); err != nil || !ok || c.Seq != acked {
		t.Errorf("head on the full disk: %+v %v %v, want %d", c, ok, err, acked)
	}
	b.Close()

	// Opened again on the still full disk: for writing, the refusal says
	// why; for reading, every acknowledged commit is there.
	fillDisk(t, dir)
	if w, err := Open(ctx, path); err != nil {
		if err.Error() != full {
			t.Errorf("opening for writing on a full disk: %v, want %q", err, full)
		}
	} else {
		// The log and its index were left on disk: the open needed no
		// room, the next write does.
		_, err := w.Append(ctx, []backend.NewCommit{{Thread: th.ID, Seq: acked + 1, Root: []byte("r"), Meta: []byte("{}"), Pack: pack}})
		if err == nil || err.Error() != full {
			t.Errorf("a write on a full disk: %v, want %q", err, full)
		}
		w.Close()
	}
	t.Logf("%d commits acknowledged; beside the database: %v", acked, leftBeside(t, path))
	r, err := OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatalf("opening for reading on a full disk: %v", err)
	}
	t.Cleanup(func() { r.Close() })
	l, err := r.Log(ctx, th.ID, 0, 0)
	if err != nil || int64(len(l)) != acked {
		t.Errorf("log on the full disk: %d commits (%v), %d acknowledged", len(l), err, acked)
	}
	for _, c := range l {
		if p, err := r.Pack(ctx, c.ID); err != nil || p != string(pack) {
			t.Errorf("pack of commit %d: %d bytes, %v", c.Seq, len(p), err)
		}
	}
}

// fillDisk takes what room is left on the file system holding dir.
func fillDisk(t *testing.T, dir string) {
	t.Helper()
	f, err := os.CreateTemp(dir, "fill")
	if err != nil {
		return // not even an inode left: full already
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			return
		}
	}
}

// TestFullDiskCleanFile: a database closed cleanly (no -wal or -shm beside
// it) on a disk that has since filled is still read: SQLite cannot make
// its shared-memory index there, so the file is read as it is.
func TestFullDiskCleanFile(t *testing.T) {
	dir := tmpfs(t, 1<<20)
	path := filepath.Join(dir, "satchel.db")
	seed(t, path, 3)
	fillDisk(t, dir)
	b, err := OpenReadOnly(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	readsAll(t, b, 3)
	b.Close()
	if left := leftBeside(t, path); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
	if _, err := Open(t.Context(), path); err == nil || err.Error() != "the disk holding "+path+" is full" {
		t.Errorf("opening for writing: %v", err)
	}
}
