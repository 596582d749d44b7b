package udiff

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// head is the header that every case below writes.
const head = "--- a/f\n+++ b/f\n"

// numbered returns lines "1\n" … "n\n".
func numbered(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = strconv.Itoa(i+1) + "\n"
	}
	return out
}

// text joins lines, replacing line k (1-based) by repl[k]; "" removes it.
func text(n int, repl map[int]string) string {
	var b strings.Builder
	for i, l := range numbered(n) {
		if r, ok := repl[i+1]; ok {
			l = r
		}
		b.WriteString(l)
	}
	return b.String()
}

var cases = []struct {
	name    string
	a, b    string
	context int
	want    string
}{
	{name: "equal", a: "x\ny\n", b: "x\ny\n", context: 3, want: ""},
	{name: "both empty", a: "", b: "", context: 3, want: ""},
	{name: "from empty", a: "", b: "x\ny\n", context: 3, want: head + "@@ -0,0 +1,2 @@\n+x\n+y\n"},
	{name: "to empty", a: "x\ny\n", b: "", context: 3, want: head + "@@ -1,2 +0,0 @@\n-x\n-y\n"},
	{name: "one line to empty", a: "x\n", b: "", context: 3, want: head + "@@ -1 +0,0 @@\n-x\n"},
	{name: "insert at start", a: text(10, nil), b: "0\n" + text(10, nil), context: 3,
		want: head + "@@ -1,3 +1,4 @@\n+0\n 1\n 2\n 3\n"},
	{name: "insert in middle", a: text(10, nil), b: text(10, map[int]string{5: "5\nnew\n"}), context: 3,
		want: head + "@@ -3,6 +3,7 @@\n 3\n 4\n 5\n+new\n 6\n 7\n 8\n"},
	{name: "insert at end", a: text(10, nil), b: text(10, nil) + "11\n", context: 3,
		want: head + "@@ -8,3 +8,4 @@\n 8\n 9\n 10\n+11\n"},
	{name: "delete at start", a: text(10, nil), b: text(10, map[int]string{1: ""}), context: 3,
		want: head + "@@ -1,4 +1,3 @@\n-1\n 2\n 3\n 4\n"},
	{name: "delete in middle", a: text(10, nil), b: text(10, map[int]string{5: "", 6: ""}), context: 3,
		want: head + "@@ -2,8 +2,6 @@\n 2\n 3\n 4\n-5\n-6\n 7\n 8\n 9\n"},
	{name: "delete at end", a: text(10, nil), b: text(9, nil), context: 3,
		want: head + "@@ -7,4 +7,3 @@\n 7\n 8\n 9\n-10\n"},
	{name: "change at start", a: text(10, nil), b: text(10, map[int]string{1: "one\n"}), context: 3,
		want: head + "@@ -1,4 +1,4 @@\n-1\n+one\n 2\n 3\n 4\n"},
	{name: "change in middle", a: text(10, nil), b: text(10, map[int]string{5: "five\n"}), context: 3,
		want: head + "@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n"},
	{name: "change at end", a: text(10, nil), b: text(10, map[int]string{10: "ten\n"}), context: 3,
		want: head + "@@ -7,4 +7,4 @@\n 7\n 8\n 9\n-10\n+ten\n"},
	{name: "two hunks", a: text(20, nil), b: text(20, map[int]string{2: "two\n", 18: "eighteen\n"}), context: 3,
		want: head + "@@ -1,5 +1,5 @@\n 1\n-2\n+two\n 3\n 4\n 5\n" +
			"@@ -15,6 +15,6 @@\n 15\n 16\n 17\n-18\n+eighteen\n 19\n 20\n"},
	{name: "hunks merge at 2×context", a: text(20, nil), b: text(20, map[int]string{5: "five\n", 12: "twelve\n"}), context: 3,
		want: head + "@@ -2,14 +2,14 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n 9\n 10\n 11\n-12\n+twelve\n 13\n 14\n 15\n"},
	{name: "hunks split past 2×context", a: text(20, nil), b: text(20, map[int]string{5: "five\n", 13: "thirteen\n"}), context: 3,
		want: head + "@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n" +
			"@@ -10,7 +10,7 @@\n 10\n 11\n 12\n-13\n+thirteen\n 14\n 15\n 16\n"},
	{name: "context 0 insert", a: text(5, nil), b: text(5, map[int]string{3: "3\nx\n"}), context: 0,
		want: head + "@@ -3,0 +4 @@\n+x\n"},
	{name: "context 0 delete", a: text(5, nil), b: text(5, map[int]string{3: ""}), context: 0,
		want: head + "@@ -3 +2,0 @@\n-3\n"},
	{name: "context 0 insert at top", a: "x\n", b: "w\nx\n", context: 0,
		want: head + "@@ -0,0 +1 @@\n+w\n"},
	{name: "negative context is 0", a: "x\n", b: "y\n", context: -2,
		want: head + "@@ -1 +1 @@\n-x\n+y\n"},
	{name: "no newline on old side", a: "x\ny", b: "x\ny\n", context: 3,
		want: head + "@@ -1,2 +1,2 @@\n x\n-y\n\\ No newline at end of file\n+y\n"},
	{name: "no newline on new side", a: "x\ny\n", b: "x\ny", context: 3,
		want: head + "@@ -1,2 +1,2 @@\n x\n-y\n+y\n\\ No newline at end of file\n"},
	{name: "no newline on either side", a: "x\ny", b: "w\ny", context: 3,
		want: head + "@@ -1,2 +1,2 @@\n-x\n+w\n y\n\\ No newline at end of file\n"},
	{name: "no newline, last line changed", a: "x\ny", b: "x\nz", context: 3,
		want: head + "@@ -1,2 +1,2 @@\n x\n-y\n\\ No newline at end of file\n+z\n\\ No newline at end of file\n"},
	{name: "no newline, far from the change", a: text(10, map[int]string{10: "10"}), b: text(10, map[int]string{1: "one\n", 10: "10"}), context: 3,
		want: head + "@@ -1,4 +1,4 @@\n-1\n+one\n 2\n 3\n 4\n"},
	{name: "single line without newline from empty", a: "", b: "x", context: 3,
		want: head + "@@ -0,0 +1 @@\n+x\n\\ No newline at end of file\n"},
	{name: "CRLF is content", a: "x\r\ny\r\n", b: "x\r\nz\r\n", context: 3,
		want: head + "@@ -1,2 +1,2 @@\n x\r\n-y\r\n+z\r\n"},
	{name: "CRLF to LF", a: "x\r\n", b: "x\n", context: 3,
		want: head + "@@ -1 +1 @@\n-x\r\n+x\n"},
	{name: "lone CR is not a line end", a: "x\ry\n", b: "x\rz\n", context: 3,
		want: head + "@@ -1 +1 @@\n-x\ry\n+x\rz\n"},
	{name: "suffix not on a line boundary", a: "ab\ncd\n", b: "xb\ncd\n", context: 0,
		want: head + "@@ -1 +1 @@\n-ab\n+xb\n"},
	{name: "prefix not on a line boundary", a: "ab\ncd\n", b: "ab\nce\n", context: 0,
		want: head + "@@ -2 +2 @@\n-cd\n+ce\n"},
	{name: "nothing in common", a: "a\nb\n", b: "c\nd\ne\n", context: 3,
		want: head + "@@ -1,2 +1,3 @@\n-a\n-b\n+c\n+d\n+e\n"},
}

