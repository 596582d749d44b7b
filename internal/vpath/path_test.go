package vpath

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/satchel-dev/satchel/internal/errs"
)

func TestValidate(t *testing.T) {
	long := strings.Repeat("a/", 512) // 1024 bytes, ends with "/"
	tests := []struct {
		path   string
		reason string // "" when valid
	}{
		// Valid paths.
		{"a", ""},
		{"a/b/c.txt", ""},
		{"notes/d07/n0042.md", ""},
		{".hidden", ""},
		{"a/.config/x", ""},
		{"...a", ""},
		{"a b/c d", ""},
		{"ünïcødé/日本語.md", ""},
		{"console", ""},
		{"com10", ""},
		{"lpt0", ""},
		{"com", ""},
		{"nul1", ""},
		{"a/conx.txt", ""},
		{"xcon", ""},
		{"\u0085x", ""}, // C1 controls are not below 0x20 nor 0x7f
		{strings.Repeat("a", 1024), ""},
		{long[:1023], ""},

		// 1. empty
		{"", "must not be empty"},
		// 2. length
		{strings.Repeat("a", 1025), "longer than 1024 bytes"},
		{"/" + strings.Repeat("a", 1024), "longer than 1024 bytes"},
		// 3. absolute
		{"/", "must be relative (no leading /)"},
		{"/a", "must be relative (no leading /)"},
		{"/a\\b", "must be relative (no leading /)"},
		{"//a", "must be relative (no leading /)"},
		{"/a\x00", "must be relative (no leading /)"},
		// 4. control characters, UTF-8
		{"a\x00b", "contains a control character"},
		{"a\nb", "contains a control character"},
		{"a\tb", "contains a control character"},
		{"a\x1fb", "contains a control character"},
		{"a\x7fb", "contains a control character"},
		{"a\x7f\\b", "contains a control character"},
		{"a\xffb", "is not valid UTF-8"},
		{"a\xc3", "is not valid UTF-8"},
		{"\xed\xa0\x80", "is not valid UTF-8"}, // a surrogate
		{"a\xff\x00", "is not valid UTF-8"},    // the first offence wins
		{"a\x00\xff", "contains a control character"},
		{"a\xff\\b", "is not valid UTF-8"},
		// 5. backslash
		{"a\\b", "contains a backslash"},
		{"a\\", "contains a backslash"},
		{"a//b\\c", "contains a backslash"},
		// 6. empty segment
		{"a//b", "contains an empty segment"},
		{"a/", "contains an empty segment"},
		{long, "contains an empty segment"},
		{"../a//b", "contains an empty segment"},
		{"con/a/", "contains an empty segment"},
		// 7. dot segments
		{".", "contains a . or .. segment"},
		{"..", "contains a . or .. segment"},
		{"a/./b", "contains a . or .. segment"},
		{"a/..", "contains a . or .. segment"},
		{"a./..", "contains a . or .. segment"},
		{"con/..", "contains a . or .. segment"},
		// 8. trailing dot or space
		{"a.", "has a segment ending in a dot or a space"},
		{"a ", "has a segment ending in a dot or a space"},
		{"x/a./b", "has a segment ending in a dot or a space"},
		{"x/a /b", "has a segment ending in a dot or a space"},
		{"...", "has a segment ending in a dot or a space"},
		{"con/a.", "has a segment ending in a dot or a space"},
		{"con.", "has a segment ending in a dot or a space"},
		{" ", "has a segment ending in a dot or a space"},
		// 9. device names
		{"con", "uses the reserved device name con"},
		{"CON", "uses the reserved device name CON"},
		{"a/Prn", "uses the reserved device name Prn"},
		{"aux/x", "uses the reserved device name aux"},
		{"nul.txt", "uses the reserved device name nul"},
		{"Com1.tar.gz", "uses the reserved device name Com1"},
		{"com9", "uses the reserved device name com9"},
		{"LPT1", "uses the reserved device name LPT1"},
		{"lpt9.x", "uses the reserved device name lpt9"},
		{"a/b/nul.", "has a segment ending in a dot or a space"},
		{"lpt1/com2", "uses the reserved device name lpt1"},
		{"con .txt", ""}, // judged on "con ", before the first dot
	}
	for _, tt := range tests {
		err := Validate(tt.path)
		if tt.reason == "" {
			if err != nil {
				t.Errorf("Validate(%q) = %v, want nil", tt.path, err)
			}
			continue
		}
		want := fmt.Sprintf("invalid path %q: %s", tt.path, tt.reason)
		if err == nil {
			t.Errorf("Validate(%q) = nil, want %q", tt.path, want)
			continue
		}
		if err.Error() != want {
			t.Errorf("Validate(%q) = %q, want %q", tt.path, err.Error(), want)
		}
		if !errors.Is(err, errs.ErrInvalidPath) || !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("Validate(%q): error does not match ErrInvalidPath", tt.path)
		}
	}
}

