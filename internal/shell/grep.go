package shell

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"strconv"
	"strings"
)

// breToRE2 turns a POSIX basic regular expression into RE2 syntax: in a
// BRE, \( \) \{ \} \| \+ \? are operators and ( ) { } | + ? are literal.
func breToRE2(s string) string {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if inClass {
			b.WriteByte(ch)
			if ch == ']' {
				inClass = false
			}
			continue
		}
		switch {
		case ch == '[':
			inClass = true
			b.WriteByte(ch)
			if i+1 < len(s) && s[i+1] == '^' {
				b.WriteByte('^')
				i++
			}
			if i+1 < len(s) && s[i+1] == ']' {
				b.WriteString(`\]`)
				i++
			}
		case ch == '\\' && i+1 < len(s):
			i++
			switch n := s[i]; n {
			case '(', ')', '{', '}', '|', '+', '?':
				b.WriteByte(n)
			case '<', '>':
				b.WriteString(`\b`)
			default:
				b.WriteByte('\\')
				b.WriteByte(n)
			}
		case strings.IndexByte("(){}|+?", ch) >= 0:
			b.WriteByte('\\')
			b.WriteByte(ch)
		case ch == '*' && (b.Len() == 0 || strings.HasSuffix(b.String(), "^")):
			b.WriteString(`\*`)
		default:
			b.WriteByte(ch)
		}
	}
	return b.String()
}

// ereToRE2 adapts a POSIX extended regular expression: \< and \> are
// word boundaries.
func ereToRE2(s string) string {
	s = strings.ReplaceAll(s, `\<`, `\b`)
	return strings.ReplaceAll(s, `\>`, `\b`)
}

// compileRE compiles a sed or grep pattern.
func compileRE(pat string, ere, fixed, icase, word, line bool) (*regexp.Regexp, error) {
	switch {
	case fixed:
		pat = regexp.QuoteMeta(pat)
	case ere:
		pat = ereToRE2(pat)
	default:
		pat = breToRE2(pat)
	}
	if word {
		pat = `\b(?:` + pat + `)\b`
	}
	if line {
		pat = `^(?:` + pat + `)$`
	}
	if icase {
		pat = "(?i)" + pat
	}
	return regexp.Compile(pat)
}

func cmdEgrep(c *cmd, args []string) int { return cmdGrep(c, append([]string{"-E"}, args...)) }
func cmdFgrep(c *cmd, args []string) int { return cmdGrep(c, append([]string{"-F"}, args...)) }

