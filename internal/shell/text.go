package shell

import (
	"bufio"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// sortKey is one -k field range.
type sortKey struct {
	f1, c1, f2, c2 int
	numeric, rev   bool
}

func parseKey(s string) (sortKey, error) {
	var k sortKey
	opts := func(s string) string {
		i := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' })
		if i < 0 {
			return s
		}
		for _, o := range s[i:] {
			switch o {
			case 'n':
				k.numeric = true
			case 'r':
				k.rev = true
			case 'b', 'f':
			default:
				return "!"
			}
		}
		return s[:i]
	}
	a, b, hasB := strings.Cut(s, ",")
	af, ac, _ := strings.Cut(a, ".")
	if ac == "" {
		af = opts(af)
	} else {
		ac = opts(ac)
	}
	var err error
	if k.f1, err = strconv.Atoi(af); err != nil || k.f1 < 1 {
		return k, fmt.Errorf("invalid number at field start: invalid count at start of '%s'", s)
	}
	if ac != "" {
		if k.c1, err = strconv.Atoi(ac); err != nil {
			return k, fmt.Errorf("invalid number after '.': invalid count at start of '%s'", ac)
		}
	}
	if hasB {
		bf, bc, _ := strings.Cut(b, ".")
		if bc == "" {
			bf = opts(bf)
		} else {
			bc = opts(bc)
		}
		if k.f2, err = strconv.Atoi(bf); err != nil {
			return k, fmt.Errorf("invalid number after ',': invalid count at start of '%s'", b)
		}
		if bc != "" {
			k.c2, _ = strconv.Atoi(bc)
		}
	}
	return k, nil
}

// fieldSpans returns the [start,end) byte spans of line's fields: with a
// separator, between separators; without, each field starts with its
// leading blanks (as GNU sort counts them).
func fieldSpans(line string, sep string) [][2]int {
	var out [][2]int
	if sep != "" {
		start := 0
		for {
			i := strings.Index(line[start:], sep)
			if i < 0 {
				out = append(out, [2]int{start, len(line)})
				return out
			}
			out = append(out, [2]int{start, start + i})
			start += i + len(sep)
		}
	}
	i := 0
	for i < len(line) {
		start := i
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		for i < len(line) && line[i] != ' ' && line[i] != '\t' {
			i++
		}
		out = append(out, [2]int{start, i})
	}
	return out
}

func (k sortKey) extract(line, sep string) string {
	spans := fieldSpans(line, sep)
	if k.f1 > len(spans) {
		return ""
	}
	start := spans[k.f1-1][0]
	if k.c1 > 0 {
		s := spans[k.f1-1]
		if sep == "" { // characters count from the field's first non-blank
			for s[0] < s[1] && (line[s[0]] == ' ' || line[s[0]] == '\t') {
				s[0]++
			}
		}
		start = min(s[0]+k.c1-1, s[1])
	}
	end := len(line)
	if k.f2 > 0 && k.f2 <= len(spans) {
		end = spans[k.f2-1][1]
		if k.c2 > 0 {
			s := spans[k.f2-1]
			if sep == "" {
				for s[0] < s[1] && (line[s[0]] == ' ' || line[s[0]] == '\t') {
					s[0]++
				}
			}
			end = min(s[0]+k.c2, s[1])
		}
	}
	if end < start {
		return ""
	}
	return line[start:end]
}

// numPrefix is the leading number of s, as sort -n reads it (0 if none).
func numPrefix(s string) float64 {
	s = strings.TrimLeft(s, " \t")
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	f, _ := strconv.ParseFloat(s[:i], 64)
	return f
}

func cmdSort(c *cmd, args []string) int {
	f, err := parseFlags(args, "nrufbsc", "kto", "numeric-sort:n", "reverse:r", "unique:u", "ignore-case:f", "key=:k", "field-separator=:t", "output=:o")
	if err != nil {
		return c.usage(err)
	}
	sep, _ := f.val("t")
	var keys []sortKey
	for _, k := range f.vals["k"] {
		key, err := parseKey(k)
		if err != nil {
			c.errf("%v", err)
			return 2
		}
		keys = append(keys, key)
	}
	var lines []string
	st := c.inputs(f.args, func(_ string, b []byte) bool {
		lines = append(lines, splitLines(b)...)
		return true
	})
	if st != 0 {
		return 2
	}
	fold := f.has("f")
	cmpStr := func(a, b string, numeric bool) int {
		if numeric {
			x, y := numPrefix(a), numPrefix(b)
			switch {
			case x < y:
				return -1
			case x > y:
				return 1
			}
			return 0
		}
		if fold {
			a, b = strings.ToUpper(a), strings.ToUpper(b)
		}
		return strings.Compare(a, b)
	}
	keyCmp := func(a, b string) int {
		if len(keys) == 0 {
			return cmpStr(a, b, f.has("n"))
		}
		for _, k := range keys {
			n := f.has("n") || k.numeric
			r := cmpStr(k.extract(a, sep), k.extract(b, sep), n)
			if k.rev {
				r = -r
			}
			if r != 0 {
				return r
			}
		}
		return 0
	}
	full := func(a, b string) int {
		r := keyCmp(a, b)
		if r == 0 && !f.has("u") && !f.has("s") {
			r = strings.Compare(a, b) // last resort: the whole line, bytewise
			if f.has("n") && len(keys) == 0 {
				r = strings.Compare(a, b)
			}
		}
		if f.has("r") {
			r = -r
		}
		return r
	}
	slices.SortStableFunc(lines, full)
	if f.has("u") {
		lines = slices.CompactFunc(lines, func(a, b string) bool { return keyCmp(a, b) == 0 })
	}
	if o, ok := f.val("o"); ok {
		var b strings.Builder
		for _, l := range lines {
			b.WriteString(l + "\n")
		}
		if err := c.e.v.writeFile(c.path(o), []byte(b.String())); err != nil {
			c.errf("%s: %v", o, errText(err))
			return 2
		}
		return 0
	}
	for _, l := range lines {
		c.out.WriteString(l)
		c.out.WriteByte('\n')
	}
	return 0
}

func cmdUniq(c *cmd, args []string) int {
	f, err := parseFlags(args, "cdui", "", "count:c", "repeated:d", "unique:u", "ignore-case:i")
	if err != nil {
		return c.usage(err)
	}
	in := f.args
	if len(in) > 1 {
		in = in[:1]
	}
	var lines []string
	if st := c.inputs(in, func(_ string, b []byte) bool {
		lines = splitLines(b)
		return true
	}); st != 0 {
		return st
	}
	eq := func(a, b string) bool {
		if f.has("i") {
			return strings.EqualFold(a, b)
		}
		return a == b
	}
	for i := 0; i < len(lines); {
		j := i + 1
		for j < len(lines) && eq(lines[j], lines[i]) {
			j++
		}
		n := j - i
		if (!f.has("d") || n > 1) && (!f.has("u") || n == 1) {
			if f.has("c") {
				fmt.Fprintf(c.out, "%7d %s\n", n, lines[i])
			} else {
				c.out.WriteString(lines[i] + "\n")
			}
		}
		i = j
	}
	return 0
}

// parseList parses cut's list: N, N-M, N-, -M, comma separated.
func parseList(s string) ([][2]int, error) {
	var out [][2]int
	for _, part := range strings.Split(s, ",") {
		a, b, isRange := strings.Cut(part, "-")
		lo, hi := 1, 1<<31
		var err error
		if a != "" {
			if lo, err = strconv.Atoi(a); err != nil || lo < 1 {
				return nil, fmt.Errorf("invalid field value '%s'", part)
			}
		}
		if !isRange {
			hi = lo
		} else if b != "" {
			if hi, err = strconv.Atoi(b); err != nil {
				return nil, fmt.Errorf("invalid field range")
			}
		}
		if a == "" && b == "" {
			return nil, fmt.Errorf("invalid range with no endpoint: -")
		}
		out = append(out, [2]int{lo, hi})
	}
	return out, nil
}

func inList(list [][2]int, n int) bool {
	for _, r := range list {
		if n >= r[0] && n <= r[1] {
			return true
		}
	}
	return false
}

func cmdCut(c *cmd, args []string) int {
	f, err := parseFlags(args, "s", "dfcb", "delimiter=:d", "fields=:f", "characters=:c", "bytes=:b", "only-delimited:s")
	if err != nil {
		return c.usage(err)
	}
	delim := "\t"
	if d, ok := f.val("d"); ok {
		if len([]rune(d)) != 1 {
			c.errf("the delimiter must be a single character")
			return 1
		}
		delim = d
	}
	fl, fok := f.val("f")
	cl, cok := f.val("c")
	if !cok {
		cl, cok = f.val("b")
	}
	if fok == cok {
		c.errf("you must specify a list of bytes, characters, or fields")
		return 1
	}
	spec := fl
	if cok {
		spec = cl
	}
	list, err := parseList(spec)
	if err != nil {
		c.errf("%v", err)
		return 1
	}
	return c.inputs(f.args, func(_ string, b []byte) bool {
		for _, l := range splitLines(b) {
			if cok {
				var sb strings.Builder
				for i, r := range []rune(l) {
					if inList(list, i+1) {
						sb.WriteRune(r)
					}
				}
				c.out.WriteString(sb.String() + "\n")
				continue
			}
			if !strings.Contains(l, delim) {
				if !f.has("s") {
					c.out.WriteString(l + "\n")
				}
				continue
			}
			var keep []string
			for i, p := range strings.Split(l, delim) {
				if inList(list, i+1) {
					keep = append(keep, p)
				}
			}
			c.out.WriteString(strings.Join(keep, delim) + "\n")
		}
		return true
	})
}

// trSet expands a tr set: ranges, classes and escapes.
func trSet(s string) ([]rune, error) {
	var out []rune
	r := []rune(s)
	classes := map[string]func(rune) bool{
		"upper": unicode.IsUpper, "lower": unicode.IsLower, "digit": unicode.IsDigit,
		"alpha": unicode.IsLetter, "alnum": func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) },
		"space": unicode.IsSpace, "punct": unicode.IsPunct, "blank": func(r rune) bool { return r == ' ' || r == '\t' },
	}
	for i := 0; i < len(r); i++ {
		if r[i] == '[' && i+1 < len(r) && r[i+1] == ':' {
			if end := strings.Index(string(r[i+2:]), ":]"); end >= 0 {
				name := string(r[i+2:])[:end]
				fn, ok := classes[name]
				if !ok {
					return nil, fmt.Errorf("invalid character class '%s'", name)
				}
				for ch := rune(0); ch < 128; ch++ {
					if fn(ch) {
						out = append(out, ch)
					}
				}
				i += 2 + len([]rune(name)) + 1
				continue
			}
		}
		ch := r[i]
		if ch == '\\' && i+1 < len(r) {
			i++
			switch r[i] {
			case 'n':
				ch = '\n'
			case 't':
				ch = '\t'
			case 'r':
				ch = '\r'
			case '\\':
				ch = '\\'
			default:
				ch = r[i]
			}
		}
		if i+2 < len(r) && r[i+1] == '-' {
			hi := r[i+2]
			if hi < ch {
				return nil, fmt.Errorf("range-endpoints of '%c-%c' are in reverse collating sequence order", ch, hi)
			}
			for x := ch; x <= hi; x++ {
				out = append(out, x)
			}
			i += 2
			continue
		}
		out = append(out, ch)
	}
	return out, nil
}

