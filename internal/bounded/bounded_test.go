//go:build unix

package bounded

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/satchel-dev/satchel/internal/errs"
	"github.com/satchel-dev/satchel/internal/testenv"
)

// endless yields zeros forever, counting them.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	clear(p)
	e.n += int64(len(p))
	return len(p), nil
}

// An input of any size is read only to the limit plus one byte: a 1 GiB
// standard input used to be read whole (3.7 GB at the peak) before the
// size check.
func TestAttackReadStopsAtLimitPlusOne(t *testing.T) {
	const limit = 1 << 20
	e := &endless{}
	_, err := ReadString(e, limit, 0, "standard input", "the per-file limit")
	if !errors.Is(err, errs.ErrLimitExceeded) || err.Error() != "limit exceeded: standard input is over the per-file limit of 1.00 MiB" {
		t.Fatalf("err = %v", err)
	}
	if e.n != limit+1 {
		t.Fatalf("read %d bytes of an endless input, want %d", e.n, limit+1)
	}
	got, err := ReadString(strings.NewReader("exact"), 5, 0, "x", "y")
	if err != nil || got != "exact" {
		t.Fatalf("an input of exactly the limit: %q %v", got, err)
	}
}

// A file whose size is over the limit is refused before it is read (a
// 2 GiB sparse file used to be read whole); a FIFO is refused without
// blocking.
func TestAttackReadFile(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "sparse")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(2 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = ReadFile(big, 64<<20, "the per-file limit")
	if !errors.Is(err, errs.ErrLimitExceeded) || !strings.Contains(err.Error(), "is 2.00 GiB, over the per-file limit of 64.00 MiB") {
		t.Fatalf("sparse file: %v", err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		testenv.Skip(t, "cannot make a FIFO: %v", err)
	}
	_, err = ReadFile(fifo, 64<<20, "the per-file limit")
	if !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), "it is a FIFO, not a regular file") {
		t.Fatalf("FIFO: %v", err)
	}
	small := filepath.Join(dir, "small")
	if err := os.WriteFile(small, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadFile(small, 5, "l"); err != nil || got != "hello" {
		t.Fatalf("small: %q %v", got, err)
	}
}

var _ io.Reader = (*endless)(nil)
