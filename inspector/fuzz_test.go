package inspector

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/satchel-dev/satchel/internal/udiff"
)

func TestParseUnified(t *testing.T) {
	d := udiff.Unified("a/x", "b/x", "one\ntwo\nthree\n", "one\n2\nthree\nfour", 3)
	rows, cut := parseUnified(d, 100)
	want := []diffRow{
		{Kind: "hunk", Text: "@@ -1,3 +1,4 @@"},
		{Kind: "ctx", Old: 1, New: 1, Text: "one"},
		{Kind: "del", Old: 2, Text: "two"},
		{Kind: "add", New: 2, Text: "2"},
		{Kind: "ctx", Old: 3, New: 3, Text: "three"},
		{Kind: "add", New: 4, Text: "four"},
		{Kind: "note", Text: `\ No newline at end of file`},
	}
	if diff := cmp.Diff(want, rows); diff != "" || cut {
		t.Errorf("rows (-want +got), cut %v:\n%s\nfrom:\n%s", cut, diff, d)
	}
	if rows, cut := parseUnified(d, 3); len(rows) != 3 || !cut {
		t.Errorf("a limit of 3: %d rows, cut %v", len(rows), cut)
	}
	// A file added from nothing numbers its lines from 1.
	rows, _ = parseUnified(udiff.Unified("/dev/null", "b/x", "", "a\nb\n", 3), 10)
	if len(rows) != 3 || rows[1].New != 1 || rows[2].New != 2 {
		t.Errorf("an added file: %+v", rows)
	}
}

// FuzzParseUnified: whatever two texts udiff compares, the rows number
// each side's lines consecutively from the hunk's start, and the added
// and context rows rebuild the new text's lines within the hunks.
func FuzzParseUnified(f *testing.F) {
	f.Add("one\ntwo\nthree\n", "one\n2\nthree\nfour")
	f.Add("", "a\n")
	f.Add("a\r\nb\n", "")
	f.Add("@@ -1 +1 @@\n", "--- x\n+++ y\n")
	f.Fuzz(func(t *testing.T, a, b string) {
		rows, _ := parseUnified(udiff.Unified("a/x", "b/x", a, b, 3), 1<<20)
		var oldN, newN int
		for _, r := range rows {
			switch r.Kind {
			case "hunk":
				oldN, newN = 0, 0
			case "del":
				if oldN != 0 && r.Old != oldN+1 {
					t.Fatalf("old line %d after %d", r.Old, oldN)
				}
				oldN = r.Old
			case "add":
				if newN != 0 && r.New != newN+1 {
					t.Fatalf("new line %d after %d", r.New, newN)
				}
				newN = r.New
			case "ctx":
				if (oldN != 0 && r.Old != oldN+1) || (newN != 0 && r.New != newN+1) {
					t.Fatalf("context %d/%d after %d/%d", r.Old, r.New, oldN, newN)
				}
				oldN, newN = r.Old, r.New
			}
			if (r.Kind == "del" || r.Kind == "ctx") && r.Old < 1 || (r.Kind == "add" || r.Kind == "ctx") && r.New < 1 {
				t.Fatalf("row %+v has no line number", r)
			}
		}
	})
}

// FuzzHunkStarts: never a panic, and a header it accepts has positive
// line numbers.
func FuzzHunkStarts(f *testing.F) {
	for _, s := range []string{"@@ -1,3 +1,4 @@", "@@ -0,0 +1 @@", "@@ -x +1 @@", "@@", "@@ -1,0 +-5 @@"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		o, n, ok := hunkStarts(h)
		if ok && (o < 1 || n < 1) {
			t.Fatalf("hunkStarts(%q) = %d, %d", h, o, n)
		}
	})
}

// FuzzSafeNext: a destination after sign-in always stays on this site.
func FuzzSafeNext(f *testing.F) {
	for _, s := range append([]string{"/", "/s/acme/", "/%2F%2Fevil", "/s/acme/t/main/?before=3"}, hostileNexts()...) {
		f.Add(s)
	}
	self, _ := url.Parse("http://127.0.0.1:8765/signin")
	f.Fuzz(func(t *testing.T, next string) {
		got := safeNext(next)
		if !strings.HasPrefix(got, "/") || strings.HasPrefix(got, "//") || strings.ContainsAny(got, "\\\r\n\t") {
			t.Fatalf("safeNext(%q) = %q leaves the site", next, got)
		}
		if host, err := browserTarget(self, got); err != nil || host != self.Host {
			t.Fatalf("safeNext(%q) = %q: a browser goes to host %q (%v)", next, got, host, err)
		}
	})
}

// FuzzForeignOrigin: a state-changing request passes only with this
// site's own origin, and a GET with another site's origin never passes.
func FuzzForeignOrigin(f *testing.F) {
	f.Add("POST", "http://127.0.0.1:8765", "", "", "127.0.0.1:8765")
	f.Add("GET", "http://evil.example", "", "", "127.0.0.1:8765")
	f.Add("GET", "null", "cross-site", "navigate", "127.0.0.1:8765")
	f.Add("POST", "", "same-origin", "", "127.0.0.1:8765")
	f.Add("POST", "http://127.0.0.1:8765@evil.example", "", "", "127.0.0.1:8765")
	f.Fuzz(func(t *testing.T, method, origin, site, mode, host string) {
		r, err := http.NewRequest(method, "http://x/", nil)
		if err != nil {
			return
		}
		r.Host = host
		if origin != "" {
			r.Header.Set("Origin", origin)
		}
		if site != "" {
			r.Header.Set("Sec-Fetch-Site", site)
		}
		if mode != "" {
			r.Header.Set("Sec-Fetch-Mode", mode)
		}
		ok := foreignOrigin(r) == ""
		own := r.Header.Get("Origin") == "http://"+host || r.Header.Get("Origin") == "https://"+host
		safe := r.Method == "GET" || r.Method == "HEAD"
		if ok && !safe && !own && !(r.Header.Get("Origin") == "" && r.Header.Get("Sec-Fetch-Site") == "same-origin") {
			t.Fatalf("%s with Origin %q, Sec-Fetch-Site %q passes for host %q", method, origin, site, host)
		}
		if ok && r.Header.Get("Origin") != "" && r.Header.Get("Origin") != "null" && !own {
			t.Fatalf("Origin %q passes for host %q", origin, host)
		}
	})
}
