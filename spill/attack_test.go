package spill

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// A spill file's name never starts with "-" (it would read as an option
// to rm or cat): the random part's first character, base64url, could be
// one.
func TestAttackSpillNameNeverStartsWithDash(t *testing.T) {
	for b := range 256 {
		r := bytes.NewReader(append([]byte{byte(b)}, make([]byte, 8)...))
		part, err := randomPart(r)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(part, "-") || len(part) != randomLen {
			t.Fatalf("random part %q from a first byte %#x", part, b)
		}
	}
	f := newFS(t)
	f.rand = bytes.NewReader(append([]byte{0xf8}, make([]byte, 8)...)) // base64url "-" first
	loc, err := f.Save(context.Background(), "owner", "-rf", "x")
	if err != nil {
		t.Fatal(err)
	}
	if name := filepath.Base(string(loc)); strings.HasPrefix(name, "-") {
		t.Fatalf("spill file %q starts with -", name)
	}
}
