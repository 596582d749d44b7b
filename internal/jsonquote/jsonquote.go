// Package jsonquote writes strings as JSON strings, byte for byte as
// encoding/json does, without its reflection or allocations: for the
// hand-written encoders of hot paths (documents, commit metadata, MCP
// answers).
package jsonquote

import "unicode/utf8"

// Append appends s to b as a JSON string, as encoding/json writes it:
// invalid UTF-8 becomes U+FFFD, U+2028 and U+2029 are escaped, and with
// html <, > and & are escaped too (json.Marshal's default).
func Append[S string | []byte](b []byte, s S, html bool) []byte {
	if html {
		return appendQuoted(b, s, &htmlSafe)
	}
	return appendQuoted(b, s, &plainSafe)
}

const hexDigits = "0123456789abcdef"

// plainSafe and htmlSafe tell which ASCII bytes encoding/json writes as
// they are, without and with HTML escaping.
var plainSafe, htmlSafe = func() (plain, html [utf8.RuneSelf]bool) {
	for c := byte(0x20); c < utf8.RuneSelf; c++ {
		plain[c] = c != '"' && c != '\\'
		html[c] = plain[c] && c != '<' && c != '>' && c != '&'
	}
	return plain, html
}()

// appendQuoted quotes s as a JSON string, writing the ASCII bytes safe
// marks as they are and escaping the others as encoding/json does.
func appendQuoted[S string | []byte](b []byte, s S, safe *[utf8.RuneSelf]bool) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if safe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default: // other control characters; <, > and & when escaped
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		n := min(len(s)-i, utf8.UTFMax)
		r, size := utf8.DecodeRuneInString(string(s[i : i+n]))
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
