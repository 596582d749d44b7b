package collection

import (
	"testing"
	"time"
)

// FuzzShortDatetime: the form reads return is the same instant as the
// stored one, and is what time.RFC3339Nano writes in UTC.
func FuzzShortDatetime(f *testing.F) {
	for _, s := range []string{"2026-01-02T03:04:05+02:00", "2026-01-31T09:30:00.5Z", "2026-01-31T09:30:00.000000001Z", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999999999Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		stored, ok := canonicalDatetime(s)
		if !ok {
			return
		}
		short, ok := shortDatetime(stored)
		if !ok {
			t.Fatalf("shortDatetime(%q) refused the stored form of %q", stored, s)
		}
		want, _ := time.Parse(time.RFC3339Nano, stored)
		if w := want.UTC().Format(time.RFC3339Nano); short != w {
			t.Fatalf("shortDatetime(%q) = %q, want %q", stored, short, w)
		}
		if back, ok := canonicalDatetime(short); !ok || back != stored {
			t.Fatalf("%q stores as %q, not as %q", short, back, stored)
		}
	})
}
