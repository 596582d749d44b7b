//go:build !unix

package spill

import "io/fs"

// checkOwner does nothing where ownership is not a uid: on Windows the
// directory's ACL (inherited from the user's cache directory) guards it.
func checkOwner(fs.FileInfo) error { return nil }
