package inspector

import (
	"math"
	"regexp"
	"strconv"
	"testing"
)

// The style sheet's colour pairs keep the contrast docs/inspector.md
// promises: text at least 7:1 against its background (WCAG AAA), links,
// tags and the focus ring at least 4.5:1.
func TestContrast(t *testing.T) {
	css, err := staticFS.ReadFile("static/style.css")
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	for _, m := range regexp.MustCompile(`--([a-z-]+): (#[0-9a-f]{6})`).FindAllStringSubmatch(string(css), -1) {
		vars[m[1]] = m[2]
	}
	pairs := []struct {
		fg, bg string
		min    float64
	}{
		{"fg", "bg", 7}, {"muted", "bg", 7}, {"add-fg", "add-bg", 7}, {"del-fg", "del-bg", 7},
		{"tag-fg", "tag-bg", 7}, {"muted", "hunk-bg", 7}, {"fg", "hunk-bg", 7},
		{"add-fg", "add-mark", 7}, {"del-fg", "del-mark", 7},
		{"link", "bg", 4.5}, {"fork", "bg", 4.5}, {"focus", "bg", 4.5}, {"lane", "bg", 4.5},
	}
	for _, p := range pairs {
		fg, bg := vars[p.fg], vars[p.bg]
		if fg == "" || bg == "" {
			t.Errorf("style.css has no --%s or --%s", p.fg, p.bg)
			continue
		}
		if r := contrast(fg, bg); r < p.min {
			t.Errorf("--%s on --%s: %.2f:1, want at least %.1f:1", p.fg, p.bg, r, p.min)
		}
	}
}

// contrast is WCAG 2's contrast ratio of two #rrggbb colours.
func contrast(a, b string) float64 {
	la, lb := luminance(a), luminance(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

func luminance(hex string) float64 {
	var c [3]float64
	for i := range c {
		v, _ := strconv.ParseUint(hex[1+2*i:3+2*i], 16, 8)
		s := float64(v) / 255
		if s <= 0.03928 {
			c[i] = s / 12.92
		} else {
			c[i] = math.Pow((s+0.055)/1.055, 2.4)
		}
	}
	return 0.2126*c[0] + 0.7152*c[1] + 0.0722*c[2]
}
