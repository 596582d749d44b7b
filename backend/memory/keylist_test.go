package memory

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestKeyList checks the chunked sorted set against a sorted slice, with
// enough keys to split chunks, and every scan direction and start.
func TestKeyList(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var l keyList
	ref := map[string]bool{}
	for i := 0; i < 20000; i++ {
		k := fmt.Sprintf("k%05d", r.IntN(8000))
		if r.IntN(3) == 0 {
			l.remove(k)
			delete(ref, k)
		} else {
			l.insert(k, nil)
			ref[k] = true
		}
	}
	var want []string
	for k := range ref {
		want = append(want, k)
	}
	slices.Sort(want)
	if l.n != len(want) {
		t.Fatalf("n = %d, want %d", l.n, len(want))
	}
	collect := func(after string, desc bool, limit int) []string {
		var out []string
		l.scan(after, desc, func(k string, _ *memDoc) bool {
			out = append(out, k)
			return len(out) < limit
		})
		return out
	}
	if got := collect("", false, 1<<30); !slices.Equal(got, want) {
		t.Fatalf("ascending scan differs: %d keys, want %d", len(got), len(want))
	}
	rev := slices.Clone(want)
	slices.Reverse(rev)
	if got := collect("", true, 1<<30); !slices.Equal(got, rev) {
		t.Fatalf("descending scan differs")
	}
	for i := 0; i < 500; i++ {
		after := fmt.Sprintf("k%05d", r.IntN(8100))
		if i%50 == 0 {
			after = "z"
		}
		var asc, desc []string
		for _, k := range want {
			if k > after && len(asc) < 7 {
				asc = append(asc, k)
			}
		}
		for _, k := range rev {
			if k < after && len(desc) < 7 {
				desc = append(desc, k)
			}
		}
		if got := collect(after, false, 7); !slices.Equal(got, asc) {
			t.Fatalf("after %s ascending: %v, want %v", after, got, asc)
		}
		if got := collect(after, true, 7); !slices.Equal(got, desc) {
			t.Fatalf("after %s descending: %v, want %v", after, got, desc)
		}
	}
}
