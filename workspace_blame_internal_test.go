package satchel

import "testing"

// TestMayTouch: a commit is passed over only when its summary, whole,
// names neither the path nor a directory above it.
func TestMayTouch(t *testing.T) {
	meta := func(op, sum string) []byte { return appendMeta(nil, op, []byte(sum), Actor{}, "") }
	for _, c := range []struct {
		op, sum, path string
		want          bool
	}{
		{"write", "write a/b.txt", "a/b.txt", true},
		{"write", "write a/b.txt", "a/c.txt", false},
		{"write", "write a/b.txt.bak", "a/b.txt", false},
		{"move", "move a/x -> a/b.txt", "a/b.txt", true},
		{"move", "move a/b.txt -> c", "a/b.txt", true},
		{"batch", "write x; delete a", "a/b.txt", true},
		{"batch", "write x; write y…", "a/b.txt", true},
		{"delete", "delete ab", "a/b.txt", false},
		{"restore", "restore to 3", "a/b.txt", true},
		{"merge", "merge of t@2", "a/b.txt", true},
		{"write", "write xa/b.txt", "a/b.txt", false},
	} {
		if got := mayTouch(meta(c.op, c.sum), c.path); got != c.want {
			t.Errorf("mayTouch(%s %q, %s) = %v", c.op, c.sum, c.path, got)
		}
	}
}
