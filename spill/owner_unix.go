//go:build unix

package spill

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// checkOwner refuses a session directory that belongs to another user: its
// owner could read the names of, rename or replace the files written in it.
func checkOwner(fi fs.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if int(st.Uid) != os.Geteuid() {
		return errors.New("belongs to another user")
	}
	return nil
}
