//go:build unix

package spill

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestFSModesWhateverTheUmask must not run in parallel: the umask belongs
// to the process.
func TestFSModesWhateverTheUmask(t *testing.T) {
	for _, mask := range []int{0o000, 0o022, 0o077, 0o277} {
		t.Run(fmt.Sprintf("umask %04o", mask), func(t *testing.T) {
			parent := t.TempDir()
			old := syscall.Umask(mask)
			defer syscall.Umask(old)

			f := NewFS(filepath.Join(parent, "root"))
			var modeAtWrite fs.FileMode
			f.write = func(h *os.File, b []byte) error {
				fi, err := h.Stat()
				if err != nil {
					return err
				}
				modeAtWrite = fi.Mode().Perm()
				return writeAndSync(h, b)
			}
			loc, err := f.Save(context.Background(), "o", "n", "secret")
			if err != nil {
				t.Fatal(err)
			}
			if modeAtWrite != 0o600 {
				t.Errorf("file mode when its bytes were written: %v, want 0600", modeAtWrite)
			}
			for path, want := range map[string]fs.FileMode{
				f.Root():                  0o700,
				filepath.Dir(string(loc)): 0o700,
				string(loc):               0o600,
			} {
				fi, err := os.Lstat(path)
				if err != nil {
					t.Fatal(err)
				}
				if fi.Mode().Perm() != want {
					t.Errorf("%s: mode %v, want %v", path, fi.Mode().Perm(), want)
				}
			}
		})
	}
}
