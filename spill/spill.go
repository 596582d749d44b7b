package spill

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"io"
	"strconv"
	"strings"
)

// A Locator identifies one spilled result. For the filesystem backend it is
// the file's absolute path; for the workspace backend, the file's path in the
// thread ("spill/…"). Either way it is a path the reader tool can open, so it
// can be shown to a model as it is.
type Locator string

// String returns the locator as text.
func (l Locator) String() string { return string(l) }

// A Backend stores spilled results. Implementations are safe for concurrent
// use.
//
// Save stores text for owner under a name derived from name (see SafeName)
// and returns where it went; two saves never share a locator. Fetch returns
// the stored text byte for byte. Hint tells a model how to read the spill
// back: it names the concrete path and the tool that opens it. text is what
// was saved under loc; a backend may use it to suggest line bounds, and it
// may be "" when it is not at hand, in which case the hint names only the
// tool and the path.
type Backend interface {
	Save(ctx context.Context, owner, name, text string) (Locator, error)
	Fetch(ctx context.Context, loc Locator) (string, error)
	Hint(loc Locator, text string) string
}

// HintFromer is a Backend whose hint can start where a preview's head
// ends: at character char (0: none) of line from. Policy.Apply uses it,
// so the hint names the first line the preview did not show whole.
type HintFromer interface {
	HintFrom(loc Locator, text string, from, char int) string
}

// DefaultReaderTool is the tool a hint names when a backend's Tool is empty,
// and the tool whose results a Policy never spills when its ReaderTool is
// empty: the MCP server's read_file.
const DefaultReaderTool = "read_file"

// maxSafeName is the longest name SafeName returns, in bytes.
const maxSafeName = 64

// defaultSafeName is what SafeName returns when nothing of the name is left.
const defaultSafeName = "result.txt"

// SafeName turns any name into one that is safe as the last part of a file
// name (DESIGN §4): it keeps ASCII letters, digits, ".", "_" and "-", turns
// each run of other bytes (a "/", a space, a NUL, a multibyte character,
// invalid UTF-8) into a single "-", strips leading "." and "-" (so the
// result is never hidden, never "." or "..", and never looks like an
// option), cuts the result to 64 bytes and returns "result.txt" when
// nothing is left.
func SafeName(name string) string {
	b := make([]byte, 0, min(len(name), maxSafeName))
	inRun := false
	for i := 0; i < len(name) && len(b) < maxSafeName; i++ {
		c := name[i]
		if !safeByte(c) {
			if inRun {
				continue
			}
			inRun = true
			c = '-'
		} else {
			inRun = false
		}
		if len(b) == 0 && (c == '.' || c == '-') {
			continue // leading "." and "-" are stripped
		}
		b = append(b, c)
	}
	if len(b) == 0 {
		return defaultSafeName
	}
	return string(b)
}

func safeByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '.' || c == '_' || c == '-'
}

// randomLen is the length of the random part of a spill file's name:
// 12 characters of base64url, 72 bits.
const randomLen = 12

// randomPart returns 12 characters of base64url read from r (crypto/rand
// when r is nil), the first never "-": a file name that starts with one
// reads as an option to most commands (rm, cat) given it.
func randomPart(r io.Reader) (string, error) {
	if r == nil {
		r = rand.Reader
	}
	var b [randomLen * 6 / 8]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return "", err
	}
	s := base64.RawURLEncoding.EncodeToString(b[:])
	if s[0] == '-' {
		s = "A" + s[1:]
	}
	return s, nil
}

// isSpillFileName reports whether s has the shape "<random>-<safe_name>"
// of the files this package writes.
func isSpillFileName(s string) bool {
	if len(s) < randomLen+2 || s[randomLen] != '-' {
		return false
	}
	for i := range randomLen {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	rest := s[randomLen+1:]
	return SafeName(rest) == rest
}

// countLines counts lines as DESIGN §2.2 does: a line ends at "\n", and the
// text after the last "\n" is a last line when it is not empty.
func countLines(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// firstWindow returns how many lines from line 1 a numbered read_file
// returns within window bytes (at least 1): each line costs its bytes, its
// "N| " prefix and a newline.
func firstWindow(s string, lines, window int) int {
	prefix := len(strconv.Itoa(lines)) + len("| ") + len("\n")
	used, k := 0, 0
	for k < lines {
		i := strings.IndexByte(s, '\n')
		line := s
		if i >= 0 {
			line, s = s[:i], s[i+1:]
		}
		used += len(line) + prefix
		if used > window && k > 0 {
			break
		}
		k++
	}
	return k
}

// readHint is the hint both backends give: the tool, the path and, when the
// text is known, the first window of lines and the number of lines.
func readHint(tool string, loc Locator, text string, window int) string {
	return readHintFrom(tool, loc, text, window, 1, 0)
}

// readHintFrom is readHint for a reader that has seen the text up to
// character char of line from (1-based; char 0: none of it): the window
// starts there.
func readHintFrom(tool string, loc Locator, text string, window, from, char int) string {
	if from <= 1 && char <= 0 {
		return readHintFirst(tool, loc, text, window)
	}
	if tool == "" {
		tool = DefaultReaderTool
	}
	if window <= 0 {
		window = DefaultMaxInlineBytes
	}
	path := strconv.Quote(string(loc))
	lines := countLines(text)
	rest := text
	for n := 1; n < from; n++ {
		i := strings.IndexByte(rest, '\n')
		if i < 0 {
			rest = ""
			break
		}
		rest = rest[i+1:]
	}
	end := from - 1 + firstWindow(rest, max(lines-from+1, 1), window)
	at := "start_line " + strconv.Itoa(from)
	if char > 0 {
		at += ", start_char " + strconv.Itoa(char)
	}
	return "Read it with " + tool + " (path " + path + ", " + at + ", end_line " + strconv.Itoa(end) +
		"; the file has " + strconv.Itoa(lines) + " lines)."
}

func readHintFirst(tool string, loc Locator, text string, window int) string {
	if tool == "" {
		tool = DefaultReaderTool
	}
	if window <= 0 {
		window = DefaultMaxInlineBytes
	}
	path := strconv.Quote(string(loc))
	lines := countLines(text)
	if lines == 0 {
		return "Read it with " + tool + " (path " + path + ")."
	}
	end := firstWindow(text, lines, window)
	noun := " lines"
	if lines == 1 {
		noun = " line"
	}
	return "Read it with " + tool + " (path " + path + ", start_line 1, end_line " + strconv.Itoa(end) +
		"; the file has " + strconv.Itoa(lines) + noun + ")."
}