func TestUnified(t *testing.T) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Unified("a/f", "b/f", c.a, c.b, c.context)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("Unified (-want +got):\n%s", diff)
			}
			checkApplies(t, c.a, c.b, got)
		})
	}
}

// checkApplies fails t unless patch applied to a gives b.
func checkApplies(t *testing.T, a, b, patch string) {
	t.Helper()
	if a == b {
		if patch != "" {
			t.Fatalf("equal texts gave a diff:\n%s", patch)
		}
		return
	}
	got, err := apply(a, patch)
	if err != nil {
		t.Fatalf("apply: %v\na = %q\nb = %q\ndiff:\n%s", err, a, b, patch)
	}
	if got != b {
		t.Fatalf("apply gave %q, want %q\na = %q\ndiff:\n%s", got, b, a, patch)
	}
}

// apply is a strict patch: every hunk must start where its header says and
// its context and removed lines must match exactly, with no fuzz. It also
// checks the hunk counts, their order, and the "\ No newline" markers.
func apply(a, patch string) (string, error) {
	old := splitLines(a)
	pl := splitLines(patch)
	if len(pl) < 2 || !strings.HasPrefix(pl[0], "--- ") || !strings.HasPrefix(pl[1], "+++ ") {
		return "", fmt.Errorf("no --- +++ header")
	}
	pl = pl[2:]
	var out strings.Builder
	pos := 0   // lines of old copied or consumed
	newAt := 0 // lines written to out
	for len(pl) > 0 {
		var o0, on, n0, nn int
		if err := parseHeader(pl[0], &o0, &on, &n0, &nn); err != nil {
			return "", err
		}
		pl = pl[1:]
		start := o0 - 1 // 0-based first old line of the hunk
		if on == 0 {
			start = o0 // an empty range names the line before
		}
		if start < pos || start > len(old) {
			return "", fmt.Errorf("hunk at old line %d: out of order or past the end (at %d of %d)", o0, pos, len(old))
		}
		for _, l := range old[pos:start] {
			out.WriteString(l)
		}
		newAt += start - pos
		if wantAt := n0 - 1; nn == 0 {
			wantAt = n0
			if newAt != wantAt {
				return "", fmt.Errorf("hunk +%d,0 lands at new line %d", n0, newAt)
			}
		} else if newAt != wantAt {
			return "", fmt.Errorf("hunk +%d,%d lands at new line %d", n0, nn, newAt+1)
		}
		pos = start
		var gotOld, gotNew int
		for len(pl) > 0 && !strings.HasPrefix(pl[0], "@@ ") {
			l := pl[0]
			pl = pl[1:]
			if !strings.HasSuffix(l, "\n") {
				return "", fmt.Errorf("diff line %q lacks its newline", l)
			}
			if len(pl) > 0 && pl[0] == "\\ No newline at end of file\n" {
				l = strings.TrimSuffix(l, "\n")
				pl = pl[1:]
				if len(pl) > 0 && !strings.HasPrefix(pl[0], "@@ ") && l[0] != '-' {
					return "", fmt.Errorf("no-newline line %q is not the last of its file", l)
				}
			}
			mark, body := l[0], l[1:]
			switch mark {
			case ' ', '-':
				if pos >= len(old) || old[pos] != body {
					return "", fmt.Errorf("old line %d: have %q, the diff says %q", pos+1, at(old, pos), body)
				}
				pos++
				gotOld++
				if mark == ' ' {
					out.WriteString(body)
					gotNew++
				}
			case '+':
				out.WriteString(body)
				gotNew++
			default:
				return "", fmt.Errorf("bad diff line %q", l)
			}
		}
		newAt += gotNew
		if gotOld != on || gotNew != nn {
			return "", fmt.Errorf("hunk -%d,%d +%d,%d has %d old and %d new lines", o0, on, n0, nn, gotOld, gotNew)
		}
	}
	for _, l := range old[pos:] {
		out.WriteString(l)
	}
	return out.String(), nil
}

