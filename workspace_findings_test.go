package satchel_test

import (
	"context"
	"errors"
	"testing"

	"github.com/satchel-dev/satchel"
)

// TestGrepIncludeExcludes: include follows ripgrep's --glob, where a
// leading "!" excludes the files the rest matches.
func TestGrepIncludeExcludes(t *testing.T) {
	ctx := context.Background()
	ws := newWorkspace(t)
	for p, c := range map[string]string{"a.md": "x\n", "b.go": "x\n", "src/c.md": "x\n", "src/d.txt": "x\n"} {
		if err := ws.Write(ctx, p, c); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		include, under string
		want           []string
	}{
		{"!*.md", "", []string{"b.go", "src/d.txt"}},
		{"*.md", "", []string{"a.md", "src/c.md"}},
		{"!src/**", "", []string{"a.md", "b.go"}},
		{"!*.txt", "src", []string{"src/c.md"}},
	} {
		res, err := ws.Grep(ctx, "x", c.under, satchel.GrepOptions{Include: c.include})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range res.Matches {
			got = append(got, m.Path)
		}
		if len(got) != len(c.want) || (len(got) > 0 && (got[0] != c.want[0] || got[len(got)-1] != c.want[len(c.want)-1])) {
			t.Errorf("include %q under %q: %v, want %v", c.include, c.under, got, c.want)
		}
	}
	if _, err := ws.Grep(ctx, "x", "", satchel.GrepOptions{Include: "!"}); !errors.Is(err, satchel.ErrInvalidPattern) {
		t.Errorf("include \"!\": %v", err)
	}
}
