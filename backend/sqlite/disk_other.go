//go:build !unix

package sqlite

import "os"

// writable reports whether this process may open the file at path for
// writing (the directory is not checked here).
func writable(path string) bool {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return false
	}
	f.Close()
	return true
}

// diskFull is unknown here: false.
func diskFull(dir string) bool { return false }