func at(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "<end of file>"
}

// parseHeader reads "@@ -o0[,on] +n0[,nn] @@\n"; a missing count is 1.
func parseHeader(h string, o0, on, n0, nn *int) error {
	f := strings.Fields(h)
	if len(f) != 4 || f[0] != "@@" || f[3] != "@@" || f[1][0] != '-' || f[2][0] != '+' || !strings.HasSuffix(h, " @@\n") {
		return fmt.Errorf("bad hunk header %q", h)
	}
	for _, r := range []struct {
		s          string
		start, cnt *int
	}{{f[1][1:], o0, on}, {f[2][1:], n0, nn}} {
		s, c, ok := strings.Cut(r.s, ",")
		var err error
		if *r.start, err = strconv.Atoi(s); err != nil {
			return fmt.Errorf("bad hunk header %q", h)
		}
		*r.cnt = 1
		if ok {
			if *r.cnt, err = strconv.Atoi(c); err != nil || c == "1" {
				return fmt.Errorf("bad hunk header %q (a count of 1 is left out)", h)
			}
		}
	}
	return nil
}

func splitLines(t string) []string {
	var out []string
	for t != "" {
		end := strings.IndexByte(t, '\n') + 1
		if end == 0 {
			end = len(t)
		}
		out = append(out, t[:end])
		t = t[end:]
	}
	return out
}

