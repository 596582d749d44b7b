package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/satcheltest"
)

// TestGrepReadAhead: grep through a cold cache reads its packs from
// PostgreSQL many a query, and finds exactly what it finds reading them
// one a query (the capability hidden).
func TestGrepReadAhead(t *testing.T) {
	ctx := context.Background()
	pg := openDocs(t)
	ws, err := satchel.New(pg).Workspace(ctx, "acme", "main")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 300 {
		content := fmt.Sprintf("file %d\nTODO: item %d\n%s", i, i%11, strings.Repeat("filler line\n", i%40))
		if i%37 == 5 {
			content = strings.Repeat(fmt.Sprintf("large %d TODO\n", i), 40000)
		}
		if err := ws.Write(ctx, fmt.Sprintf("src/d%d/f%03d.go", i%6, i), content); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		regex, under string
		o            satchel.GrepOptions
	}{
		{"TODO", "", satchel.GrepOptions{Limit: 5000}},
		{`item (2|7)$`, "", satchel.GrepOptions{}},
		{"TODO", "src/d3", satchel.GrepOptions{Include: "f1*"}},
		{"TODO", "", satchel.GrepOptions{Limit: 40}},
	} {
		grep := func(b backend.Backend) satchel.GrepResult {
			t.Helper()
			w, err := satchel.New(b, satchel.WithCacheBytes(1<<20)).Workspace(ctx, "acme", "main")
			if err != nil {
				t.Fatal(err)
			}
			res, err := w.Grep(ctx, c.regex, c.under, c.o)
			if err != nil {
				t.Fatalf("grep %q: %v", c.regex, err)
			}
			return res
		}
		want := grep(satcheltest.Hide[backend.PacksReader](pg))
		if diff := cmp.Diff(want, grep(pg)); diff != "" || len(want.Matches) == 0 {
			t.Errorf("grep %q in %q (%d matches): with PacksReader differs (-without +with):\n%s", c.regex, c.under, len(want.Matches), diff)
		}
	}
}
