package collection

import (
	"testing"
	"time"
)

// slowCanonical is canonicalDatetime through the time package only: the
// reference the fast path must agree with.
func slowCanonical(s string) (string, bool) {
	t, ok := parseDatetime(s)
	if !ok {
		return "", false
	}
	return t.Format(CanonicalDatetime), true
}

var datetimeSeeds = []string{
	"2026-01-01T00:00:00.000Z", "2026-01-01T00:00:00Z", "2026-01-31T08:30:00.000000000Z",
	"2026-01-01T00:00:00.5Z", "2026-01-01T00:00:00.123456789Z", "2026-01-01T00:00:00.1234567891Z",
	"2026-01-01T00:00:00.Z", "2026-01-01T00:00:00,5Z", "2026-01-01T00:00:00z", "2026-01-01t00:00:00Z",
	"2026-01-01T00:00:00+00:00", "2026-01-01T00:00:00.5-00:30", "2026-01-01T00:00:00.5+02:00",
	"2024-02-29T12:00:00Z", "2023-02-29T12:00:00Z", "2000-02-29T00:00:00Z", "1900-02-29T00:00:00Z",
	"0000-02-29T00:00:00Z", "0000-01-01T00:00:00Z", "9999-12-31T23:59:59.999999999Z",
	"0000-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00",
	"2026-04-31T00:00:00Z", "2026-13-01T00:00:00Z", "2026-00-01T00:00:00Z", "2026-01-00T00:00:00Z",
	"2026-01-01T24:00:00Z", "2026-01-01T23:60:00Z", "2026-01-01T23:59:60Z", "2026-01-01T23:59:59.Z",
	"2026-1-01T00:00:00Z", "2026-01-01 00:00:00Z", "+026-01-01T00:00:00Z", "2026-01-01T00:00:00",
	"2026-01-01T00:00:0aZ", "2026-01-01T00:00:00.1a3Z", "2026-01-01T00:00:00.000000000ZZ", "",
}

// FuzzDatetimeFast checks the hand-written path of datetimes against the
// time package: wherever it answers, it gives the same canonical text; and
// canonicalDatetime, validDatetime and isCanonicalDatetime, which try it
// first, answer as the time package alone does.
func FuzzDatetimeFast(f *testing.F) {
	for _, s := range datetimeSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, wantOK := slowCanonical(s)
		if c, ok := canonicalFast(s); ok {
			if !wantOK || c != want {
				t.Fatalf("canonicalFast(%q) = %q, time package: %q, %v", s, c, want, wantOK)
			}
		}
		if isFastDatetime(s) && !wantOK {
			t.Fatalf("isFastDatetime(%q) but the time package refuses it", s)
		}
		if c, ok := canonicalDatetime(s); ok != wantOK || c != want {
			t.Fatalf("canonicalDatetime(%q) = %q, %v; time package: %q, %v", s, c, ok, want, wantOK)
		}
		if ok := validDatetime(s); ok != wantOK {
			t.Fatalf("validDatetime(%q) = %v; time package: %v", s, ok, wantOK)
		}
		if got, want := isCanonicalDatetime(s), wantOK && want == s; got != want {
			t.Fatalf("isCanonicalDatetime(%q) = %v, want %v", s, got, want)
		}
	})
}

// TestDatetimeFastAnswers checks that the fast path takes the forms it is
// for (else it would silently fall back to the slow path) and leaves
// offsets and odd forms to the time package.
func TestDatetimeFastAnswers(t *testing.T) {
	for _, s := range []string{"2026-01-01T00:00:00.000Z", "2026-01-01T00:00:00Z", "2026-01-31T08:30:00.000000000Z",
		"2024-02-29T12:00:00.5Z", "2000-02-29T00:00:00Z", "0000-02-29T00:00:00Z", "9999-12-31T23:59:59.999999999Z"} {
		if !isFastDatetime(s) {
			t.Errorf("isFastDatetime(%q) = false", s)
		}
	}
	for _, s := range []string{"2026-01-01T00:00:00+00:00", "2026-01-01T00:00:00.1234567891Z", "2026-01-01T00:00:00.Z",
		"1900-02-29T00:00:00Z", "2026-04-31T00:00:00Z", "2026-01-01T23:59:60Z", "2026-01-01T00:00:00z"} {
		if isFastDatetime(s) {
			t.Errorf("isFastDatetime(%q) = true", s)
		}
	}
	// Every day of four years, at assorted times and precisions, in the
	// forms a program writes.
	start := time.Date(1999, 12, 31, 0, 0, 0, 0, time.UTC)
	for d := 0; d < 4*366; d++ {
		tm := start.AddDate(0, 0, d).Add(time.Duration(d*7919) * time.Second % (24 * time.Hour)).Add(time.Duration(d*104729) % time.Second)
		for _, layout := range []string{time.RFC3339, "2006-01-02T15:04:05.000Z07:00", time.RFC3339Nano, CanonicalDatetime} {
			s := tm.Format(layout)
			want, _ := slowCanonical(s)
			if c, ok := canonicalFast(s); !ok || c != want {
				t.Fatalf("canonicalFast(%q) = %q, %v; want %q", s, c, ok, want)
			}
		}
	}
}
