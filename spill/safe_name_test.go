package spill

import (
	"regexp"
	"strings"
	"testing"
)

var unsafeRun = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// refSafeName is DESIGN §4's rule written the obvious way.
func refSafeName(name string) string {
	// The regexp works on runes; map invalid UTF-8 bytes to a byte the
	// rule replaces anyway, so it sees every byte.
	s := strings.ToValidUTF8(name, "\x00")
	s = unsafeRun.ReplaceAllString(s, "-")
	s = strings.TrimLeft(s, ".-")
	if len(s) > 64 {
		s = s[:64]
	}
	if s == "" {
		return "result.txt"
	}
	return s
}

func TestSafeName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "result.txt"},
		{"report.txt", "report.txt"},
		{"../x", "x"},
		{"../../../etc/passwd", "etc-passwd"},
		{".hidden", "hidden"},
		{"a/b", "a-b"},
		{"a\\b", "a-b"},
		{"a  b\t\nc", "a-b-c"},
		{"nul\x00byte", "nul-byte"},
		{"\x00", "result.txt"},
		{strings.Repeat("é", 150), "result.txt"},
		{"café.txt", "caf-.txt"},
		{"-rf", "rf"},
		{"--.-.x", "x"},
		{".", "result.txt"},
		{"..", "result.txt"},
		{"a..b", "a..b"},
		{"trailing.", "trailing."},
		{"\xff\xfe", "result.txt"},
		{"x\xffy", "x-y"},
		{strings.Repeat("a", 100), strings.Repeat("a", 64)},
		{"..." + strings.Repeat("b", 70), strings.Repeat("b", 64)},
	}
	for _, tt := range tests {
		if got := SafeName(tt.in); got != tt.want {
			t.Errorf("SafeName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzSafeName(f *testing.F) {
	for _, s := range []string{"", "../x", ".hidden", "a/b", strings.Repeat("é", 150), "\x00", "-.-", "ok.txt", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		got := SafeName(name)
		if want := refSafeName(name); got != want {
			t.Fatalf("SafeName(%q) = %q, reference gives %q", name, got, want)
		}
		if got == "" || len(got) > 64 {
			t.Fatalf("SafeName(%q) = %q: length %d", name, got, len(got))
		}
		if strings.ContainsAny(got[:1], ".-") {
			t.Fatalf("SafeName(%q) = %q starts with . or -", name, got)
		}
		for i := range len(got) {
			if !safeByte(got[i]) {
				t.Fatalf("SafeName(%q) = %q has byte %q", name, got, got[i])
			}
		}
		if SafeName(got) != got {
			t.Fatalf("SafeName is not idempotent on %q", got)
		}
		if w := workspaceName(name); validWorkspacePath("spill/AAAAAAAAAAAA-"+w) != "" {
			t.Fatalf("workspace name %q: %s", w, validWorkspacePath("spill/AAAAAAAAAAAA-"+w))
		}
	})
}
