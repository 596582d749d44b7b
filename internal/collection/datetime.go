package collection

import (
	"strings"
	"time"
)

// CanonicalDatetime is the layout datetimes are stored in: UTC, with exactly
// nine fractional digits. Every canonical string has the same length and
// puts the most significant digits first, so comparing two of them as text
// (byte by byte, which is what SQLite's BINARY collation and PostgreSQL's
// "C" collation do) orders them as instants. Prepare and Normalize rewrite
// a document's datetimes into this form; query values are rewritten the same
// way, which is how one text comparison in SQL means "earlier / later".
const CanonicalDatetime = "2006-01-02T15:04:05.000000000Z"

// parseDatetime parses an RFC 3339 datetime (with or without fractional
// seconds, with 'Z' or a numeric offset). Instants outside the years
// 0000..9999 in UTC are refused: their canonical form would not be the
// fixed-width text that sorts as time.
func parseDatetime(s string) (time.Time, bool) {
	if len(s) < len("2006-01-02T15:04:05Z") {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, false
	}
	t = t.UTC()
	if y := t.Year(); y < 0 || y > 9999 {
		return time.Time{}, false
	}
	return t, true
}

// validDatetime reports whether parseDatetime accepts s.
func validDatetime(s string) bool {
	if isFastDatetime(s) {
		return true
	}
	_, ok := parseDatetime(s)
	return ok
}

// canonicalDatetime returns s in the CanonicalDatetime layout.
func canonicalDatetime(s string) (string, bool) {
	if c, ok := canonicalFast(s); ok {
		return c, true
	}
	if isCanonicalDatetime(s) {
		return s, true
	}
	t, ok := parseDatetime(s)
	if !ok {
		return "", false
	}
	return t.Format(CanonicalDatetime), true
}

// shortDatetime returns a stored (canonical) datetime in its shortest RFC
// 3339 form, which time.RFC3339Nano gives in UTC: the fraction without its
// trailing zeros, and without the '.' when nothing is left of it. Any
// other text is left as it is (ok false).
func shortDatetime(s string) (string, bool) {
	if len(s) != len(CanonicalDatetime) || s[19] != '.' || s[len(s)-1] != 'Z' {
		return "", false
	}
	frac := strings.TrimRight(s[20:len(s)-1], "0")
	if frac == "" {
		return s[:19] + "Z", true
	}
	return s[:20] + frac + "Z", true
}

// isCanonicalDatetime is a fast check that s already has the canonical
// shape: it avoids a parse and a format for documents read back from
// storage. It checks the shape only; parseDatetime checks the ranges.
func isCanonicalDatetime(s string) bool {
	if len(s) != len(CanonicalDatetime) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c, l := s[i], CanonicalDatetime[i]
		if l >= '0' && l <= '9' {
			if c < '0' || c > '9' {
				return false
			}
		} else if c != l {
			return false
		}
	}
	if isFastDatetime(s) {
		return true
	}
	_, ok := parseDatetime(s)
	return ok
}

// canonicalFast rewrites the common shape of datetime without the time
// package (see isFastDatetime), whose instant is in UTC already: the
// canonical form is the same digits with the fraction padded to nine
// places, or s itself when it is canonical. ok is false for every other
// text, which parseDatetime then decides.
func canonicalFast(s string) (c string, ok bool) {
	if !isFastDatetime(s) {
		return "", false
	}
	n := len(s)
	if n == len(CanonicalDatetime) {
		return s, true
	}
	var b [len(CanonicalDatetime)]byte
	copy(b[:], s[:n-1])
	for i := n - 1; i < len(b)-1; i++ {
		b[i] = '0'
	}
	b[19] = '.'
	b[len(b)-1] = 'Z'
	return string(b[:]), true
}

// isFastDatetime reports whether s has the common shape of a datetime
// that needs no time package: "YYYY-MM-DDTHH:MM:SS", an optional fraction
// of 1 to 9 digits, and "Z", with every field in range (the day for its
// month and year). It never refuses: false only sends s through
// parseDatetime, so this path cannot refuse what the time package accepts,
// and FuzzDatetimeFast checks that the two agree wherever it answers.
func isFastDatetime(s string) bool {
	n := len(s)
	if n < len("2006-01-02T15:04:05Z") || n > len(CanonicalDatetime) || s[n-1] != 'Z' ||
		s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return false
	}
	y1, ok1 := num2(s, 0)
	y2, ok2 := num2(s, 2)
	mo, ok3 := num2(s, 5)
	d, ok4 := num2(s, 8)
	h, ok5 := num2(s, 11)
	mi, ok6 := num2(s, 14)
	sec, ok7 := num2(s, 17)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7) ||
		mo < 1 || mo > 12 || d < 1 || d > daysIn(mo, y1*100+y2) || h > 23 || mi > 59 || sec > 59 {
		return false
	}
	if n > len("2006-01-02T15:04:05Z") {
		// A fraction: '.' and 1 to 9 digits.
		if s[19] != '.' || n == len("2006-01-02T15:04:05.Z") {
			return false
		}
		for i := 20; i < n-1; i++ {
			if s[i] < '0' || s[i] > '9' {
				return false
			}
		}
	}
	return true
}

// num2 parses the two decimal digits at s[i:i+2].
func num2(s string, i int) (int, bool) {
	a, b := s[i]-'0', s[i+1]-'0'
	return int(a)*10 + int(b), a <= 9 && b <= 9
}

// daysIn is the number of days of month (1..12) in year, as the time
// package counts them (the proleptic Gregorian calendar).
func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}
