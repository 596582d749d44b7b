package engine

import (
	"fmt"
	"testing"
)

// TestPartsViews: a view is taken again only for the parts it was made
// from (the same slice, or the same whole string), not for another pack
// or a rewritten one; the oldest is dropped past the bound.
func TestPartsViews(t *testing.T) {
	var c partsViews
	parts := []string{"h", "a", "b"}
	v := &packView{id: 1}
	c.put(1, parts, v)
	if got, ok := c.get(1, parts); !ok || got != v {
		t.Fatalf("get of the parts put: %v, %v", got, ok)
	}
	if _, ok := c.get(2, parts); ok {
		t.Error("a view found for another pack's id")
	}
	if _, ok := c.get(1, append([]string(nil), parts...)); ok {
		t.Error("a view found for other parts of the same id (a rewritten pack)")
	}
	if _, ok := c.get(1, parts[:2]); ok {
		t.Error("a view found for fewer parts")
	}
	w := &packView{id: 3}
	c.put(3, []string{"whole pack"}, w)
	if got, ok := c.get(3, []string{"whole pack"}); !ok || got != w {
		t.Errorf("get of a whole pack: %v, %v", got, ok)
	}
	if _, ok := c.get(3, []string{"rewritten"}); ok {
		t.Error("a view found for a rewritten whole pack")
	}
	for i := range partsViewsSize {
		c.put(int64(100+i), []string{fmt.Sprint(i)}, &packView{})
	}
	if _, ok := c.get(1, parts); ok {
		t.Errorf("a view kept past the bound of %d", partsViewsSize)
	}
}

// BenchmarkReadObjectsOneByOne reads each object of a pack of 10,000
// objects kept as parts, as a reader of a commit's files one by one does:
// parsing the header for each read (parse) or through the views (views).
func BenchmarkReadObjectsOneByOne(b *testing.B) {
	var pb packBuilder
	for i := range 10_000 {
		pb.addString(kindTombstone, fmt.Sprintf("file %d\n", i))
	}
	parts := pb.parts()
	b.Run("parse", func(b *testing.B) {
		for b.Loop() {
			for i := range 10_000 {
				v, err := parsePackParts(1, parts)
				if err != nil {
					b.Fatal(err)
				}
				_, _, _ = v.object(uint32(i))
			}
		}
	})
	b.Run("views", func(b *testing.B) {
		var c partsViews
		for b.Loop() {
			for i := range 10_000 {
				v, ok := c.get(1, parts)
				if !ok {
					var err error
					if v, err = parsePackParts(1, parts); err != nil {
						b.Fatal(err)
					}
					c.put(1, parts, v)
				}
				_, _, _ = v.object(uint32(i))
			}
		}
	})
}
