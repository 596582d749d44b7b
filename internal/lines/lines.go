package lines

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/satchel-dev/satchel/internal/errs"
)

// Bounds are the optional 1-based, inclusive line bounds of a read.
// The zero value reads everything.
type Bounds struct {
	Start, End       int
	HasStart, HasEnd bool
}

// All returns bounds that read the whole file.
func All() Bounds { return Bounds{} }

// From returns bounds that read from line start to the last line.
func From(start int) Bounds { return Bounds{Start: start, HasStart: true} }

// Range returns bounds that read lines start to end, inclusive.
func Range(start, end int) Bounds {
	return Bounds{Start: start, End: end, HasStart: true, HasEnd: true}
}

// Bounded reports whether b sets a start or an end.
func (b Bounds) Bounded() bool { return b.HasStart || b.HasEnd }

// Slice implements read (DESIGN §2.3). Without bounds it returns content
// byte for byte, text or not. With bounds it returns lines Start to End
// joined with "\n", without a trailing newline, after these checks in
// order: an end without a start (errs.ErrInvalidRange, "end_line requires
// start_line"); start < 1 ("start must be at least 1"); content that is not
// valid UTF-8 (errs.ErrNotText, "file is not valid UTF-8 text: path"); a
// start past the last line, which gives ""; then End, clamped to the last
// line, must not be before Start ("end must not be before start").
func Slice(path, content string, b Bounds) (string, error) {
	if !b.Bounded() {
		return content, nil
	}
	seg, _, _, err := span(path, content, b)
	if err != nil || seg == "" {
		return "", err
	}
	if strings.Contains(seg, "\r\n") {
		// Every "\r\n" inside the span ends a line: drop its "\r".
		return strings.ReplaceAll(seg, "\r\n", "\n"), nil
	}
	return seg, nil
}

// Numbered implements read_numbered: the lines Slice would return (all of
// them without bounds; always requiring UTF-8 text), each written as
// fmt.Sprintf("%*d| %s", w, n, line) where n is the line's number in the
// file and w the number of digits of the last number written. The lines are
// joined with "\n", without a trailing newline. An empty file, or a start
// past the last line, gives "".
func Numbered(path, content string, b Bounds) (string, error) {
	seg, first, last, err := span(path, content, b)
	if err != nil || last == 0 {
		return "", err
	}
	w := digits(last)
	var sb strings.Builder
	sb.Grow(len(seg) + (last-first+1)*(w+3))
	var num [20]byte
	for n := first; ; n++ {
		line := seg
		i := strings.IndexByte(seg, '\n')
		if i >= 0 {
			line = seg[:i]
			if line != "" && line[len(line)-1] == '\r' {
				line = line[:len(line)-1]
			}
		}
		d := strconv.AppendInt(num[:0], int64(n), 10)
		for range w - len(d) {
			sb.WriteByte(' ')
		}
		sb.Write(d)
		sb.WriteString("| ")
		sb.WriteString(line)
		if i < 0 {
			break
		}
		sb.WriteByte('\n')
		seg = seg[i+1:]
	}
	return sb.String(), nil
}

// span checks b against content and returns the raw text of the lines it
// selects, from the start of line first to the end of line last (without
// last's own "\r\n" or "\n"), with first and last; last is 0 when no line
// is selected. Unbounded, it selects every line.
func span(path, content string, b Bounds) (seg string, first, last int, err error) {
	if b.HasEnd && !b.HasStart {
		return "", 0, 0, errs.New(errs.ErrInvalidRange, "end requires start")
	}
	start := 1
	if b.HasStart {
		if b.Start < 1 {
			return "", 0, 0, errs.New(errs.ErrInvalidRange, "start must be at least 1")
		}
		start = b.Start
	}
	if !utf8.ValidString(content) {
		return "", 0, 0, errs.New(errs.ErrNotText, "file is not valid UTF-8 text: %s", path)
	}
	// Find where line start begins.
	off := 0
	for n := 1; n < start; n++ {
		i := strings.IndexByte(content[off:], '\n')
		if i < 0 {
			return "", 0, 0, nil
		}
		off += i + 1
	}
	if off == len(content) {
		return "", 0, 0, nil // start is past the last line
	}
	if b.HasEnd && b.End < start {
		// End clamps to the last line, which is at least start.
		return "", 0, 0, errs.New(errs.ErrInvalidRange, "end must not be before start")
	}
	rest := content[off:]
	var end int // byte offset in rest where line last ends
	if b.HasEnd {
		last = start
		for {
			i := strings.IndexByte(rest[end:], '\n')
			if i < 0 {
				end = len(rest)
				break
			}
			if last == b.End || end+i+1 == len(rest) {
				end += i
				break
			}
			end += i + 1
			last++
		}
	} else {
		nl := strings.Count(rest, "\n")
		last = start + nl - 1
		end = len(rest)
		if rest[len(rest)-1] == '\n' {
			end--
		} else {
			last++
		}
	}
	seg = rest[:end]
	if end < len(rest) && seg != "" && seg[len(seg)-1] == '\r' {
		seg = seg[:len(seg)-1] // the "\r" of the last line's "\r\n"
	}
	return seg, start, last, nil
}

