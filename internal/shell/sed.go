package shell

import (
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
)

// A sed address: a line number, the last line ($), or a regex.
type sedAddr struct {
	line int
	last bool
	re   *regexp.Regexp
}

type sedCmd struct {
	a1, a2  *sedAddr
	neg     bool
	name    byte
	re      *regexp.Regexp
	repl    string
	global  bool
	nth     int
	print   bool
	text    string
	from    []rune
	to      []rune
	block   int // for '{': index of the matching '}'
	active  bool
	endLine int
}

type sedParser struct {
	s    string
	i    int
	ere  bool
	last *regexp.Regexp
}

func (p *sedParser) eof() bool { return p.i >= len(p.s) }
func (p *sedParser) peek() byte {
	if p.eof() {
		return 0
	}
	return p.s[p.i]
}
func (p *sedParser) skipSpace() {
	for !p.eof() && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

// delimited reads up to the unescaped delim; "\delim" becomes delim.
func (p *sedParser) delimited(delim byte, isRE bool) (string, error) {
	var b strings.Builder
	for !p.eof() {
		ch := p.s[p.i]
		if ch == '\\' && p.i+1 < len(p.s) {
			next := p.s[p.i+1]
			switch {
			case next == delim:
				b.WriteByte(delim)
			case next == 'n' && isRE:
				b.WriteString(`\n`)
			default:
				b.WriteByte('\\')
				b.WriteByte(next)
			}
			p.i += 2
			continue
		}
		if ch == delim {
			p.i++
			return b.String(), nil
		}
		if ch == '\n' && isRE {
			break
		}
		b.WriteByte(ch)
		p.i++
	}
	return "", fmt.Errorf("unterminated `s' command")
}

func (p *sedParser) regex(src string) (*regexp.Regexp, error) {
	if src == "" {
		if p.last == nil {
			return nil, fmt.Errorf("no previous regular expression")
		}
		return p.last, nil
	}
	flagsI := false
	re, err := compileRE(src, p.ere, false, flagsI, false, false)
	if err != nil {
		return nil, fmt.Errorf("-e expression #1, char %d: %s", p.i, strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	p.last = re
	return re, nil
}

func (p *sedParser) addr() (*sedAddr, error) {
	switch ch := p.peek(); {
	case ch >= '0' && ch <= '9':
		j := p.i
		for !p.eof() && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
		}
		n, _ := strconv.Atoi(p.s[j:p.i])
		return &sedAddr{line: n}, nil
	case ch == '$':
		p.i++
		return &sedAddr{last: true}, nil
	case ch == '/' || ch == '\\':
		delim := byte('/')
		if ch == '\\' {
			p.i++
			delim = p.peek()
		}
		p.i++
		src, err := p.delimited(delim, true)
		if err != nil {
			return nil, fmt.Errorf("unterminated address regex")
		}
		re, err := p.regex(src)
		if err != nil {
			return nil, err
		}
		if p.peek() == 'I' {
			p.i++
			re = regexp.MustCompile("(?i)" + re.String())
		}
		return &sedAddr{re: re}, nil
	}
	return nil, nil
}

func parseSed(script string, ere bool) ([]*sedCmd, error) {
	p := &sedParser{s: script, ere: ere}
	var cmds []*sedCmd
	var open []int
	for {
		for !p.eof() && strings.IndexByte(" \t\n;", p.peek()) >= 0 {
			p.i++
		}
		if p.eof() {
			break
		}
		if p.peek() == '#' {
			for !p.eof() && p.peek() != '\n' {
				p.i++
			}
			continue
		}
		c := &sedCmd{}
		var err error
		if c.a1, err = p.addr(); err != nil {
			return nil, err
		}
		if c.a1 != nil && p.peek() == ',' {
			p.i++
			if c.a2, err = p.addr(); err != nil {
				return nil, err
			}
			if c.a2 == nil {
				return nil, fmt.Errorf("-e expression #1, char %d: unexpected `,'", p.i)
			}
		}
		p.skipSpace()
		if p.peek() == '!' {
			c.neg = true
			p.i++
			p.skipSpace()
		}
		if p.eof() {
			return nil, fmt.Errorf("-e expression #1, char %d: missing command", p.i)
		}
		c.name = p.s[p.i]
		p.i++
		switch c.name {
		case 'p', 'd', '=', 'q', 'Q', 'n', 'N', 'D', 'P', 'h', 'H', 'g', 'G', 'x':
		case '{':
			open = append(open, len(cmds))
		case '}':
			if len(open) == 0 {
				return nil, fmt.Errorf("-e expression #1, char %d: unexpected `}'", p.i)
			}
			cmds[open[len(open)-1]].block = len(cmds)
			open = open[:len(open)-1]
		case 'a', 'i', 'c':
			p.skipSpace()
			if p.peek() == '\\' {
				p.i++
				if p.peek() == '\n' {
					p.i++
				}
			}
			j := p.i
			for !p.eof() && p.peek() != '\n' {
				p.i++
			}
			c.text = p.s[j:p.i]
		case 's':
			delim := p.peek()
			if delim == 0 || delim == '\n' || delim == '\\' {
				return nil, fmt.Errorf("-e expression #1, char %d: unterminated `s' command", p.i)
			}
			p.i++
			src, err := p.delimited(delim, true)
			if err != nil {
				return nil, fmt.Errorf("-e expression #1, char %d: unterminated `s' command", p.i)
			}
			if c.repl, err = p.delimited(delim, false); err != nil {
				return nil, fmt.Errorf("-e expression #1, char %d: unterminated `s' command", p.i)
			}
			icase := false
		flags:
			for !p.eof() {
				switch ch := p.peek(); {
				case ch == 'g':
					c.global = true
				case ch == 'p':
					c.print = true
				case ch == 'i' || ch == 'I':
					icase = true
				case ch >= '0' && ch <= '9':
					c.nth = c.nth*10 + int(ch-'0')
				default:
					break flags
				}
				p.i++
			}
			if c.re, err = p.regex(src); err != nil {
				return nil, err
			}
			if icase {
				c.re = regexp.MustCompile("(?i)" + c.re.String())
			}
		case 'y':
			delim := p.peek()
			p.i++
			a, err := p.delimited(delim, false)
			if err != nil {
				return nil, fmt.Errorf("-e expression #1, char %d: unterminated `y' command", p.i)
			}
			b, err := p.delimited(delim, false)
			if err != nil {
				return nil, fmt.Errorf("-e expression #1, char %d: unterminated `y' command", p.i)
			}
			c.from, c.to = []rune(unescapeSed(a)), []rune(unescapeSed(b))
			if len(c.from) != len(c.to) {
				return nil, fmt.Errorf("-e expression #1, char %d: strings for `y' command are different lengths", p.i)
			}
		default:
			return nil, fmt.Errorf("-e expression #1, char %d: unknown command: `%c'", p.i, c.name)
		}
		p.skipSpace()
		if !p.eof() && strings.IndexByte(";\n}#", p.peek()) < 0 {
			return nil, fmt.Errorf("-e expression #1, char %d: extra characters after command", p.i+1)
		}
		cmds = append(cmds, c)
	}
	if len(open) > 0 {
		return nil, fmt.Errorf("-e expression #1, char %d: unmatched `{'", p.i)
	}
	return cmds, nil
}

func unescapeSed(s string) string {
	return strings.NewReplacer(`\n`, "\n", `\t`, "\t", `\\`, `\`).Replace(s)
}

// expand builds an s replacement for one match.
func sedReplace(repl string, src string, m []int) string {
	var b strings.Builder
	for i := 0; i < len(repl); i++ {
		ch := repl[i]
		switch {
		case ch == '&':
			b.WriteString(src[m[0]:m[1]])
		case ch == '\\' && i+1 < len(repl):
			i++
			n := repl[i]
			switch {
			case n >= '0' && n <= '9':
				k := int(n - '0')
				if 2*k+1 < len(m) && m[2*k] >= 0 {
					b.WriteString(src[m[2*k]:m[2*k+1]])
				}
			case n == 'n':
				b.WriteByte('\n')
			case n == 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(n)
			}
		default:
			b.WriteByte(ch)
		}
	}
	return b.String()
}

func (a *sedAddr) match(n int, last bool, line string) bool {
	switch {
	case a.last:
		return last
	case a.re != nil:
		return a.re.MatchString(line)
	}
	return a.line == n
}

// selected reports whether command c applies to line n.
func (c *sedCmd) selected(n int, last bool, line string) bool {
	var on bool
	switch {
	case c.a1 == nil:
		on = true
	case c.a2 == nil:
		on = c.a1.match(n, last, line)
	case c.active:
		on = true
		if c.a2.re == nil && !c.a2.last && c.a2.line <= n {
			c.active = c.a2.line > n
			on = c.a2.line >= n || c.endLine == n
		} else if c.a2.match(n, last, line) {
			c.active = false
		}
	case c.a1.match(n, last, line):
		on = true
		c.active = true
		c.endLine = n
		if c.a2.re == nil && !c.a2.last && c.a2.line <= n {
			c.active = false
		}
	}
	return on != c.neg
}

// sedRun runs the script over the lines of in; quit reports a q.
func sedRun(cmds []*sedCmd, in string, quiet bool, out *strings.Builder, stopped func() bool) {
	lines := splitKeep([]byte(in))
	var hold string
	for n := 0; n < len(lines); n++ {
		if n%4096 == 0 && stopped() {
			return
		}
		raw := lines[n]
		pat := strings.TrimSuffix(raw, "\n")
		nl := strings.HasSuffix(raw, "\n")
		var appendText []string
		deleted, quit := false, false
		for pc := 0; pc < len(cmds); pc++ {
			c := cmds[pc]
			if c.name == '}' {
				continue
			}
			if !c.selected(n+1, n == len(lines)-1, pat) {
				if c.name == '{' {
					pc = c.block
				}
				continue
			}
			switch c.name {
			case 'p':
				out.WriteString(pat + "\n")
			case 'P':
				first, _, _ := strings.Cut(pat, "\n")
				out.WriteString(first + "\n")
			case 'd', 'D':
				deleted = true
			case '=':
				fmt.Fprintf(out, "%d\n", n+1)
			case 'q':
				quit = true
			case 'Q':
				quit, deleted = true, true
			case 'a':
				appendText = append(appendText, c.text)
			case 'i':
				out.WriteString(c.text + "\n")
			case 'c':
				if c.a2 == nil || !c.active {
					out.WriteString(c.text + "\n")
				}
				deleted = true
			case 'h':
				hold = pat
			case 'H':
				hold += "\n" + pat
			case 'g':
				pat = hold
			case 'G':
				pat += "\n" + hold
			case 'x':
				pat, hold = hold, pat
			case 'n':
				if !quiet {
					out.WriteString(pat + "\n")
				}
				if n+1 >= len(lines) {
					quit = true
					deleted = quiet
					break
				}
				n++
				pat = strings.TrimSuffix(lines[n], "\n")
				nl = strings.HasSuffix(lines[n], "\n")
			case 'N':
				if n+1 >= len(lines) {
					quit = true
					break
				}
				n++
				pat += "\n" + strings.TrimSuffix(lines[n], "\n")
				nl = strings.HasSuffix(lines[n], "\n")
			case 'y':
				r := []rune(pat)
				for i, ch := range r {
					for k, f := range c.from {
						if ch == f {
							r[i] = c.to[k]
							break
						}
					}
				}
				pat = string(r)
			case 's':
				var did bool
				pat, did = sedSubst(c, pat)
				if did && c.print {
					out.WriteString(pat + "\n")
				}
			}
			if deleted || quit {
				break
			}
		}
		if !deleted && !quiet {
			out.WriteString(pat)
			if nl {
				out.WriteString("\n")
			}
		}
		for _, t := range appendText {
			out.WriteString(t + "\n")
		}
		if quit {
			return
		}
	}
}

// sedSubst runs an s command on pat.
func sedSubst(c *sedCmd, pat string) (string, bool) {
	ms := c.re.FindAllStringSubmatchIndex(pat, -1)
	if len(ms) == 0 {
		return pat, false
	}
	var b strings.Builder
	last, did := 0, false
	for k, m := range ms {
		idx := k + 1
		if c.nth > 0 && idx < c.nth {
			continue
		}
		if (c.nth > 0 && idx > c.nth || c.nth == 0 && idx > 1) && !c.global {
			break
		}
		b.WriteString(pat[last:m[0]])
		b.WriteString(sedReplace(c.repl, pat, m))
		last, did = m[1], true
	}
	b.WriteString(pat[last:])
	return b.String(), did
}

func cmdSed(c *cmd, args []string) int {
	// -iSUFFIX (and --in-place=SUFFIX) keep a copy of each file first.
	suffix := ""
	var rest []string
	for i, a := range args {
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		if v, ok := strings.CutPrefix(a, "--in-place="); ok {
			suffix, a = v, "-i"
		} else if len(a) > 2 && a[0] == '-' && a[1] != '-' && strings.IndexByte(a, 'i') > 0 {
			j := strings.IndexByte(a, 'i')
			if strings.Trim(a[1:j], "nErsuz") == "" && j+1 < len(a) {
				suffix, a = a[j+1:], a[:j+1]
			}
		}
		rest = append(rest, a)
	}
	args = rest
	f, err := parseFlags(args, "niErsuz", "ef", "quiet:n", "silent:n", "in-place:i", "regexp-extended:E", "expression=:e", "separate:s")
	if err != nil {
		return c.usage(err)
	}
	scripts := f.vals["e"]
	files := f.args
	if len(scripts) == 0 {
		if len(files) == 0 {
			c.errf("no script specified")
			return 1
		}
		scripts, files = files[:1], files[1:]
	}
	cmds, err := parseSed(strings.Join(scripts, "\n"), f.has("E") || f.has("r"))
	if err != nil {
		c.errf("%v", err)
		return 1
	}
	quiet := f.has("n")
	if f.has("i") {
		if len(files) == 0 {
			c.errf("no input files")
			return 1
		}
		st := 0
		for _, name := range files {
			for _, k := range cmds {
				k.active = false
			}
			b, err := c.open(name)
			if err != nil {
				c.errf("can't read %s: %v", name, errText(err))
				st = 2
				continue
			}
			var out strings.Builder
			sedRun(cmds, string(b), quiet, &out, c.stopped)
			if suffix != "" {
				backup := strings.ReplaceAll(suffix, "*", path.Base(name))
				if !strings.Contains(suffix, "*") {
					backup = name + suffix
				} else if strings.Contains(name, "/") {
					backup = path.Dir(name) + "/" + backup
				}
				if err := c.e.v.writeFile(c.path(backup), b); err != nil {
					c.errf("couldn't open file %s: %v", backup, errText(err))
					return 4
				}
			}
			if err := c.e.v.writeFile(c.path(name), []byte(out.String())); err != nil {
				if isLimit(err) {
					return 1
				}
				c.errf("couldn't edit %s: %v", name, errText(err))
				st = 4
			}
		}
		return st
	}
	var all strings.Builder
	st := c.inputs(files, func(name string, b []byte) bool {
		all.Write(b)
		return true
	})
	if st != 0 {
		st = 2
	}
	var out strings.Builder
	sedRun(cmds, all.String(), quiet, &out, c.stopped)
	c.out.WriteString(out.String())
	return st
}
