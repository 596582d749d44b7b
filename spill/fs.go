package spill

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/satchel-dev/satchel/internal/errs"
)

// FS is the filesystem backend (DESIGN §4). It writes each spill to
//
//	<root>/session-<sha256_hex(owner)>/<random>-<safe_name>
//
// and returns that absolute path as the locator. It is for programs that
// read host files; an agent can open a spill only if its tools reach root.
//
// What it promises:
//   - The owner is hashed, never used raw, so no owner can steer a write out
//     of root; <random> is 72 bits from crypto/rand, so two saves never
//     collide; the name goes through SafeName.
//   - The session directory is 0700 and each file 0600, set with an
//     explicit chmod whatever the umask, the file's before any byte is
//     written. A root that does not exist is created with mode 0700.
//   - Files are created exclusively (O_CREATE|O_EXCL, relative to the opened
//     session directory): a file or symlink planted at the name is an error
//     and is never followed. A session directory that is a symlink, is not a
//     directory, or belongs to another user is an error too.
//   - Any failure after the file is created (chmod, write, a full disk,
//     sync, close) removes it: no partial file is left. Save syncs the file
//     before it returns, so a returned locator names bytes that survive a
//     crash of the process and, for the file's data, of the machine.
//   - Nothing is ever deleted behind the operator's back: there is no
//     reaper. Prune is the explicit cleanup.
//
// The root should be a private directory (the default is). A root that
// other users can write to is refused unless it has the sticky bit, as /tmp
// does, because whoever can rename entries of root could swap a session
// directory after it was checked.
type FS struct {
	// Tool is the tool the hint names; "" means DefaultReaderTool.
	Tool string
	// Window is how many bytes the hint's suggested first read may return
	// (the reader tool's limit); 0 means DefaultMaxInlineBytes.
	Window int

	root string
	// rand is the source of the random part of names; nil means crypto/rand.
	rand io.Reader
	// write writes and syncs the content of a new file; tests inject
	// failures here.
	write func(f *os.File, b []byte) error
}

// DefaultRoot returns the root the filesystem backend uses when none is
// given: a directory "satchel-spill" in the user's cache directory
// (os.UserCacheDir), or in os.TempDir when there is none.
func DefaultRoot() string {
	dir, err := os.UserCacheDir()
	if err != nil || dir == "" {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "satchel-spill")
}

// NewFS returns a filesystem backend rooted at root ("" means DefaultRoot).
// A relative root is made absolute against the working directory now, so
// locators are absolute paths. Nothing is created until the first Save.
func NewFS(root string) *FS {
	if root == "" {
		root = DefaultRoot()
	}
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	return &FS{root: filepath.Clean(root)}
}

// Root returns the backend's root directory.
func (f *FS) Root() string { return f.root }

// SessionDir returns the name of owner's session directory within root:
// "session-" followed by the hexadecimal SHA-256 of owner.
func SessionDir(owner string) string {
	sum := sha256.Sum256([]byte(owner))
	return "session-" + hex.EncodeToString(sum[:])
}

// Save writes text to a new file in owner's session directory and returns
// its absolute path. Errors say what could not be done and wrap the
// operating system's error; a root that is not a directory, or that other
// users can write without the sticky bit, is refused with kind
// errs.ErrInvalidArgument.
func (f *FS) Save(ctx context.Context, owner, name, text string) (Locator, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if err := ensureRoot(f.root); err != nil {
		return "", err
	}
	root, err := os.OpenRoot(f.root)
	if err != nil {
		return "", fmt.Errorf("spill: open root: %w", err)
	}
	defer root.Close()
	rnd, err := randomPart(f.rand)
	if err != nil {
		return "", fmt.Errorf("spill: random name: %w", err)
	}
	sess := SessionDir(owner)
	file := rnd + "-" + SafeName(name)
	path := filepath.Join(f.root, sess, file)
	for attempt := 0; ; attempt++ {
		dir, err := openSession(root, sess)
		if err != nil {
			return "", fmt.Errorf("spill: session directory %s: %w", filepath.Join(f.root, sess), err)
		}
		err = f.writeNew(dir, file, text)
		dir.Close()
		if err == nil {
			return Locator(path), nil
		}
		// A Prune may remove an empty session directory between our
		// opening it and creating the file in it: make it again, once.
		if attempt > 0 || !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("spill: write %s: %w", path, err)
		}
	}
}

// writeNew creates file exclusively in dir, sets its mode, writes text and
// syncs it; on any failure after the create it removes the file.
func (f *FS) writeNew(dir *os.Root, file, text string) (err error) {
	h, err := dir.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err // not created (O_EXCL): nothing to remove
	}
	closed := false
	defer func() {
		if err == nil {
			return
		}
		if !closed {
			h.Close()
		}
		if rerr := dir.Remove(file); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = fmt.Errorf("%w (and removing the partial file failed: %v)", err, rerr)
		}
	}()
	if err := h.Chmod(0o600); err != nil {
		return err
	}
	write := f.write
	if write == nil {
		write = writeAndSync
	}
	if err := write(h, []byte(text)); err != nil {
		return err
	}
	closed = true
	return h.Close()
}