// lineify turns arbitrary bytes into a text of few distinct lines, so
// random inputs share lines: each byte is a line of one of four letters,
// ending in "\n" or "\r\n"; a last byte with bit 3 set drops the final
// newline.
func lineify(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		b.WriteByte("abcd"[c&3])
		if c&4 != 0 {
			b.WriteByte('\r')
		}
		b.WriteByte('\n')
	}
	out := b.String()
	if len(s) > 0 && s[len(s)-1]&8 != 0 {
		out = strings.TrimSuffix(out, "\n")
	}
	return out
}

// lcs is the length of the longest common subsequence of two line lists.
func lcs(a, b []string) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for i := range a {
		for j := range b {
			if a[i] == b[j] {
				cur[j+1] = prev[j] + 1
			} else {
				cur[j+1] = max(cur[j], prev[j+1])
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// changed counts the removed and added lines of a diff.
func changed(patch string) int {
	n := 0
	for i, l := range splitLines(patch) {
		if i >= 2 && (l[0] == '-' || l[0] == '+') {
			n++
		}
	}
	return n
}

// TestRandom checks on random texts that the diff applies and that it is
// minimal: it removes and adds len(a)+len(b)-2·LCS lines.
func TestRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		a, b := randomText(r, r.IntN(40)), randomText(r, r.IntN(40))
		if r.IntN(3) == 0 { // a nearby edit
			b = mutate(r, a)
		}
		ctx := r.IntN(5)
		d := Unified("a/f", "b/f", a, b, ctx)
		checkApplies(t, a, b, d)
		la, lb := splitLines(a), splitLines(b)
		if want := len(la) + len(lb) - 2*lcs(la, lb); changed(d) != want {
			t.Fatalf("diff changes %d lines, the minimum is %d\na = %q\nb = %q\n%s", changed(d), want, a, b, d)
		}
	}
}

func randomText(r *rand.Rand, n int) string {
	buf := make([]byte, n)
	for i := range buf {
		buf[i] = byte(r.IntN(256))
	}
	return lineify(string(buf))
}

func mutate(r *rand.Rand, a string) string {
	l := splitLines(a)
	for range 1 + r.IntN(3) {
		i := r.IntN(len(l) + 1)
		switch r.IntN(3) {
		case 0:
			l = append(l[:i], append([]string{"new\n"}, l[i:]...)...)
		case 1:
			if i < len(l) {
				l = append(l[:i], l[i+1:]...)
			}
		case 2:
			if i < len(l) {
				l[i] = "changed\n"
			}
		}
	}
	return strings.Join(l, "")
}

// TestBudget runs the diff with almost no budget: it gives up early and
// replaces whole regions, but the patch must still turn a into b.
func TestBudget(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, budget := range []int{0, 1, 10, 100} {
		for range 500 {
			a := randomText(r, r.IntN(60))
			b := mutate(r, a)
			if r.IntN(2) == 0 {
				b = randomText(r, r.IntN(60))
			}
			checkApplies(t, a, b, unified("a/f", "b/f", a, b, r.IntN(4), budget))
		}
	}
}

// TestLarge diffs two 64 MiB texts that are totally different (8 MiB
// under the race detector): one pair with no line in common (no Myers at
// all), and one built from few distinct lines, where Myers runs out of
// budget and replaces the rest.
func TestLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("64 MiB inputs")
	}
	size := 64 << 20
	if raceEnabled {
		size = 8 << 20
	}
	big := func(prefix string) string {
		var b strings.Builder
		b.Grow(size + 64)
		for i := 0; b.Len() < size; i++ {
			b.WriteString(prefix + strconv.Itoa(i) + "\n")
		}
		return b.String()
	}
	few := func(seed uint64) string {
		r := rand.New(rand.NewPCG(seed, seed))
		var b strings.Builder
		b.Grow(size + 64)
		for b.Len() < size {
			b.WriteString([]string{"alpha\n", "beta\n", "gamma\n", "delta\n"}[r.IntN(4)])
		}
		return b.String()
	}
	for _, c := range []struct {
		name string
		a, b string
	}{
		{"unique lines", big("old line "), big("new line ")},
		{"few distinct lines", few(1), few(2)},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := Unified("a/f", "b/f", c.a, c.b, 3)
			// Check the shape without applying: every line is - or +
			// (or the context that matched), and the counts add up.
			la, lb := strings.Count(c.a, "\n"), strings.Count(c.b, "\n")
			var minus, plus, ctx int
			for l := range strings.Lines(d) {
				switch l[0] {
				case '-':
					minus++
				case '+':
					plus++
				case ' ':
					ctx++
				}
			}
			minus--
			plus-- // the --- and +++ lines
			if minus+ctx < la/2 || plus+ctx < lb/2 || minus > la || plus > lb {
				t.Errorf("diff of %d and %d lines has %d -, %d +, %d context", la, lb, minus, plus, ctx)
			}
		})
	}
}

