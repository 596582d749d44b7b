package spill

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/satchel-dev/satchel/internal/errs"
)

// Prune is the operator's explicit cleanup of a filesystem spill root (""
// means DefaultRoot): it removes the spill files last modified more than
// olderThan ago (0 means every spill file), then the session directories
// that were already that old and are left empty. It returns how many files
// it removed.
//
// It touches only what has the layout Save writes: directories named
// "session-<64 hex>" directly in root holding regular files named
// "<random>-<safe_name>". Anything else (other files, symlinks, deeper
// directories) is left alone, and no symlink is ever followed. A root that
// does not exist has nothing to prune. Errors do not stop the walk; they
// are returned together at its end. A negative olderThan is refused with
// kind errs.ErrInvalidArgument.
func Prune(root string, olderThan time.Duration) (removed int, err error) {
	if olderThan < 0 {
		return 0, errs.New(errs.ErrInvalidArgument, "olderThan must not be negative, was %v", olderThan)
	}
	if root == "" {
		root = DefaultRoot()
	}
	cutoff := time.Now().Add(-olderThan)
	r, err := os.OpenRoot(root)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer r.Close()
	entries, err := readDir(r)
	if err != nil {
		return 0, err
	}
	var failures []error
	for _, e := range entries {
		if !e.IsDir() || !isSessionDir(e.Name()) {
			continue
		}
		n, err := pruneSession(r, e.Name(), cutoff)
		removed += n
		if err != nil {
			failures = append(failures, fmt.Errorf("spill: prune %s: %w", e.Name(), err))
		}
	}
	return removed, errors.Join(failures...)
}

// pruneSession prunes one session directory of r.
func pruneSession(r *os.Root, name string, cutoff time.Time) (removed int, err error) {
	fi, err := r.Lstat(name)
	if err != nil || !fi.IsDir() { // a symlink is not IsDir: skipped
		return 0, err
	}
	dir, err := r.OpenRoot(name)
	if err != nil {
		return 0, err
	}
	defer dir.Close()
	d, err := dir.Open(".")
	if err != nil {
		return 0, err
	}
	dfi, err := d.Stat()
	d.Close()
	if err != nil {
		return 0, err
	}
	if !os.SameFile(fi, dfi) {
		return 0, errors.New("changed while it was being opened")
	}
	entries, err := readDir(dir)
	if err != nil {
		return 0, err
	}
	var failures []error
	left := len(entries)
	for _, e := range entries {
		if !e.Type().IsRegular() || !isSpillFileName(e.Name()) {
			continue
		}
		efi, err := dir.Lstat(e.Name())
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				failures = append(failures, err)
			}
			continue
		}
		if !efi.Mode().IsRegular() || !efi.ModTime().Before(cutoff) {
			continue
		}
		if err := dir.Remove(e.Name()); err != nil && !errors.Is(err, fs.ErrNotExist) {
			failures = append(failures, err)
			continue
		}
		removed++
		left--
	}
	// The directory's own time is from before this prune touched it: a
	// directory a Save has just made (or is writing in) is young, and stays.
	if left == 0 && fi.ModTime().Before(cutoff) {
		// Fails harmlessly (not empty) when a Save wrote in it meanwhile.
		_ = r.Remove(name)
	}
	return removed, errors.Join(failures...)
}

func readDir(r *os.Root) ([]fs.DirEntry, error) {
	d, err := r.Open(".")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.ReadDir(-1)
}
