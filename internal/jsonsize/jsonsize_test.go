package jsonsize

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
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

// TestStringRandom compares String with encoding/json on long strings
// drawn from bytes that the word-at-a-time scan treats differently (plain,
// escaped, control, 0x7f, high), at every alignment.
func TestStringRandom(t *testing.T) {
	alphabet := []byte("ab \"\\\n\t\r\x00\x01\x1f\x7f\xc3\xa9\xe2\x80\xa8\xff")
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		b := make([]byte, r.IntN(80))
		for i := range b {
			if r.IntN(4) == 0 {
				b[i] = alphabet[r.IntN(len(alphabet))]
			} else {
				b[i] = 'a' + byte(r.IntN(26))
			}
		}
		s := string(b)
		if got, want := String(s), len(encoded(t, s)); got != want {
			t.Fatalf("String(%q) = %d, encoding/json writes %d bytes", s, got, want)
		}
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
	var w1 strings.Builder // W1's files: 72-character lines
	for k := range 100 {
		line := fmt.Sprintf("line %d of file 1: ", k+1)
		w1.WriteString(line + strings.Repeat("x", 72-len(line)) + "\n")
	}
	for name, s := range map[string]string{"ascii": ascii, "mixed": mixed, "w1": w1.String()} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			b.ReportAllocs()
			for b.Loop() {
				String(s)
			}
		})
	}
}
