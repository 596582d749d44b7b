// Package jsonsize measures strings as Go's encoding/json writes them, so
// that workspace bounds (DESIGN §2.4) count bytes the way a JSON
// serialisation stores them, without serialising anything.
//
// A workspace's size is the total of every path and every content encoded
// as a JSON string with HTML escaping off: quotes included, `"` and `\`
// escaped, control characters escaped (\b, \f, \n, \r and \t in short form,
// the rest as \u00XX), invalid UTF-8 as \ufffd, one per bad byte, and U+2028
// and U+2029 as \u2028 and \u2029.
//
// Counting runs on every mutation, so it does not allocate and reads plain
// text a word at a time or faster. A short string is counted a word at a
// time. In a longer one, strings.Count (vectorised in the standard
// library) counts the newlines, quotes and backslashes, one byte more each
// wherever they are, so that the scan of 64 bytes at a time has only to
// count the bytes below 0x20, newlines in most text, and to stop at the
// blocks with a byte at or above 0x80.
package jsonsize

import (
	"math/bits"
	"strings"
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
	if len(s) >= minLong {
		return long(s)
	}
	// Plain ASCII eight bytes at a time, counting the bytes that are
	// escaped instead of stopping at each (text has a newline every line).
	// When no byte of a word is 0x80 or above, adding to it carries out of
	// no byte, so each test below is exact per byte.
	n := len(s) + 2
	i := 0
	for i < len(s) {
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
		if c := s[i]; c < utf8.RuneSelf {
			n += int(extra[c])
			i++
			continue
		}
		e, size := char(s[i:])
		n += e
		i += size
	}
	return n
}

// minLong is the length from which long's passes of strings.Count pay
// for themselves.
const minLong = 96

// long is String for strings of minLong bytes or more (at least a word).
func long(s string) int {
	// A newline, quote or backslash byte is always one byte more: UTF-8
	// uses no byte below 0x80 inside another character.
	nl := strings.Count(s, "\n")
	n := len(s) + 2 + nl + strings.Count(s, `"`) + strings.Count(s, `\`)
	ctrl := 0 // bytes below 0x20, newlines included
	i := 0
	for i+64 <= len(s) {
		b := s[i : i+64]
		w0, w1, w2, w3 := load64(b, 0), load64(b, 8), load64(b, 16), load64(b, 24)
		w4, w5, w6, w7 := load64(b, 32), load64(b, 40), load64(b, 48), load64(b, 56)
		if (w0|w1|w2|w3|w4|w5|w6|w7)&highs == 0 {
			// A byte below 0x80 is 0x20 or above when bit 5 or 6 is set:
			// bit 5 of w|w>>1. Summed per byte over four words, at most
			// 0x80; then over the block, at most 64.
			a := (w0|w0>>1)&bit5 + (w1|w1>>1)&bit5 + (w2|w2>>1)&bit5 + (w3|w3>>1)&bit5
			b := (w4|w4>>1)&bit5 + (w5|w5>>1)&bit5 + (w6|w6>>1)&bit5 + (w7|w7>>1)&bit5
			ctrl += 64 - int((a>>5+b>>5)*ones>>56)
			i += 64
			continue
		}
		var c, e int
		i, c, e = scan(s, i, i+64)
		ctrl, n = ctrl+c, n+e
	}
	if i < len(s) {
		_, c, e := scan(s, i, len(s))
		ctrl, n = ctrl+c, n+e
	}
	if ctrl != nl {
		n += controls(s, ctrl, nl)
	}
	return n
}

// scan counts the bytes below 0x20 from s[i] up to the end of the word or
// character at s[end-1], and the bytes more than their own that the
// characters at or above 0x80 there take encoded. It returns where it
// stopped.
func scan(s string, i, end int) (stop, ctrl, more int) {
	for i < end {
		var w uint64
		if i+8 <= len(s) {
			w = load64(s, i)
		} else {
			w = tail(s, i)
		}
		h := w & highs
		if h == 0 {
			ctrl += 8 - bits.OnesCount64((w|w<<1)&bit6)
			i += 8
			continue
		}
		// The bytes before the first at or above 0x80, then its character.
		k := bits.TrailingZeros64(h) / 8
		ctrl += k - bits.OnesCount64((w|w<<1)&bit6&(1<<(8*k)-1))
		e, size := char(s[i+k:])
		more += e
		i += k + size
	}
	return i, ctrl, more
}

// char returns the bytes more than its own that the character starting at
// s[0], at or above 0x80, takes encoded, and its length. It reads the
// two- and three-byte characters of text itself and leaves the rest, and
// bad bytes, to utf8.DecodeRuneInString.
func char(s string) (more, size int) {
	const cont = 0xc0 // continuation bytes are 0b10xxxxxx
	switch c := s[0]; {
	case len(s) >= 2 && 0xc2 <= c && c < 0xe0 && s[1]&cont == 0x80:
		return 0, 2
	case len(s) >= 3 && 0xe1 <= c && c < 0xf0 && c != 0xed && s[1]&cont == 0x80 && s[2]&cont == 0x80:
		// U+1000 to U+FFFF but for E0 (overlong forms) and ED (surrogates).
		if c == 0xe2 && s[1] == 0x80 && s[2]&^1 == 0xa8 {
			return 3, 3 // U+2028 or U+2029 becomes \u2028
		}
		return 0, 3
	}
	r, size := utf8.DecodeRuneInString(s)
	switch {
	case r == utf8.RuneError && size == 1:
		return 5, 1 // one byte becomes \ufffd
	case r == '\u2028' || r == '\u2029':
		return 3, size // three bytes become \u2028
	}
	return 0, size
}

// controls returns the bytes more than one that the bytes of s below 0x20
// take encoded, but for the newlines: s has ctrl bytes below 0x20, nl of
// them newlines.
func controls(s string, ctrl, nl int) int {
	// Tabs and carriage returns are the others that text has.
	if t := strings.Count(s, "\t") + strings.Count(s, "\r"); ctrl == nl+t {
		return t
	}
	more := 0
	for i := range len(s) {
		if c := s[i]; c < 0x20 {
			more += int(extra[c])
		}
	}
	return more - nl
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
	bit5  = 0x2020202020202020
	bit6  = 0x4040404040404040
	plain = 'a' * ones // bytes written as themselves
)

// load64 reads s[i:i+8] as a word, s[i] in its low byte whatever the
// machine's byte order; the compiler makes it one load where it can.
func load64(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// tail reads the fewer than eight bytes s[i:] of a string of at least
// eight as load64 does, with plain bytes after them.
func tail(s string, i int) uint64 {
	r := uint(len(s) - i)
	return load64(s, len(s)-8)>>(8*(8-r)) | plain<<(8*r)
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
