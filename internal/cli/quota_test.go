package cli

import (
	"testing"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/bytesize"
)

// TestQuotaSetShowAndRefusal: quota set parses sizes and "none", quota
// show prints usage and limits (--json too), and a write over a quota
// exits 1 with the refusal on stderr.
func TestQuotaSetShowAndRefusal(t *testing.T) {
	h := newHarness(t)
	h.ok("--scope", "acme", "fs", "write", "a.md", "x")
	out := h.ok("quota", "set", "--scope", "acme", "--bytes", "1KiB", "--files", "1", "--history-bytes", "10GiB")
	equal(t, "set prints the quotas", out, "acme bytes used 9 B of 1.00 KiB\nacme files used 1 of 1\nacme threads used 1 of none\n"+
		"acme documents used 0 of none\nacme history-bytes used "+satchelHistory(t, h)+" of 10.00 GiB\n")
	h.refused("quota exceeded: scope acme would hold 2 files, over its quota of 1", "--scope", "acme", "fs", "write", "b.md", "y")
	h.ok("quota", "set", "--scope", "acme", "--files", "none")
	h.ok("--scope", "acme", "fs", "write", "b.md", "y")
	got := decode[quotaResult](t, h.ok("quota", "show", "--json"))
	equal(t, "listed", len(got.Quotas), 1)
	equal(t, "limits", got.Quotas[0].Limits, satchel.Quota{Bytes: 1024, HistoryBytes: 10 << 30})
	equal(t, "files used", got.Quotas[0].Used.Files, int64(2))
	h.usage(`--bytes: "1.5GiB" is not a size (1GiB, 500MB, 1024) or none`, "quota", "set", "--scope", "acme", "--bytes", "1.5GiB")
	h.usage("quota set needs at least one of --bytes, --files, --threads, --documents, --history-bytes", "quota", "set", "--scope", "acme")
}

// satchelHistory is the history bytes the harness's store counts for acme.
func satchelHistory(t *testing.T, h *harness) string {
	q := decode[quotaResult](t, h.ok("quota", "show", "--scope", "acme", "--json"))
	return bytesize.Format(q.Quotas[0].Used.HistoryBytes)
}

// FuzzParseLimit: a quota flag's value is "none", a positive count or a
// size, and anything else is a usage error; never a negative limit.
func FuzzParseLimit(f *testing.F) {
	for _, s := range []string{"none", "NONE", "100000", "100,000", "1GiB", "500MB", "0", "-5", "1.5", ""} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, s string, size bool) {
		n, err := parseLimit("x", s, size)
		if err == nil && n < 0 {
			t.Fatalf("parseLimit(%q, %v) = %d", s, size, n)
		}
		if err != nil && n != 0 {
			t.Fatalf("parseLimit(%q, %v) = %d with error %v", s, size, n, err)
		}
	})
}
