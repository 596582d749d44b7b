package satchel

import "github.com/satchel-dev/satchel/internal/udiff"

// DiffText is the unified diff that turns a into b, with three lines of
// context, as DiffFile writes it for a file (named oldName and newName on
// its "---" and "+++" lines), or "" when they are equal: for tools that
// compare contents of different paths (a file renamed and changed).
func DiffText(oldName, newName, a, b string) string {
	return udiff.Unified(oldName, newName, a, b, 3)
}
