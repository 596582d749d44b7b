package lines

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/satchel-dev/satchel/internal/errs"
)

// refLines splits content into lines by DESIGN §2.2, plainly.
func refLines(content string) []string {
	if content == "" {
		return nil
	}
	parts := strings.Split(content, "\n")
	terminated := len(parts) - 1 // parts followed by a "\n"
	if parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	for i := range parts {
		if i < terminated {
			parts[i] = strings.TrimSuffix(parts[i], "\r")
		}
	}
	return parts
}

// refSpan applies the bounds to refLines and returns the selected lines and
// the first line's number, or an error message.
func refSpan(path, content string, b Bounds) ([]string, int, string) {
	if b.HasEnd && !b.HasStart {
		return nil, 0, "end requires start"
	}
	start := 1
	if b.HasStart {
		if b.Start < 1 {
			return nil, 0, "start must be at least 1"
		}
		start = b.Start
	}
	if !utf8.ValidString(content) {
		return nil, 0, "file is not valid UTF-8 text: " + path
	}
	ls := refLines(content)
	if start > len(ls) {
		return nil, 0, ""
	}
	end := len(ls)
	if b.HasEnd {
		end = min(b.End, len(ls))
	}
	if end < start {
		return nil, 0, "end must not be before start"
	}
	return ls[start-1 : end], start, ""
}

func refSlice(path, content string, b Bounds) (string, string) {
	if !b.HasStart && !b.HasEnd {
		return content, ""
	}
	ls, _, msg := refSpan(path, content, b)
	return strings.Join(ls, "\n"), msg
}

func refNumbered(path, content string, b Bounds) (string, string) {
	ls, first, msg := refSpan(path, content, b)
	if msg != "" || len(ls) == 0 {
		return "", msg
	}
	w := len(fmt.Sprint(first + len(ls) - 1))
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = fmt.Sprintf("%*d| %s", w, first+i, l)
	}
	return strings.Join(out, "\n"), ""
}