func TestDir(t *testing.T) {
	tests := []struct {
		under, want, reason string
	}{
		{"", "", ""},
		{"a", "a", ""},
		{"a/", "a", ""},
		{"a/b", "a/b", ""},
		{"a/b/", "a/b", ""},
		{strings.Repeat("a", 1024) + "/", strings.Repeat("a", 1024), ""},
		{"/", "", "must be relative (no leading /)"},
		{"/a/", "", "must be relative (no leading /)"},
		{"a//", "", "contains an empty segment"},
		{"a//b", "", "contains an empty segment"},
		{"./", "", "contains a . or .. segment"},
		{"../", "", "contains a . or .. segment"},
		{"a\\/", "", "contains a backslash"},
		{"con/", "", "uses the reserved device name con"},
		{strings.Repeat("a", 1025) + "/", "", "longer than 1024 bytes"},
	}
	for _, tt := range tests {
		got, err := Dir(tt.under)
		if tt.reason == "" {
			if err != nil || got != tt.want {
				t.Errorf("Dir(%q) = %q, %v; want %q, nil", tt.under, got, err, tt.want)
			}
			continue
		}
		want := fmt.Sprintf("invalid path %q: %s", tt.under, tt.reason)
		if err == nil || err.Error() != want || !errors.Is(err, errs.ErrInvalidPath) {
			t.Errorf("Dir(%q) = %q, %v; want error %q", tt.under, got, err, want)
		}
	}
}

func TestWithin(t *testing.T) {
	tests := []struct {
		dir, path string
		want      bool
	}{
		{"", "a", true},
		{"", "a/b", true},
		{"a", "a/x", true},
		{"a", "a/x/y", true},
		{"a", "a", false},
		{"a", "ab/x", false},
		{"a", "b/a/x", false},
		{"a/b", "a/b/c", true},
		{"a/b", "a/bc", false},
		{"a/", "a/x", true},
		{"a/", "a", false},
		{"a", "", false},
	}
	for _, tt := range tests {
		if got := Within(tt.dir, tt.path); got != tt.want {
			t.Errorf("Within(%q, %q) = %v, want %v", tt.dir, tt.path, got, tt.want)
		}
	}
}

