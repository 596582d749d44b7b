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

// TestStringRandom compares String with encoding/json on strings drawn
// from bytes that the scans treat differently (plain, escaped, control,
// 0x7f, high), at every alignment, short and long, with specials dense
// and sparse (so that long strings have plain blocks between them).
func TestStringRandom(t *testing.T) {
	alphabet := []byte("ab \"\\\n\t\r\x00\x01\x1f\x7f\xc3\xa9\xe2\x80\xa8\xff")
	r := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		b := make([]byte, r.IntN(400))
		sparse := 1 + r.IntN(100)
		for i := range b {
			if r.IntN(4*sparse) == 0 {
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

// TestStringBlocks puts each byte or character the scans treat apart at
// every position of strings of every length up to three 64-byte blocks,
// around the length at which String changes method, in plain text and in
// text with newlines.
func TestStringBlocks(t *testing.T) {
	specials := []string{
		"\n", "\t", "\r", "\b", "\f", "\x00", "\x0b", "\x1f", " ", "\x7f", `"`, `\`,
		"é", "\u2028", "\u2029", "\u2027", "\u202a", "日", "😀", "\ufffd",
		"\xff", "\x80", "\xc3", "\xe2\x80", "\xe0\x80\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80",
	}
	plain := strings.Repeat("abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456789.", 4)
	lined := strings.Repeat("line of text\n", 20)
	for _, base := range []string{plain, lined} {
		for n := range 3*64 + 9 {
			check(t, base[:n])
			for p := 0; p <= n; p++ {
				for _, c := range specials {
					check(t, base[:p]+c+base[p:n])
				}
			}
		}
	}
}

// TestStringControls covers the ways String counts control characters in
// long strings: none but newlines, tabs and carriage returns besides, and
// others.
func TestStringControls(t *testing.T) {
	line := strings.Repeat("x", 70)
	for _, c := range []string{"", "\t", "\r", "\t\r", "\b", "\f", "\x00", "\x01\t", "\x1f\r"} {
		for _, s := range []string{
			strings.Repeat(line+c+"\n", 10),
			strings.Repeat(c+line, 10),
			strings.Repeat("é"+c+line, 10),
		} {
			check(t, s)
		}
	}
}

// check compares String with encoding/json on s, and the method for long
// strings too, whatever the length from which String uses it.
func check(t *testing.T, s string) {
	t.Helper()
	want := len(encoded(t, s))
	if got := String(s); got != want {
		t.Fatalf("String(%q) = %d, encoding/json writes %d bytes", s, got, want)
	}
	if len(s) >= 8 {
		if got := long(s); got != want {
			t.Fatalf("long(%q) = %d, encoding/json writes %d bytes", s, got, want)
		}
	}
}

func FuzzString(f *testing.F) {
	for _, s := range []string{"", "abc", "\"\\", "\x00\x1f\x7f", "\n\r\t\b\f", "é日本", "\xff\xfe", "\u2028\u2029", "<&>", "\xed\xa0\x80", "\xf4\x90\x80\x80"} {
		f.Add(s)
	}
	// Long enough for the block scan, with a little of everything.
	f.Add(strings.Repeat("line 1 of the file: \"quoted\" \\ back\n", 4))
	f.Add(strings.Repeat("\tif x {\r\n\t\treturn \"é\u2028\"\n\t}\n", 5))
	f.Add(strings.Repeat("le renard — «vite» \xff\x00 ", 6))
	f.Fuzz(check)
}

func BenchmarkString(b *testing.B) {
	ascii := strings.Repeat("the quick brown fox jumps over the lazy dog\n", 170) // about 7.3 KiB
	mixed := strings.Repeat("le renard brun rapide saute par-dessus le chien paresseux — «vite»\n", 110)
	var w1 strings.Builder // W1's files: 72-character lines
	for k := range 100 {
		line := fmt.Sprintf("line %d of file 1: ", k+1)
		w1.WriteString(line + strings.Repeat("x", 72-len(line)) + "\n")
	}
	path := "notes/d07/n1.md" // every write counts its path too
	for name, s := range map[string]string{"ascii": ascii, "mixed": mixed, "w1": w1.String(), "path": path} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			b.ReportAllocs()
			for b.Loop() {
				String(s)
			}
		})
	}
}