func errMsg(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestSlice(t *testing.T) {
	tests := []struct {
		content string
		b       Bounds
		want    string
		err     string
		kind    error
	}{
		{"a\nb\n", All(), "a\nb\n", "", nil},
		{"\xff\r\n", All(), "\xff\r\n", "", nil},
		{"", All(), "", "", nil},
		{"a\nb\nc\n", From(1), "a\nb\nc", "", nil},
		{"a\nb\nc", From(2), "b\nc", "", nil},
		{"a\nb\nc", Range(2, 2), "b", "", nil},
		{"a\nb\nc", Range(1, 99), "a\nb\nc", "", nil},
		{"a\nb\nc", From(3), "c", "", nil},
		{"a\nb\nc", From(4), "", "", nil},
		{"a\nb\nc\n", From(4), "", "", nil},
		{"a\nb\nc", Range(4, 2), "", "", nil}, // past the end before end < start
		{"", From(1), "", "", nil},
		{"\n", From(1), "", "", nil},
		{"\n", From(2), "", "", nil},
		{"\n\n", Range(1, 2), "\n", "", nil},
		{"a\r\nb\r\nc\r\n", From(1), "a\nb\nc", "", nil},
		{"a\r\nb\r\nc\r\n", Range(2, 2), "b", "", nil},
		{"a\r\nb\r\nc\r", From(3), "c\r", "", nil},
		{"a\r\nb\r", From(1), "a\nb\r", "", nil},
		{"a\r\r\nb", From(1), "a\r\nb", "", nil},
		{"a\r\r\nb", Range(1, 1), "a\r", "", nil},
		{"\r", From(1), "\r", "", nil},
		{"\r\n", From(1), "", "", nil},
		{"a\rb\nc", Range(1, 1), "a\rb", "", nil},
		{"ü\n日本\n", Range(2, 5), "日本", "", nil},
		{"a\nb", Bounds{End: 1, HasEnd: true}, "", "end requires start", errs.ErrInvalidRange},
		{"\xff", Bounds{End: 1, HasEnd: true}, "", "end requires start", errs.ErrInvalidRange},
		{"a\nb", From(0), "", "start must be at least 1", errs.ErrInvalidRange},
		{"a\nb", Range(-1, -5), "", "start must be at least 1", errs.ErrInvalidRange},
		{"\xff", From(0), "", "start must be at least 1", errs.ErrInvalidRange},
		{"a\n\xff", From(1), "", "file is not valid UTF-8 text: p.txt", errs.ErrNotText},
		{"a\n\xff", From(5), "", "file is not valid UTF-8 text: p.txt", errs.ErrNotText},
		{"a\nb\nc", Range(3, 2), "", "end must not be before start", errs.ErrInvalidRange},
		{"a\nb\nc", Range(2, 0), "", "end must not be before start", errs.ErrInvalidRange},
	}
	for _, tt := range tests {
		got, err := Slice("p.txt", tt.content, tt.b)
		if got != tt.want || errMsg(err) != tt.err {
			t.Errorf("Slice(%q, %+v) = %q, %v; want %q, %q", tt.content, tt.b, got, err, tt.want, tt.err)
		}
		if tt.kind != nil && !errors.Is(err, tt.kind) {
			t.Errorf("Slice(%q, %+v): error %v is not %v", tt.content, tt.b, err, tt.kind)
		}
	}
}

func TestNumbered(t *testing.T) {
	var hundred strings.Builder
	for i := 1; i <= 100; i++ {
		fmt.Fprintf(&hundred, "line %d\n", i)
	}
	tests := []struct {
		content string
		b       Bounds
		want    string
		err     string
	}{
		{"", All(), "", ""},
		{"\n", All(), "1| ", ""},
		{"a\nb", All(), "1| a\n2| b", ""},
		{"a\r\nb\r\n", All(), "1| a\n2| b", ""},
		{"a\r\nb\r", All(), "1| a\n2| b\r", ""},
		{"a\nb", From(3), "", ""},
		{hundred.String(), Range(95, 100), " 95| line 95\n 96| line 96\n 97| line 97\n 98| line 98\n 99| line 99\n100| line 100", ""},
		{hundred.String(), Range(95, 99), "95| line 95\n96| line 96\n97| line 97\n98| line 98\n99| line 99", ""},
		{hundred.String(), Range(8, 10), " 8| line 8\n 9| line 9\n10| line 10", ""},
		{hundred.String(), Range(99, 500), " 99| line 99\n100| line 100", ""},
		{hundred.String(), From(100), "100| line 100", ""},
		{hundred.String(), Range(20, 21), "20| line 20\n21| line 21", ""},
		{"\xff", All(), "", "file is not valid UTF-8 text: p.txt"},
		{"a", Bounds{End: 1, HasEnd: true}, "", "end requires start"},
		{"a", From(0), "", "start must be at least 1"},
		{"a\nb", Range(2, 1), "", "end must not be before start"},
	}
	for _, tt := range tests {
		got, err := Numbered("p.txt", tt.content, tt.b)
		if got != tt.want || errMsg(err) != tt.err {
			t.Errorf("Numbered(%.20q, %+v) = %q, %v; want %q, %q", tt.content, tt.b, got, err, tt.want, tt.err)
		}
	}
	// The whole hundred-line file: widths grow with the last number only.
	got, _ := Numbered("p", hundred.String(), All())
	if !strings.HasPrefix(got, "  1| line 1\n") || !strings.HasSuffix(got, "\n100| line 100") {
		t.Errorf("Numbered(hundred) = %.40q…", got)
	}
}

func TestCount(t *testing.T) {
	for content, want := range map[string]int{
		"": 0, "\n": 1, "a": 1, "a\n": 1, "a\nb": 2, "a\nb\n": 2, "\n\n": 2, "\r": 1, "a\r\n": 1,
	} {
		if got := Count(content); got != want {
			t.Errorf("Count(%q) = %d, want %d", content, got, want)
		}
		if got := len(refLines(content)); got != want {
			t.Errorf("refLines(%q) has %d lines, want %d", content, got, want)
		}
	}
	if CountNewlines("a\nb\n\n") != 3 || !EndsWithNewline("a\n") || EndsWithNewline("") || EndsWithNewline("a") {
		t.Error("CountNewlines or EndsWithNewline is wrong")
	}
}

func TestReplace(t *testing.T) {
	tests := []struct {
		content, old, new string
		all               bool
		want              string
		n                 int
		err               string
		kind              error
	}{
		{"hello world", "world", "there", false, "hello there", 1, "", nil},
		{"aaa", "a", "b", true, "bbb", 3, "", nil},
		{"aaaa", "aa", "b", true, "bb", 2, "", nil},
		{"aaa", "aa", "b", false, "ba", 1, "", nil}, // non-overlapping: once
		{"x", "x", "", false, "", 1, "", nil},
		{"abab", "ab", "x", false, "", 0, "anchor occurs 2 times in p.txt, expected exactly one", errs.ErrAmbiguousAnchor},
		{"abc", "d", "x", false, "", 0, "anchor not found in p.txt", errs.ErrAnchorNotFound},
		{"abc", "d", "x", true, "", 0, "anchor not found in p.txt", errs.ErrAnchorNotFound},
		{"abc", "", "x", false, "", 0, "anchor must not be empty", errs.ErrInvalidArgument},
		{"\xff", "", "x", false, "", 0, "anchor must not be empty", errs.ErrInvalidArgument},
		{"\xffa", "a", "x", false, "", 0, "file is not valid UTF-8 text: p.txt", errs.ErrNotText},
		{"a\r\nb", "\r\n", "\n", false, "a\nb", 1, "", nil},
	}
	for _, tt := range tests {
		got, n, err := Replace("p.txt", tt.content, tt.old, tt.new, tt.all)
		if got != tt.want || n != tt.n || errMsg(err) != tt.err {
			t.Errorf("Replace(%q, %q, %q, %v) = %q, %d, %v; want %q, %d, %q",
				tt.content, tt.old, tt.new, tt.all, got, n, err, tt.want, tt.n, tt.err)
		}
		if tt.kind != nil && !errors.Is(err, tt.kind) {
			t.Errorf("Replace(%q, %q): error %v is not %v", tt.content, tt.old, err, tt.kind)
		}
	}
	_, _, err := Replace("p", "x x x", "x", "y", false)
	var e *errs.Error
	if !errors.As(err, &e) || e.Count != 3 || !errors.Is(err, errs.ErrAmbiguousAnchor) {
		t.Errorf("ambiguous anchor error = %#v, want Count 3", err)
	}
}

func TestCap(t *testing.T) {
	tests := []struct {
		s    string
		max  int
		want string
		cut  bool
	}{
		{"hello", 10, "hello", false},
		{"hello", 5, "hello", false},
		{"hello", 4, "hell", true},
		{"hello", 0, "", true},
		{"", 0, "", false},
		{"héllo", 5, "héllo", false},
		{"héllo", 2, "hé", true},
		{"日本語", 1, "日", true},
		{"日本語", 3, "日本語", false},
		{"\xff\xfeab", 2, "\xff\xfe", true},
		{"abc", -1, "", true},
	}
	for _, tt := range tests {
		got, cut := Cap(tt.s, tt.max)
		if got != tt.want || cut != tt.cut {
			t.Errorf("Cap(%q, %d) = %q, %v; want %q, %v", tt.s, tt.max, got, cut, tt.want, tt.cut)
		}
	}
}

func TestLineAt(t *testing.T) {
	s := "ab\ncd\nef"
	for off, want := range []int{1, 1, 1, 2, 2, 2, 3, 3, 3} {
		if got := LineAt(s, off); got != want {
			t.Errorf("LineAt(%q, %d) = %d, want %d", s, off, got, want)
		}
	}
	if LineAt(s, 100) != 3 || LineAt(s, -1) != 1 {
		t.Error("LineAt does not clamp its offset")
	}
}

func fuzzBounds(start, end int, hasStart, hasEnd bool) Bounds {
	return Bounds{Start: start % 50, End: end % 50, HasStart: hasStart, HasEnd: hasEnd}
}

var fuzzSeeds = []string{"", "\n", "a", "a\nb", "a\r\nb\r\n", "a\r", "\r\r\n\n", "x\n\n\ny\r", "\xff\n"}

func FuzzSlice(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s, 1, 2, true, true)
		f.Add(s, 2, 0, true, false)
	}
	f.Fuzz(func(t *testing.T, content string, start, end int, hasStart, hasEnd bool) {
		b := fuzzBounds(start, end, hasStart, hasEnd)
		got, err := Slice("p", content, b)
		want, msg := refSlice("p", content, b)
		if got != want || errMsg(err) != msg {
			t.Fatalf("Slice(%q, %+v) = %q, %v; want %q, %q", content, b, got, err, want, msg)
		}
	})
}