func TestCursorAndScript(t *testing.T) {
	// The number of old lines counts a last line without "\n".
	for _, c := range []struct {
		a    string
		want int
	}{{"", 0}, {"x", 1}, {"x\n", 1}, {"x\ny", 2}, {"\n\n", 2}} {
		if got := edits(c.a, c.a+"z", maxWork).aLines; got != c.want {
			t.Errorf("aLines(%q) = %d, want %d", c.a, got, c.want)
		}
	}
}

func FuzzUnified(f *testing.F) {
	for _, c := range cases {
		f.Add(c.a, c.b, int8(c.context))
	}
	f.Add("\x01\x02\x03\x00", "\x02\x03\x01\x08", int8(1))
	f.Fuzz(func(t *testing.T, a, b string, ctx int8) {
		if len(a) > 1<<10 || len(b) > 1<<10 {
			return
		}
		// A budget that keeps each run short yet is never reached by
		// inputs of up to 200 lines, whose diffs are checked for
		// minimality; past it the diff must still apply.
		const budget = 1 << 20
		c := int(ctx % 8)
		checkApplies(t, a, b, unified("a/f", "b/f", a, b, c, budget))
		la, lb := lineify(a), lineify(b)
		d := unified("a/f", "b/f", la, lb, c, budget)
		checkApplies(t, la, lb, d)
		if len(a) <= 200 && len(b) <= 200 {
			sa, sb := splitLines(la), splitLines(lb)
			if want := len(sa) + len(sb) - 2*lcs(sa, sb); changed(d) != want {
				t.Fatalf("diff changes %d lines, the minimum is %d\n%s", changed(d), want, d)
			}
		}
	})
}