func cmdGrep(c *cmd, args []string) int {
	c.name = "grep"
	f, err := parseFlags(args, "nivclLrREFPowxqshHG", "emABC",
		"line-number:n", "ignore-case:i", "invert-match:v", "count:c", "files-with-matches:l",
		"files-without-match:L", "recursive:r", "extended-regexp:E", "fixed-strings:F",
		"only-matching:o", "word-regexp:w", "line-regexp:x", "quiet:q", "silent:q",
		"no-messages:s", "with-filename:H", "no-filename:h", "regexp=:e", "max-count=:m",
		"include=", "exclude=", "exclude-dir=", "after-context=:A", "before-context=:B", "context=:C", "perl-regexp:P")
	if err != nil {
		c.errf("%v", err)
		return 2
	}
	// The flags the inner loop reads, looked up once.
	optV, optQ, optN, optO := f.has("v"), f.has("q"), f.has("n"), f.has("o")
	optL, optLL, optC := f.has("l"), f.has("L"), f.has("c")
	listOnly := optL || optLL || optC
	pats := f.vals["e"]
	operands := f.args
	if len(pats) == 0 {
		if len(operands) == 0 {
			c.errf("usage: grep [OPTION]... PATTERNS [FILE]...")
			return 2
		}
		pats, operands = strings.Split(operands[0], "\n"), operands[1:]
	}
	alts := make([]string, len(pats))
	for i, p := range pats {
		switch {
		case f.has("F"):
			alts[i] = regexp.QuoteMeta(p)
		case f.has("E") || f.has("P"):
			alts[i] = ereToRE2(p)
		default:
			alts[i] = breToRE2(p)
		}
	}
	pat := "(?:" + strings.Join(alts, ")|(?:") + ")"
	re, err := compileRE(pat, true, false, f.has("i"), f.has("w"), f.has("x"))
	if err != nil {
		c.errf("invalid regular expression: %v", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
		return 2
	}
	// Lines without the pattern's literal prefix cannot match: a
	// substring search skips them.
	litStr, _ := re.LiteralPrefix()
	lit := []byte(litStr)
	maxCount := -1
	if m, ok := f.val("m"); ok {
		fmt.Sscan(m, &maxCount)
	}
	recursive := f.has("r") || f.has("R")
	if len(operands) == 0 && recursive {
		operands = []string{""}
	}
	multi := len(operands) > 1 || recursive
	if f.has("H") {
		multi = true
	}
	if f.has("h") {
		multi = false
	}
	includes, excludes := f.vals["include"], f.vals["exclude"]
	matched, trouble := false, false
	ctxA, ctxB := 0, 0
	if v, ok := f.val("C"); ok {
		fmt.Sscan(v, &ctxA)
		ctxB = ctxA
	}
	if v, ok := f.val("A"); ok {
		fmt.Sscan(v, &ctxA)
	}
	if v, ok := f.val("B"); ok {
		fmt.Sscan(v, &ctxB)
	}
	printedAny := false
	do := func(nameOf func() string, next func() ([]byte, bool)) {
		name, named := "", false
		getName := func() string {
			if !named {
				name, named = nameOf(), true
			}
			return name
		}
		n, count := 0, 0
		type held struct {
			n    int
			line []byte
		}
		var ring []held
		lastPrinted, afterLeft := 0, 0
		emit := func(n int, line []byte, sep string) bool {
			if (ctxA > 0 || ctxB > 0) && printedAny && (lastPrinted == 0 || n > lastPrinted+1) {
				c.out.WriteString("--\n")
			}
			if multi {
				c.out.WriteString(getName() + sep)
			}
			if optN {
				c.out.WriteString(strconv.Itoa(n) + sep)
			}
			c.out.Write(line)
			printedAny, lastPrinted = true, n
			return c.out.WriteByte('\n') == nil
		}
		for !(maxCount >= 0 && count >= maxCount) {
			line, ok := next()
			if !ok {
				break
			}
			n++
			hit := (len(lit) == 0 || bytes.Contains(line, lit)) && re.Match(line)
			if hit == optV {
				if afterLeft > 0 {
					afterLeft--
					if !emit(n, line, "-") {
						return
					}
				} else if ctxB > 0 {
					ring = append(ring, held{n, append([]byte(nil), line...)})
					if len(ring) > ctxB {
						ring = ring[1:]
					}
				}
				continue
			}
			count++
			matched = true
			if optQ {
				return
			}
			if listOnly {
				continue
			}
			for _, h := range ring {
				if !emit(h.n, h.line, "-") {
					return
				}
			}
			ring = ring[:0]
			afterLeft = ctxA
			if optO && !optV {
				prefix := ""
				if multi {
					prefix = getName() + ":"
				}
				if optN {
					prefix += strconv.Itoa(n) + ":"
				}
				for _, m := range re.FindAll(line, -1) {
					if len(m) > 0 {
						c.out.WriteString(prefix)
						c.out.Write(m)
						c.out.WriteByte('\n')
					}
				}
				continue
			}
			if !emit(n, line, ":") {
				return // the reader went away (grep ... | head)
			}
		}
		switch {
		case optQ:
		case optL:
			if count > 0 {
				c.out.WriteString(getName() + "\n")
			}
		case optLL:
			if count == 0 {
				c.out.WriteString(getName() + "\n")
			}
		case optC:
			if multi {
				c.out.WriteString(getName() + ":")
			}
			fmt.Fprintf(c.out, "%d\n", count)
		}
	}
	if len(operands) == 0 {
		do(stdinName, c.readerLines(c.stdin))
		if c.stopped() {
			return 2
		}
	}
	for _, op := range operands {
		if c.stopped() {
			return 2
		}
		if op == "-" {
			do(stdinName, c.readerLines(c.stdin))
			continue
		}
		p := c.path(op)
		fi, err := c.e.v.stat(p)
		if err != nil {
			if !f.has("s") {
				c.errf("%s: %v", op, errText(err))
			}
			trouble = true
			continue
		}
		if !fi.IsDir() {
			b, err := c.e.v.readFile(p)
			if err != nil {
				trouble = true
				continue
			}
			do(func() string { return op }, bytesLines(b))
			continue
		}
		if !recursive {
			if !f.has("s") {
				c.errf("%s: Is a directory", op)
			}
			trouble = true
			continue
		}
		file := func(q string, b []byte) error {
			if len(includes) > 0 || len(excludes) > 0 {
				base := path.Base(q)
				if len(includes) > 0 && !anyMatch(includes, base) || anyMatch(excludes, base) {
					return nil
				}
			}
			if len(lit) > 0 && !optV && !bytes.Contains(b, lit) {
				if !optC && !optLL {
					return nil // no line can match, and nothing is said of the file
				}
				b = nil
			}
			do(func() string { return joinOperand(op, p, q) }, bytesLines(b))
			if f.has("q") && matched {
				return errStop
			}
			return nil
		}
		excludeDirs := f.vals["exclude-dir"]
		seen := 0
		fast, err := c.e.v.scanContent(p, func(q string, b []byte) (bool, error) {
			if seen++; seen%64 == 0 && c.stopped() {
				return false, c.ctx.Err()
			}
			for d := q; len(excludeDirs) > 0 && d != "." && d != p; {
				if d = path.Dir(d); d != "." && d != p && anyMatch(excludeDirs, path.Base(d)) {
					return true, nil
				}
			}
			if err := file(q, b); err != nil {
				return false, err
			}
			return true, nil
		})
		if !fast {
			err = c.e.v.walk(p, func(q string, isDir bool) error {
				if c.stopped() {
					return c.ctx.Err()
				}
				if isDir {
					if q != p && anyMatch(f.vals["exclude-dir"], path.Base(q)) {
						return errSkipDir
					}
					return nil
				}
				b, err := c.e.v.readFile(q)
				if err != nil {
					return nil
				}
				return file(q, b)
			})
		}
		if err != nil && err != errStop && c.stopped() {
			return 2
		}
		if f.has("q") && matched {
			break
		}
	}
	switch {
	case trouble && !(f.has("q") && matched):
		return 2
	case matched:
		return 0
	}
	return 1
}

func anyMatch(globs []string, name string) bool {
	for _, g := range globs {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}

// joinOperand spells workspace path q, found under operand op (whose
// workspace path is p), as GNU's tools do: the operand and the rest.
func joinOperand(op, p, q string) string {
	if op == "" {
		if p == "." {
			return q
		}
		return q[len(p)+1:]
	}
	if q == p {
		return op
	}
	rest := q
	if p != "." {
		rest = q[len(p)+1:]
	}
	if strings.HasSuffix(op, "/") {
		return op + rest
	}
	return op + "/" + rest
}

func stdinName() string { return "(standard input)" }

var (
	errSkipDir = fs.SkipDir
	errStop    = errors.New("stop")
)

// bytesLines iterates over the lines of b, without their "\n".
func bytesLines(b []byte) func() ([]byte, bool) {
	return func() ([]byte, bool) {
		if len(b) == 0 {
			return nil, false
		}
		var line []byte
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			line, b = b, nil
		}
		return line, true
	}
}

// readerLines iterates over the lines of r as they arrive, each within
// the memory limit; it ends when the run is stopped or output fails.
func (c *cmd) readerLines(r io.Reader) func() ([]byte, bool) {
	br := bufio.NewReaderSize(stopReader{c, r}, 64<<10)
	var long []byte
	return func() ([]byte, bool) {
		long = long[:0]
		for {
			if c.stopped() {
				return nil, false
			}
			b, err := br.ReadSlice('\n')
			if err == bufio.ErrBufferFull {
				long = append(long, b...)
				if int64(len(long)) > c.e.lim.memory {
					c.e.lim.fail(&LimitError{Msg: fmt.Sprintf("sh: %s: a line is over the memory limit (%s): the run was stopped", c.name, sizeText(c.e.lim.memory))})
					return nil, false
				}
				continue
			}
			if len(long) > 0 {
				b = append(long, b...)
			}
			if len(b) == 0 && err != nil {
				return nil, false
			}
			return bytes.TrimSuffix(b, []byte("\n")), true
		}
	}
}