func FuzzNumbered(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s, 1, 2, true, true)
		f.Add(s, 0, 0, false, false)
	}
	f.Fuzz(func(t *testing.T, content string, start, end int, hasStart, hasEnd bool) {
		b := fuzzBounds(start, end, hasStart, hasEnd)
		got, err := Numbered("p", content, b)
		want, msg := refNumbered("p", content, b)
		if got != want || errMsg(err) != msg {
			t.Fatalf("Numbered(%q, %+v) = %q, %v; want %q, %q", content, b, got, err, want, msg)
		}
		if Count(content) != len(refLines(content)) {
			t.Fatalf("Count(%q) = %d, want %d", content, Count(content), len(refLines(content)))
		}
	})
}

func FuzzReplace(f *testing.F) {
	f.Add("hello world", "o", "0", false)
	f.Add("aaaa", "aa", "b", true)
	f.Add("abc", "", "x", false)
	f.Add("\xffa", "a", "x", true)
	f.Fuzz(func(t *testing.T, content, old, new string, all bool) {
		got, n, err := Replace("p", content, old, new, all)
		var want, msg string
		wantN := 0
		switch c := strings.Count(content, old); {
		case old == "":
			msg = "anchor must not be empty"
		case !utf8.ValidString(content):
			msg = "file is not valid UTF-8 text: p"
		case c == 0:
			msg = "anchor not found in p"
		case c > 1 && !all:
			msg = fmt.Sprintf("anchor occurs %d times in p, expected exactly one", c)
		default:
			want, wantN = strings.ReplaceAll(content, old, new), c
		}
		if got != want || n != wantN || errMsg(err) != msg {
			t.Fatalf("Replace(%q, %q, %q, %v) = %q, %d, %v; want %q, %d, %q",
				content, old, new, all, got, n, err, want, wantN, msg)
		}
	})
}

func BenchmarkSlice(b *testing.B) {
	var sb strings.Builder
	for i := range 120 {
		fmt.Fprintf(&sb, "line %d: the quick brown fox jumps over the lazy dog, twice over\n", i)
	}
	content := sb.String() // about 7.5 KiB
	b.Run("bounded", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = Slice("p", content, Range(20, 40))
		}
	})
	b.Run("numbered", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = Numbered("p", content, Range(20, 40))
		}
	})
	b.Run("numbered-all", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = Numbered("p", content, All())
		}
	})
}
