package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestInit(t *testing.T) {
	dir := t.TempDir()
	proj := filepath.Join(dir, "proj")
	db := filepath.Join(proj, "satchel.db")
	var out, errb bytes.Buffer
	code := Main([]string{"--db", db, "init", proj}, strings.NewReader(""), &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, p := range []string{"stores", "agents", "satchel.db"} {
		if _, err := os.Stat(filepath.Join(proj, p)); err != nil {
			t.Errorf("init did not create %s: %v", p, err)
		}
	}
	if !strings.Contains(out.String(), "created "+filepath.Join(proj, "stores")) {
		t.Errorf("output %q does not list what was created", out.String())
	}
	out.Reset()
	if code := Main([]string{"--db", db, "init", proj}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("second init: exit %d", code)
	}
	if strings.Contains(out.String(), "created") {
		t.Errorf("a second init created something: %q", out.String())
	}
}
