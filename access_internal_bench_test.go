package satchel

import (
	"testing"

	"github.com/satchel-dev/satchel/internal/filerules"
)

// BenchmarkScanGate measures the check of one path in a scan of W1's
// paths under ten rules (one of which, **/.env, may match in every
// directory).
func BenchmarkScanGate(b *testing.B) {
	r, err := filerules.Parse("secrets/**=none,private/**=none,vendor/**=read,docs/**=read,*.lock=read," +
		"build/**=read,tmp/**/*.bak=read,archive/**=read,**/.env=none,**=rw")
	if err != nil {
		b.Fatal(err)
	}
	g := &gate{sets: []FileRules{r}, hides: true}
	paths := make([]string, 2000)
	for i := range paths {
		paths[i] = "notes/d" + string(rune('0'+i/20%10)) + string(rune('0'+i/200)) + "/f" + string(rune('0'+i%10)) + ".md"
	}
	b.Run("scan", func(b *testing.B) {
		for b.Loop() {
			sg := scanGate{g: g}
			for _, p := range paths {
				sg.visible(p)
			}
		}
	})
	b.Run("point", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			g.access(paths[i%len(paths)])
		}
	})
	b.Run("rules-of", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			r.Of(paths[i%len(paths)])
		}
	})
}
