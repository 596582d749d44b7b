package memory

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestKeyList checks the chunked sorted set against a sorted slice, with
// enough keys to split chunks, and every scan direction and start: with
// short keys, and with keys whose first 8 or 16 bytes (keyDoc.pre) are
// often equal, some ending in zero bytes.
func TestKeyList(t *testing.T) {
	t.Run("short", func(t *testing.T) {
		testKeyList(t, func(r *rand.Rand) string { return fmt.Sprintf("k%05d", r.IntN(8000)) })
	})
	t.Run("long", func(t *testing.T) {
		testKeyList(t, func(r *rand.Rand) string {
			k := []string{"company:", "company", "compan\x00", "", "company:company:", "company:company:company:"}[r.IntN(6)] + fmt.Sprint(r.IntN(2000))
			return k + []string{"", "\x00", "\x00\x00", ":x"}[r.IntN(4)]
		})
	})
}

func testKeyList(t *testing.T, key func(*rand.Rand) string) {
	r := rand.New(rand.NewPCG(1, 2))
	var l keyList
	ref := map[string]bool{}
	for i := 0; i < 20000; i++ {
		k := key(r)
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
		after := key(r)
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

// BenchmarkKeyListInsertW2 inserts W2's 100,000 keys in W2's order (the
// company varies fastest, so each insert lands in the middle of the list).
func BenchmarkKeyListInsertW2(b *testing.B) {
	const n = 100000
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("c%04d:t%03d", i%1000, i/1000)
	}
	d := &memDoc{}
	b.ReportAllocs()
	for b.Loop() {
		var l keyList
		for _, k := range keys {
			l.insert(k, d)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/insert")
}

// TestKeyListSmall runs a list through its small states (empty, one key
// held without a chunk, a few keys) and back, checking every step.
func TestKeyListSmall(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var l keyList
	ref := map[string]*memDoc{}
	for i := 0; i < 5000; i++ {
		k := []string{"a", "b", "c", "a\x00", "abcdefghij", "abcdefghijklmnopq", "abcdefghijklmnop\x00"}[r.IntN(7)]
		if r.IntN(2) == 0 {
			l.remove(k)
			delete(ref, k)
		} else {
			d := &memDoc{}
			l.insert(k, d)
			ref[k] = d
		}
		var want []string
		for k := range ref {
			want = append(want, k)
		}
		slices.Sort(want)
		var got []string
		l.scan("", false, func(k string, d *memDoc) bool {
			if ref[k] != d {
				t.Fatalf("step %d: key %q has another document", i, k)
			}
			got = append(got, k)
			return true
		})
		if !slices.Equal(got, want) || l.n != len(want) {
			t.Fatalf("step %d: keys %q (n %d), want %q", i, got, l.n, want)
		}
		var desc []string
		l.scan("b", true, func(k string, _ *memDoc) bool { desc = append(desc, k); return true })
		var wantDesc []string
		for j := len(want) - 1; j >= 0; j-- {
			if want[j] < "b" {
				wantDesc = append(wantDesc, want[j])
			}
		}
		if !slices.Equal(desc, wantDesc) {
			t.Fatalf("step %d: before b descending %q, want %q", i, desc, wantDesc)
		}
	}
}
