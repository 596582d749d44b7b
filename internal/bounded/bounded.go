// Package bounded reads input of unknown size into memory without ever
// holding more than a limit: it stops at the limit plus one byte, the one
// that proves the input too large, however large the input really is.
package bounded

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/satchel-dev/satchel/internal/bytesize"
	"github.com/satchel-dev/satchel/internal/errs"
)

// ReadString reads r to its end, refusing (errs.ErrLimitExceeded) an input
// over limit bytes once it has read limit+1 of them. sizeHint, when
// positive, is the size the input is expected to have (a file's): the
// buffer is made that large at once, never larger than limit+1. what names
// the input in the refusal ("standard input", a host path) and limitName
// the limit ("the per-file limit").
func ReadString(r io.Reader, limit, sizeHint int64, what, limitName string) (string, error) {
	var b strings.Builder
	if sizeHint > 0 {
		b.Grow(int(min(sizeHint, limit) + 1))
	}
	n, err := io.Copy(&b, io.LimitReader(r, limit+1))
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", what, err)
	}
	if n > limit {
		return "", TooLarge(what, limit, limitName)
	}
	return b.String(), nil
}

// TooLarge is the refusal of an input over limit bytes.
func TooLarge(what string, limit int64, limitName string) error {
	return errs.New(errs.ErrLimitExceeded, "limit exceeded: %s is over %s of %s", what, limitName, bytesize.Format(limit))
}

// ReadFile reads a regular file of the host, refused before a byte is read
// when its size is over limit, and read through ReadString otherwise (a
// file may grow while it is read). A FIFO, a device or any other special
// file is refused: reading one could block forever or never end.
func ReadFile(path string, limit int64, limitName string) (string, error) {
	// Stat before opening: opening a FIFO blocks until a writer comes.
	if fi, err := os.Stat(path); err != nil {
		return "", err
	} else if !fi.Mode().IsRegular() {
		return "", NotRegular(path, fi.Mode())
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", NotRegular(path, fi.Mode())
	}
	if fi.Size() > limit {
		w, l := errs.Sizes(fi.Size(), limit)
		return "", errs.New(errs.ErrLimitExceeded, "limit exceeded: %s is %s, over %s of %s", path, w, limitName, l)
	}
	return ReadString(f, limit, fi.Size(), path, limitName)
}

// NotRegular is the refusal of a special file (a FIFO, a device, a
// socket) where a regular file is read.
func NotRegular(path string, mode fs.FileMode) error {
	return errs.New(errs.ErrInvalidArgument, "cannot read %s: it is %s, not a regular file", path, FileKind(mode))
}

// FileKind names the type of a file that is not a regular one: "a
// FIFO", "a device", "a socket", "a directory" or "a special file".
func FileKind(mode fs.FileMode) string {
	switch {
	case mode&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case mode&fs.ModeDevice != 0:
		return "a device"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	case mode.IsDir():
		return "a directory"
	}
	return "a special file"
}
