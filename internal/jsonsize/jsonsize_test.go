package jsonsize

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// encoded returns what encoding/json writes for s, without HTML escaping
// and without the newline the encoder adds.
func encoded(t testing.TB, s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

func TestString(t *testing.T) {
	tests := map[string]int{
		"":                2,
		"abc":             5,
		`a"b`:             6,
		`a\b`:             6,
		"\n\r\t\b\f":      12,
		"\x00":            8,
		"\x1f":            8,
		"\x7f":            3,
		"<>&":             5,
		"é":               4,
		"日本":              8,
		"\xff":            8,
		"\xe6\x97":        14, // a truncated three-byte rune: two bad bytes
		"\u2028\u2029":    14,
		"\ufffd":          5,  // a real U+FFFD is written as is
		"\xed\xa0\x80":    20, // a surrogate: three bad bytes
		"notes/d07/n1.md": 17,
		"a\u2028b\xffc\n": 19,
	}
	for s, want := range tests {
		if got := String(s); got != want {
			t.Errorf("String(%q) = %d, want %d", s, got, want)
		}
		if enc := encoded(t, s); len(enc) != want {
			t.Errorf("encoding/json writes %q for %q: %d bytes, the table says %d", enc, s, len(enc), want)
		}
	}
	if got := Entry("a.md", "x\n"); got != 6+5 {
		t.Errorf("Entry = %d, want 11", got)
	}
}

func TestStringAllocs(t *testing.T) {
	s := strings.Repeat("héllo \"wörld\"\n\x00\xff\u2028", 100)
	if n := testing.AllocsPerRun(100, func() { String(s) }); n != 0 {
		t.Errorf("String allocates %v times", n)
	}
}

func FuzzString(f *testing.F) {
	for _, s := range []string{"", "abc", "\"\\", "\x00\x1f\x7f", "\n\r\t\b\f", "é日本", "\xff\xfe", "\u2028\u2029", "<&>", "\xed\xa0\x80", "\xf4\x90\x80\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := String(s), len(encoded(t, s)); got != want {
			t.Fatalf("String(%q) = %d, encoding/json writes %d bytes", s, got, want)
		}
	})
}

func BenchmarkString(b *testing.B) {
	ascii := strings.Repeat("the quick brown fox jumps over the lazy dog\n", 170) // about 7.3 KiB
	mixed := strings.Repeat("le renard brun rapide saute par-dessus le chien paresseux — «vite»\n", 110)
	for name, s := range map[string]string{"ascii": ascii, "mixed": mixed} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			b.ReportAllocs()
			for b.Loop() {
				String(s)
			}
		})
	}
}
