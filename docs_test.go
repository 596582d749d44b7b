package satchel_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestDocsHaveNoConflictMarkers: no Markdown file of the project keeps a
// merge's conflict markers outside a code block (where docs/parallel.md
// shows them on purpose).
func TestDocsHaveNoConflictMarkers(t *testing.T) {
	var files []string
	for _, pattern := range []string{"*.md", "docs/*.md", "docs/*/*.md"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 10 {
		t.Fatalf("found only %d Markdown files", len(files))
	}
	marker := regexp.MustCompile(`^(<<<<<<< |>>>>>>> |\|\|\|\|\|\|\| |=======$)`)
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		fenced := false
		for i, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "```") {
				fenced = !fenced
				continue
			}
			if !fenced && marker.MatchString(line) {
				t.Errorf("%s:%d: a merge's conflict marker: %q", name, i+1, line)
			}
		}
	}
}

// TestDecisionsIndexed: every decision has one row in
// docs/decisions/README.md, the rows are in numeric order, and every row
// links a decision that exists.
func TestDecisionsIndexed(t *testing.T) {
	files, err := filepath.Glob("docs/decisions/[0-9][0-9][0-9][0-9]-*.md")
	if err != nil {
		t.Fatal(err)
	}
	for i := range files {
		files[i] = filepath.Base(files[i])
	}
	index, err := os.ReadFile("docs/decisions/README.md")
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, m := range regexp.MustCompile(`(?m)^\| \d{4} \| \[[^\n]*?\]\((\d{4}-[^)]+\.md)\)`).FindAllStringSubmatch(string(index), -1) {
		rows = append(rows, m[1])
	}
	if !slices.IsSorted(rows) {
		t.Errorf("the decisions' rows are not in numeric order")
	}
	slices.Sort(files)
	sorted := slices.Clone(rows)
	slices.Sort(sorted)
	if !slices.Equal(files, sorted) {
		for _, f := range files {
			if !slices.Contains(rows, f) {
				t.Errorf("decision %s has no row in docs/decisions/README.md", f)
			}
		}
		for _, r := range rows {
			if !slices.Contains(files, r) {
				t.Errorf("docs/decisions/README.md links %s, which does not exist", r)
			}
		}
		if len(rows) != len(slices.Compact(sorted)) {
			t.Errorf("a decision has more than one row")
		}
	}
}
