package mcpserver

import "strings"

// jsonLines lays out one line of JSON one value a line, for a spill that
// read_file pages through by lines: the members of the outer object or
// array each on a line, and the items of an array among them (a page's
// documents) each on a line of its own. Deeper values stay on one line.
// Text that is not one JSON value comes back as it is; the layout adds
// only newlines outside strings, so the text is the same JSON.
func jsonLines(text string) string {
	var b strings.Builder
	b.Grow(len(text) + len(text)/64)
	// kinds holds, for each open container, whether it is split.
	var split []bool
	inString, escaped := false, false
	for i := 0; i < len(text); i++ {
		ch := text[i]
		if inString {
			b.WriteByte(ch)
			switch {
			case escaped:
				escaped = false
			case ch == '\\':
				escaped = true
			case ch == '"':
				inString = false
			}
			continue
		}
		switch ch {
		case '"':
			inString = true
			b.WriteByte(ch)
		case '{', '[':
			depth := len(split)
			s := depth == 0 || (depth == 1 && ch == '[' && !split0IsArray(text))
			split = append(split, s)
			b.WriteByte(ch)
			if s {
				b.WriteByte('\n')
			}
		case '}', ']':
			if len(split) == 0 {
				return text
			}
			if split[len(split)-1] {
				b.WriteByte('\n')
			}
			split = split[:len(split)-1]
			b.WriteByte(ch)
		case ',':
			b.WriteByte(ch)
			if len(split) > 0 && split[len(split)-1] {
				b.WriteByte('\n')
			}
		default:
			b.WriteByte(ch)
		}
	}
	if len(split) != 0 || inString {
		return text
	}
	return b.String()
}

// split0IsArray says whether the outer value of text is an array: then
// its items stay whole, each on its line.
func split0IsArray(text string) bool {
	return strings.HasPrefix(strings.TrimLeft(text, " \t\r\n"), "[")
}
