package satchel_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
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

// TestRefusedRegexNamedShort: a refused regex is named by its first 100
// characters, not all of it.
func TestRefusedRegexNamedShort(t *testing.T) {
	ctx := context.Background()
	ws := newWorkspace(t)
	long := "(" + strings.Repeat("a", 3000)
	_, err := ws.Grep(ctx, long, "", satchel.GrepOptions{})
	want := "invalid regex " + strconv.Quote(long[:100]) + "...: missing closing ): " + strconv.Quote(long[:100]) + "..."
	if !errors.Is(err, satchel.ErrInvalidPattern) || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	_, err = ws.Grep(ctx, "(", "", satchel.GrepOptions{})
	if err == nil || err.Error() != "invalid regex \"(\": missing closing ): `(`" {
		t.Errorf("short: %v", err)
	}
}