func writeAndSync(f *os.File, b []byte) error {
	if _, err := f.Write(b); err != nil {
		return err
	}
	return f.Sync()
}

// ensureRoot makes sure root is a directory, creating it (mode 0700, set
// explicitly) when it does not exist. Only what it creates is chmodded: an
// existing root is the operator's.
func ensureRoot(root string) error {
	fi, err := os.Stat(root)
	switch {
	case err == nil:
		if !fi.IsDir() {
			return errs.New(errs.ErrInvalidArgument, "spill root %q is not a directory", root)
		}
		if fi.Mode().Perm()&0o022 != 0 && fi.Mode()&os.ModeSticky == 0 {
			return errs.New(errs.ErrInvalidArgument,
				"spill root %q is writable by other users (mode %v); use a private directory", root, fi.Mode().Perm())
		}
		return nil
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("spill: root: %w", err)
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return fmt.Errorf("spill: create root: %w", err)
	}
	if err := os.Chmod(root, 0o700); err != nil {
		return fmt.Errorf("spill: create root: %w", err)
	}
	return nil
}

// openSession creates (or finds) the session directory sess in root, checks
// that it is a real directory of this user, opens it and sets its mode to
// 0700 through the open descriptor.
func openSession(root *os.Root, sess string) (*os.Root, error) {
	if err := root.Mkdir(sess, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	fi, err := root.Lstat(sess)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, errors.New("is a symbolic link")
	}
	if !fi.IsDir() {
		return nil, errors.New("is not a directory")
	}
	if err := checkOwner(fi); err != nil {
		return nil, err
	}
	dir, err := root.OpenRoot(sess)
	if err != nil {
		return nil, err
	}
	if err := chmodSame(dir, fi); err != nil {
		dir.Close()
		return nil, err
	}
	return dir, nil
}

// chmodSame sets the mode of the directory dir to 0700 after checking that
// it is still the directory fi describes (not swapped since the Lstat).
func chmodSame(dir *os.Root, fi fs.FileInfo) error {
	d, err := dir.Open(".")
	if err != nil {
		return err
	}
	defer d.Close()
	dfi, err := d.Stat()
	if err != nil {
		return err
	}
	if !os.SameFile(fi, dfi) {
		return errors.New("changed while it was being opened")
	}
	return d.Chmod(0o700)
}

// Fetch returns the content of the spill file at loc, byte for byte. loc
// must be a locator of this backend's root (root/session-<64 hex>/<random>-
// <safe_name>); any other path is refused with kind errs.ErrInvalidArgument,
// so a model that is handed Fetch cannot read other host files through it.
// The file is opened within root and a symlink is never followed out of it.
// Otherwise the error is the operating system's (*fs.PathError, matching
// fs.ErrNotExist, fs.ErrPermission, ...), with the locator as its path.
func (f *FS) Fetch(ctx context.Context, loc Locator) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	rel, ok := f.rel(loc)
	if !ok {
		return "", errs.New(errs.ErrInvalidArgument, "%q is not a spill file under %q", string(loc), f.root)
	}
	root, err := os.OpenRoot(f.root)
	if err != nil {
		return "", err
	}
	defer root.Close()
	b, err := root.ReadFile(rel)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			pe.Path = string(loc)
		}
		return "", err
	}
	return string(b), nil
}

// rel returns loc relative to root when it has the layout of a spill file.
func (f *FS) rel(loc Locator) (string, bool) {
	p := string(loc)
	if !filepath.IsAbs(p) || filepath.Clean(p) != p {
		return "", false
	}
	rel, err := filepath.Rel(f.root, p)
	if err != nil {
		return "", false
	}
	sess, file, ok := strings.Cut(filepath.ToSlash(rel), "/")
	if !ok || !isSessionDir(sess) || !isSpillFileName(file) {
		return "", false
	}
	return rel, true
}

// isSessionDir reports whether name is "session-" and 64 lowercase hex digits.
func isSessionDir(name string) bool {
	hexPart, ok := strings.CutPrefix(name, "session-")
	if !ok || len(hexPart) != 2*sha256.Size {
		return false
	}
	for i := range len(hexPart) {
		c := hexPart[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// Hint returns how a model reads the spill back: the tool (f.Tool, default
// read_file), the absolute path and, when text is given, the lines of a
// first read that fits f.Window bytes and the number of lines. The path is
// where the content is; whether the model's tool can reach it is for the
// operator who chose the root to ensure.
func (f *FS) Hint(loc Locator, text string) string {
	return readHint(f.Tool, loc, text, f.Window)
}

// HintFrom is Hint for a reader that saw text up to character char of
// line from (HintFromer).
func (f *FS) HintFrom(loc Locator, text string, from, char int) string {
	return readHintFrom(f.Tool, loc, text, f.Window, from, char)
}
