package docs

import "time"

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

// canonicalDatetime returns s in the CanonicalDatetime layout.
func canonicalDatetime(s string) (string, bool) {
	if isCanonicalDatetime(s) {
		return s, true
	}
	t, ok := parseDatetime(s)
	if !ok {
		return "", false
	}
	return t.Format(CanonicalDatetime), true
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
	_, ok := parseDatetime(s)
	return ok
}
