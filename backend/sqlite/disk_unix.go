//go:build unix

package sqlite

import (
	"path/filepath"
	"syscall"
)

// writable reports whether this process may write the file at path and
// create files beside it (the write-ahead log and its index). It is false
// on a read-only mount whoever asks.
func writable(path string) bool {
	return syscall.Access(path, 2) == nil && syscall.Access(filepath.Dir(path), 2) == nil // W_OK
}

// diskFull reports whether the file system holding dir has no room left
// for another page of SQLite's (less than 64 KiB available).
func diskFull(dir string) bool {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return false
	}
	return uint64(st.Bavail)*uint64(st.Bsize) < 64<<10
}