// refReason is a plain reading of DESIGN §2.1, to check Validate against.
func refReason(p string) string {
	if p == "" {
		return "must not be empty"
	}
	if len(p) > 1024 {
		return "longer than 1024 bytes"
	}
	if strings.HasPrefix(p, "/") {
		return "must be relative (no leading /)"
	}
	for i, r := range p {
		if r < 0x20 || r == 0x7f {
			return "contains a control character"
		}
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(p[i:]); size == 1 {
				return "is not valid UTF-8"
			}
		}
	}
	if norm.NFC.String(p) != p {
		return "is not in Unicode normalization form C (NFC): compose it, so that one name has one spelling"
	}
	if strings.Contains(p, "\\") {
		return "contains a backslash"
	}
	segs := strings.Split(p, "/")
	for _, s := range segs {
		if s == "" {
			return "contains an empty segment"
		}
	}
	for _, s := range segs {
		if s == "." || s == ".." {
			return "contains a . or .. segment"
		}
	}
	for _, s := range segs {
		if strings.HasSuffix(s, ".") || strings.HasSuffix(s, " ") {
			return "has a segment ending in a dot or a space"
		}
	}
	reserved := []string{"CON", "PRN", "AUX", "NUL"}
	for _, d := range []rune("123456789¹²³") {
		reserved = append(reserved, "COM"+string(d), "LPT"+string(d))
	}
	for _, s := range segs {
		base, _, _ := strings.Cut(s, ".")
		for _, r := range reserved {
			if strings.ToUpper(base) == r {
				return "uses the reserved device name " + base
			}
		}
	}
	return ""
}

func FuzzValidate(f *testing.F) {
	for _, s := range []string{
		"", "a", "a/b", "/a", "a//b", "a/./b", "a.", "a ", "con", "nul.txt", "Com1.tar.gz",
		"a\\b", "a\x00", "\xff", "ünï/x", "com10", "a/", strings.Repeat("ab/", 400),
		"COM¹", "lpt³.txt", "com⁴", "cafe\u0301", "caf\u00e9", "a\u0301/b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		err := Validate(p)
		want := refReason(p)
		if want == "" {
			if err != nil {
				t.Fatalf("Validate(%q) = %v, want nil", p, err)
			}
		} else {
			msg := fmt.Sprintf("invalid path %q: %s", p, want)
			if err == nil || err.Error() != msg || !errors.Is(err, errs.ErrInvalidPath) {
				t.Fatalf("Validate(%q) = %v, want %q", p, err, msg)
			}
			return
		}
		// A valid path's segments obey every rule, checked directly.
		if len(p) == 0 || len(p) > 1024 || p[0] == '/' || !utf8.ValidString(p) ||
			strings.ContainsAny(p, "\\\x7f") {
			t.Fatalf("Validate(%q) accepted a bad path", p)
		}
		for _, s := range strings.Split(p, "/") {
			if s == "" || s == "." || s == ".." || strings.HasSuffix(s, ".") ||
				strings.HasSuffix(s, " ") || strings.IndexFunc(s, func(r rune) bool { return r < 0x20 }) >= 0 {
				t.Fatalf("Validate(%q) accepted the bad segment %q", p, s)
			}
		}
		// A valid path is a valid directory, and so is it with a slash.
		for _, u := range []string{p, p + "/"} {
			if d, err := Dir(u); (err != nil || d != p) && len(u) <= 1025 {
				t.Fatalf("Dir(%q) = %q, %v; want %q", u, d, err, p)
			}
		}
	})
}

// COM¹–COM³ and LPT¹–LPT³ are reserved as COM1 is; a name that is not in
// NFC is refused, so two files cannot differ only in how their names are
// composed.
func TestAttackPathDevicesAndNormalisation(t *testing.T) {
	for _, p := range []string{"COM¹", "x/lpt².txt", "Com³"} {
		if err := Validate(p); err == nil || !strings.Contains(err.Error(), "uses the reserved device name") {
			t.Errorf("Validate(%q) = %v", p, err)
		}
	}
	if err := Validate("com⁴"); err != nil {
		t.Errorf("COM⁴ is not reserved: %v", err)
	}
	nfd := "cafe\u0301.md"
	if err := Validate(nfd); err == nil || !strings.Contains(err.Error(), "not in Unicode normalization form C") {
		t.Errorf("Validate(NFD %q) = %v", nfd, err)
	}
	if err := Validate(norm.NFC.String(nfd)); err != nil {
		t.Errorf("Validate(NFC) = %v", err)
	}
}