func cmdTr(c *cmd, args []string) int {
	f, err := parseFlags(args, "dscC", "", "delete:d", "squeeze-repeats:s", "complement:c")
	if err != nil {
		return c.usage(err)
	}
	if len(f.args) == 0 {
		c.errf("missing operand")
		return 1
	}
	set1, err := trSet(f.args[0])
	if err != nil {
		c.errf("%v", err)
		return 1
	}
	var set2 []rune
	if len(f.args) > 1 {
		if set2, err = trSet(f.args[1]); err != nil {
			c.errf("%v", err)
			return 1
		}
	} else if !f.has("d") && !f.has("s") {
		c.errf("missing operand after '%s'", f.args[0])
		return 1
	}
	in1 := map[rune]bool{}
	for _, r := range set1 {
		in1[r] = true
	}
	complement := f.has("c") || f.has("C")
	member := func(r rune) bool { return in1[r] != complement }
	mapping := map[rune]rune{}
	if !f.has("d") && len(set2) > 0 && !complement {
		for i, r := range set1 {
			mapping[r] = set2[min(i, len(set2)-1)]
		}
	}
	squeeze := map[rune]bool{}
	if f.has("s") {
		sq := set1
		if len(set2) > 0 && !f.has("d") || f.has("d") && len(set2) > 0 {
			sq = set2
		}
		for _, r := range sq {
			squeeze[r] = true
		}
	}
	br := bufio.NewReader(stopReader{c, c.stdin})
	last, hasLast := rune(0), false
	for {
		r, _, err := br.ReadRune()
		if err != nil {
			break
		}
		if f.has("d") && member(r) {
			continue
		}
		if m, ok := mapping[r]; ok {
			r = m
		} else if complement && !f.has("d") && len(set2) > 0 && member(r) {
			r = set2[len(set2)-1]
		}
		if f.has("s") && hasLast && r == last && (squeeze[r] || complement && len(set2) == 0 && member(r)) {
			continue
		}
		if _, err := c.out.WriteRune(r); err != nil {
			return 1
		}
		last, hasLast = r, true
	}
	return 0
}

