package vpath

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/satchel-dev/satchel/internal/errs"
)

// MaxLen is the longest path, and the longest pattern, in bytes.
const MaxLen = 1024

// Reasons a path is refused, in the order DESIGN §2.1 checks them.
const (
	reasonEmpty        = "must not be empty"
	reasonTooLong      = "longer than 1024 bytes"
	reasonAbsolute     = "must be relative (no leading /)"
	reasonControl      = "contains a control character"
	reasonNotUTF8      = "is not valid UTF-8"
	reasonBackslash    = "contains a backslash"
	reasonEmptySegment = "contains an empty segment"
	reasonDotSegment   = "contains a . or .. segment"
	reasonTrailingDot  = "has a segment ending in a dot or a space"
	reasonDevicePrefix = "uses the reserved device name "
	reasonNotNFC       = "is not in Unicode normalization form C (NFC): compose it, so that one name has one spelling"
)

// Validate reports whether p is a valid workspace path (DESIGN §2.1). It runs
// the nine checks in order and returns the first that fails, as an error of
// kind errs.ErrInvalidPath with the message `invalid path "p": reason`.
func Validate(p string) error {
	if reason := check(p); reason != "" {
		return invalidPath(p, reason)
	}
	return nil
}

// Dir validates and normalizes the directory argument of list and grep
// (their "under"): "" means the whole workspace, and one trailing "/" is
// ignored. Anything else must be a valid path; a refusal quotes under as
// given. The result is "" or a path without a trailing slash.
func Dir(under string) (string, error) {
	if under == "" {
		return "", nil
	}
	d := strings.TrimSuffix(under, "/")
	if d == "" {
		// "/" alone: absolute, like any leading slash.
		return "", invalidPath(under, reasonAbsolute)
	}
	if reason := check(d); reason != "" {
		return "", invalidPath(under, reason)
	}
	return d, nil
}

// Within reports whether path lies inside directory dir: every path lies
// inside "", and "a" holds "a/x" but neither "a" itself nor "ab/x". dir is
// normally a result of [Dir]; a trailing slash on it is tolerated.
func Within(dir, path string) bool {
	if dir == "" {
		return true
	}
	if dir[len(dir)-1] == '/' {
		return len(path) > len(dir) && strings.HasPrefix(path, dir)
	}
	return len(path) > len(dir) && path[len(dir)] == '/' && strings.HasPrefix(path, dir)
}

func invalidPath(p, reason string) error {
	return errs.New(errs.ErrInvalidPath, "invalid path %q: %s", p, reason)
}

// check returns why p is not a valid path, or "" when it is.
func check(p string) string {
	if p == "" {
		return reasonEmpty
	}
	if len(p) > MaxLen {
		return reasonTooLong
	}
	if p[0] == '/' {
		return reasonAbsolute
	}
	if reason := checkText(p); reason != "" {
		return reason
	}
	if strings.IndexByte(p, '\\') >= 0 {
		return reasonBackslash
	}
	return checkSegments(p)
}

// checkText returns the first control character or invalid UTF-8 in s, as
// a reason, or "".
func checkText(s string) string {
	ascii := true
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return reasonControl
			}
			i++
			continue
		}
		ascii = false
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return reasonNotUTF8
		}
		i += size
	}
	// Two spellings of one name (a precomposed é and e with a combining
	// accent) would look identical and be two files: only NFC is accepted.
	if !ascii && !norm.NFC.IsNormalString(s) {
		return reasonNotNFC
	}
	return ""
}

// checkSegments runs checks 6 to 9 over the segments of p, each check over
// the whole path before the next, so the reported reason does not depend on
// which segment comes first.
func checkSegments(p string) string {
	var dot, trailing bool
	device := ""
	for rest := p; ; {
		seg := rest
		i := strings.IndexByte(rest, '/')
		if i >= 0 {
			seg = rest[:i]
		}
		switch {
		case seg == "":
			return reasonEmptySegment
		case seg == "." || seg == "..":
			dot = true
		case seg[len(seg)-1] == '.' || seg[len(seg)-1] == ' ':
			trailing = true
		case device == "":
			device = reservedName(seg)
		}
		if i < 0 {
			break
		}
		rest = rest[i+1:]
	}
	switch {
	case dot:
		return reasonDotSegment
	case trailing:
		return reasonTrailingDot
	case device != "":
		return reasonDevicePrefix + device
	}
	return ""
}

// reservedName returns the part of seg before its first "." when that part
// is a Windows device name (CON, PRN, AUX, NUL, COM1–COM9, COM¹–COM³,
// LPT1–LPT9, LPT¹–LPT³, in any case), as written; otherwise "".
func reservedName(seg string) string {
	base := seg
	if i := strings.IndexByte(seg, '.'); i >= 0 {
		base = seg[:i]
	}
	switch len(base) {
	case 3:
		if strings.EqualFold(base, "con") || strings.EqualFold(base, "prn") ||
			strings.EqualFold(base, "aux") || strings.EqualFold(base, "nul") {
			return base
		}
	case 4:
		if d := base[3]; d >= '1' && d <= '9' &&
			(strings.EqualFold(base[:3], "com") || strings.EqualFold(base[:3], "lpt")) {
			return base
		}
	case 5:
		// COM¹–COM³ and LPT¹–LPT³: Windows reserves the superscript
		// digits too.
		if d := base[3:]; (d == "¹" || d == "²" || d == "³") &&
			(strings.EqualFold(base[:3], "com") || strings.EqualFold(base[:3], "lpt")) {
			return base
		}
	}
	return ""
}
