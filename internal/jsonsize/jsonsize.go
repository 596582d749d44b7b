// Package jsonsize measures strings as Go's encoding/json writes them, so
// that workspace bounds (DESIGN §2.4) count bytes the way a JSON
// serialisation stores them, without serialising anything.
//
// A workspace's size is the total of every path and every content encoded
// as a JSON string with HTML escaping off: quotes included, `"` and `\`
// escaped, control characters escaped (\b, \f, \n, \r and \t in short form,
// the rest as \u00XX), invalid UTF-8 as \ufffd, one per bad byte, and U+2028
// and U+2029 as \u2028 and \u2029. Counting runs on every mutation, so it
// neither allocates nor decodes ASCII byte by byte more than it must.
package jsonsize

import (
	"math/bits"
	"unicode/utf8"
)

// extra[b] is how many bytes more than one an ASCII byte b takes encoded.
var extra = func() (t [utf8.RuneSelf]uint8) {
	for b := range 0x20 {
		t[b] = 5 // \u00XX
	}
	for _, b := range []byte{'\b', '\f', '\n', '\r', '\t', '"', '\\'} {
		t[b] = 1 // \n and the like
	}
	return t
}()

// String returns the number of bytes encoding/json writes for s as a JSON
// string with SetEscapeHTML(false), quotes included.
func String(s string) int {
	n := len(s) + 2
	i := 0
	for i < len(s) {
		// Plain ASCII, eight bytes at a time, counting the bytes that are
		// escaped instead of stopping at each (text has a newline every
		// line). When no byte of a word is 0x80 or above, adding to it
		// carries out of no byte, so each test below is exact per byte.
		for ; i+8 <= len(s); i += 8 {
			w := load64(s, i)
			if w&highs != 0 {
				break
			}
			esc := is(w, '"') | is(w, '\\')
			if ctrl := ^(w + 0x60*ones) & highs; ctrl != 0 { // bytes below 0x20
				if ctrl != is(w, '\n') {
					for k := i; k < i+8; k++ {
						n += int(extra[s[k]])
					}
					continue
				}
				esc |= ctrl // newlines: \n
			}
			n += bits.OnesCount64(esc)
		}
		if i == len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			n += int(extra[c])
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			n += 5 // one byte becomes \ufffd
		case r == '\u2028' || r == '\u2029':
			n += 3 // three bytes become \u2028
		}
		i += size
	}
	return n
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// load64 reads s[i:i+8] as a little-endian word; the compiler makes it one load.
func load64(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// is returns a mask with the high bit set in the bytes of w equal to c,
// for a word w with no byte at or above 0x80 (so no addition carries).
func is(w uint64, c byte) uint64 {
	x := w ^ uint64(c)*ones
	return ^(x + 0x7f*ones) & highs
}

// Entry returns the bytes a file counts towards a workspace's bound: its
// path and its content, each as a JSON string.
func Entry(path, content string) int { return String(path) + String(content) }