// strftime formats t as date(1) does, for the common conversions.
func strftime(layout string, t time.Time) string {
	var b strings.Builder
	for i := 0; i < len(layout); i++ {
		if layout[i] != '%' || i+1 >= len(layout) {
			b.WriteByte(layout[i])
			continue
		}
		i++
		switch layout[i] {
		case 'Y':
			fmt.Fprintf(&b, "%04d", t.Year())
		case 'm':
			fmt.Fprintf(&b, "%02d", int(t.Month()))
		case 'd':
			fmt.Fprintf(&b, "%02d", t.Day())
		case 'e':
			fmt.Fprintf(&b, "%2d", t.Day())
		case 'H':
			fmt.Fprintf(&b, "%02d", t.Hour())
		case 'M':
			fmt.Fprintf(&b, "%02d", t.Minute())
		case 'S':
			fmt.Fprintf(&b, "%02d", t.Second())
		case 'j':
			fmt.Fprintf(&b, "%03d", t.YearDay())
		case 'a':
			b.WriteString(t.Format("Mon"))
		case 'A':
			b.WriteString(t.Format("Monday"))
		case 'b', 'h':
			b.WriteString(t.Format("Jan"))
		case 'B':
			b.WriteString(t.Format("January"))
		case 'Z':
			b.WriteString(t.Format("MST"))
		case 'z':
			b.WriteString(t.Format("-0700"))
		case 's':
			fmt.Fprintf(&b, "%d", t.Unix())
		case 'F':
			b.WriteString(t.Format("2006-01-02"))
		case 'T':
			b.WriteString(t.Format("15:04:05"))
		case 'N':
			fmt.Fprintf(&b, "%09d", t.Nanosecond())
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			b.WriteByte(layout[i])
		}
	}
	return b.String()
}
