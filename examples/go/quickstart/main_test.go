package main

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
)

// TestRun builds the example (go test compiles it) and runs it on
// memory and on a SQLite file.
func TestRun(t *testing.T) {
	const want = `2| 1. read
3| 2. think
refused: anchor occurs 3 times in notes/plan.md, expected exactly one
--- a/notes/plan.md
+++ b/notes/plan.md
@@ -1,4 +1,4 @@
 # Plan
 1. read
-2. think
+2. think hard
 3. write
experiment: 2. think
escaped: true
`
	for _, dsn := range []string{"memory:", filepath.Join(t.TempDir(), "quickstart.db")} {
		var out bytes.Buffer
		if err := run(context.Background(), dsn, &out); err != nil {
			t.Fatalf("%s: %v", dsn, err)
		}
		if out.String() != want {
			t.Errorf("%s: printed\n%s\nwant\n%s", dsn, out.String(), want)
		}
	}
}