// digits returns the number of decimal digits of n > 0.
func digits(n int) int {
	d := 1
	for n >= 10 {
		n /= 10
		d++
	}
	return d
}

// Count returns the number of lines of content (DESIGN §2.2): its newlines,
// plus one when text follows the last newline.
func Count(content string) int {
	n := strings.Count(content, "\n")
	if content != "" && content[len(content)-1] != '\n' {
		n++
	}
	return n
}

// CountNewlines returns the number of "\n" in s.
func CountNewlines(s string) int { return strings.Count(s, "\n") }

// EndsWithNewline reports whether s ends with "\n", so that text appended to
// it starts a new line.
func EndsWithNewline(s string) bool { return s != "" && s[len(s)-1] == '\n' }

// Replace implements str_replace: it replaces old with new in content and
// returns the result and the number of non-overlapping occurrences replaced.
// old must not be empty (errs.ErrInvalidArgument, checked first); content
// must be valid UTF-8 (errs.ErrNotText); old must occur
// (errs.ErrAnchorNotFound, "anchor not found in path") and, unless all is
// set, exactly once (errs.ErrAmbiguousAnchor with Count, "anchor occurs N
// times in path, expected exactly one").
func Replace(path, content, old, new string, all bool) (string, int, error) {
	if old == "" {
		return "", 0, errs.New(errs.ErrInvalidArgument, "anchor must not be empty")
	}
	if !utf8.ValidString(content) {
		return "", 0, errs.New(errs.ErrNotText, "file is not valid UTF-8 text: %s", path)
	}
	i := strings.Index(content, old)
	if i < 0 {
		return "", 0, errs.New(errs.ErrAnchorNotFound, "anchor not found in %s", path)
	}
	if !all {
		if j := strings.Index(content[i+len(old):], old); j >= 0 {
			n := 1 + strings.Count(content[i+len(old):], old)
			return "", 0, &errs.Error{
				Kind:  errs.ErrAmbiguousAnchor,
				Msg:   "anchor occurs " + strconv.Itoa(n) + " times in " + path + ", expected exactly one",
				Count: n,
			}
		}
		return content[:i] + new + content[i+len(old):], 1, nil
	}
	n := 1 + strings.Count(content[i+len(old):], old)
	return strings.Replace(content, old, new, -1), n, nil
}

// Cap keeps at most maxChars characters (runes; an invalid byte counts as
// one) of s, cutting on a character boundary, and reports whether it cut.
func Cap(s string, maxChars int) (out string, cut bool) {
	if len(s) <= maxChars {
		return s, false // no more runes than bytes
	}
	maxChars = max(maxChars, 0)
	n := 0
	for i := range s {
		if n == maxChars {
			return s[:i], true
		}
		n++
	}
	return s, false
}

// LineAt returns the 1-based number of the line of s that holds the byte
// at byteOffset (a "\n" belongs to the line it ends). After a cut, as in
// out, cut := Cap(s, max), LineAt(s, len(out)) is the first line not shown
// whole, where a reader should continue.
func LineAt(s string, byteOffset int) int {
	byteOffset = min(max(byteOffset, 0), len(s))
	return 1 + strings.Count(s[:byteOffset], "\n")
}
