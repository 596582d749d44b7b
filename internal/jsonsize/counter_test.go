package jsonsize

import (
	"strings"
	"testing"
)

// checkCounter counts s cut at every place given and compares with String.
func checkCounter(t *testing.T, s string, cuts []int) {
	t.Helper()
	var c Counter
	prev := 0
	for _, k := range cuts {
		if k < prev || k > len(s) {
			continue
		}
		c.Write([]byte(s[prev:k]))
		prev = k
	}
	c.Write([]byte(s[prev:]))
	if got, want := c.Total(), int64(String(s)); got != want {
		t.Fatalf("Counter of %q cut at %v: %d, String: %d", s, cuts, got, want)
	}
}

func TestCounterEveryCut(t *testing.T) {
	for _, s := range []string{"", "é日本\u2028x", "\xe2\x80", "\xe2\x80\xa8", "a\xf0\x9f\x98", "\xf0\x9f\x98\x80\xff\xc3", "\xed\xa0\x80é", "\x00\"\\\n"} {
		for i := 0; i <= len(s); i++ {
			for j := i; j <= len(s); j++ {
				checkCounter(t, s, []int{i, j})
				for k := j; k <= len(s); k++ {
					checkCounter(t, s, []int{i, j, k})
				}
			}
		}
	}
	long := strings.Repeat("le renard — «vite» \xff\x00 \u2029", 300)
	checkCounter(t, long, []int{1, 2, 3, 100, 1000, 1001, 4097})
}

func FuzzCounter(f *testing.F) {
	f.Add("é日本\u2028x", 1, 3)
	f.Add("\xf0\x9f\x98\x80\xff\xc3", 2, 5)
	f.Add("\xe2\x80\xa8", 1, 2)
	f.Fuzz(func(t *testing.T, s string, i, j int) {
		if i < 0 {
			i = -i
		}
		if j < 0 {
			j = -j
		}
		checkCounter(t, s, []int{i % (len(s) + 1), j % (len(s) + 1)})
	})
}
