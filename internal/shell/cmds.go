package shell

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// cmd is one command's run: its arguments' context and its streams.
type cmd struct {
	ctx    context.Context
	e      *environment
	hc     interp.HandlerContext
	name   string
	dir    string
	stdin  io.Reader
	out    *bufio.Writer
	stderr io.Writer
}

type command func(c *cmd, args []string) int

// commands are the commands a script can run, besides the interpreter's
// builtins (echo, printf, test, [, true, false, cd, pwd, read, ...).
var commands map[string]command

func init() {
	commands = map[string]command{
		"cat": cmdCat, "head": cmdHead, "tail": cmdTail, "wc": cmdWc,
		"grep": cmdGrep, "egrep": cmdEgrep, "fgrep": cmdFgrep,
		"find": cmdFind, "ls": cmdLs, "sort": cmdSort, "uniq": cmdUniq,
		"cut": cmdCut, "tr": cmdTr, "sed": cmdSed, "awk": cmdAwk, "jq": cmdJq,
		"diff": cmdDiff, "mkdir": cmdMkdir, "rm": cmdRm, "mv": cmdMv, "cp": cmdCp,
		"touch": cmdTouch, "tee": cmdTee, "xargs": cmdXargs,
		"basename": cmdBasename, "dirname": cmdDirname, "seq": cmdSeq,
		"date": cmdDate, "yes": cmdYes, "tac": cmdTac, "rev": cmdRev,
		"sh": cmdSh, "bash": cmdSh,
		"satchel-type": cmdType, "satchel-hash": cmdHash, "satchel-command": cmdCommandV,
	}
}

// Commands lists the commands a script can run that are not builtins of
// the interpreter, sorted.
func Commands() []string {
	var out []string
	for name := range commands {
		if !strings.HasPrefix(name, "satchel-") {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// NotFound is the message of a command that does not exist.
func NotFound(name string) string {
	return "sh: " + name + ": command not found (satchel sh has only its built-in commands; see satchel sh --help)"
}

func (e *environment) exec(ctx context.Context, args []string) error {
	hc := interp.HandlerCtx(ctx)
	f, ok := commands[args[0]]
	if !ok {
		fmt.Fprintln(hc.Stderr, NotFound(args[0]))
		return interp.NewExitStatus(127)
	}
	name := strings.TrimPrefix(args[0], "satchel-")
	c := &cmd{ctx: ctx, e: e, hc: hc, name: name, dir: hc.Dir, stdin: hc.Stdin, out: bufio.NewWriterSize(hc.Stdout, 32<<10), stderr: hc.Stderr}
	if c.stdin == nil {
		c.stdin = strings.NewReader("")
	}
	st := c.safe(f, args[1:])
	if err := c.out.Flush(); err != nil && st == 0 && !isPipeErr(err) {
		st = 1
	}
	if cause := context.Cause(ctx); cause != nil {
		return cause
	}
	if st != 0 {
		return interp.NewExitStatus(uint8(st))
	}
	return nil
}

// safe runs f, turning a panic into a failure of the command alone.
func (c *cmd) safe(f command, args []string) (st int) {
	defer func() {
		if r := recover(); r != nil {
			c.errf("internal error: %v", r)
			st = 2
		}
	}()
	return f(c, args)
}

func isPipeErr(err error) bool {
	return err != nil && strings.Contains(err.Error(), "broken pipe")
}

// errf writes "name: message" to stderr.
func (c *cmd) errf(format string, args ...any) {
	c.out.Flush() // what was printed before the message comes first
	fmt.Fprintf(c.stderr, c.name+": "+format+"\n", args...)
}

// usage reports a bad invocation, exit status 2 (1 for some commands).
func (c *cmd) usage(err error) int {
	c.errf("%v", err)
	return 2
}

// errText spells an error as GNU's tools do.
func errText(err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errors.New("No such file or directory")
	case errors.Is(err, errIsDir):
		return errIsDir
	case errors.Is(err, errNotDir):
		return errNotDir
	}
	return err
}

// stopped reports whether the run was stopped.
func (c *cmd) stopped() bool { return c.ctx.Err() != nil }

// path is the workspace path of shell path p.
func (c *cmd) path(p string) string { return rel(c.dir, p) }

// readAll reads r whole, within the memory limit. It reads in blocks (64
// KiB, growing to 1 MiB) and joins them once, so that it holds at most twice what it read
// (a slice grown by doubling would hold three times as much at its peak).
func (c *cmd) readAll(r io.Reader) ([]byte, error) {
	lim := c.e.lim.memory
	var blocks [][]byte
	total, size := int64(0), 64<<10
	for {
		b := make([]byte, size)
		size = min(2*size, 1<<20)
		n, err := io.ReadFull(stopReader{c, r}, b)
		if n > 0 {
			blocks = append(blocks, b[:n])
			total += int64(n)
		}
		if total > lim {
			return nil, c.e.lim.fail(&LimitError{Msg: fmt.Sprintf("sh: %s: its input is over the memory limit (%s): the run was stopped", c.name, sizeText(lim))})
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if len(blocks) == 1 {
		return blocks[0], nil
	}
	out := make([]byte, 0, total)
	for _, b := range blocks {
		out = append(out, b...)
	}
	return out, nil
}

// open returns the content of operand p ("-" is stdin).
func (c *cmd) open(p string) ([]byte, error) {
	if p == "-" {
		return c.readAll(c.stdin)
	}
	if p == "/dev/null" {
		return nil, nil
	}
	if p == "/dev/stdin" {
		return c.readAll(c.stdin)
	}
	return c.e.v.readFile(c.path(p))
}

// inputs calls fn with each operand's content (stdin when none); a file
// that cannot be read is reported and makes the status 1.
func (c *cmd) inputs(files []string, fn func(name string, data []byte) bool) int {
	if len(files) == 0 {
		files = []string{"-"}
	}
	st := 0
	for _, f := range files {
		if c.stopped() {
			return 1
		}
		b, err := c.open(f)
		if err != nil {
			if isLimit(err) {
				return 1
			}
			c.errf("%s: %v", f, errText(err))
			st = 1
			continue
		}
		if !fn(f, b) {
			break
		}
	}
	return st
}

// splitLines splits b into lines, each without its "\n"; a last line
// without one is a line too.
func splitLines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	s := bytesString(b)
	s = strings.TrimSuffix(s, "\n")
	return strings.Split(s, "\n")
}

// A flagSet is GNU-style options: short ones grouped (-rn), a value
// attached or next (-n5, -n 5), long ones with = or next, operands
// anywhere until "--".
type flagSet struct {
	bools map[string]bool
	vals  map[string][]string
	args  []string
}

func (f *flagSet) has(name string) bool { return f.bools[name] }
func (f *flagSet) val(name string) (string, bool) {
	v := f.vals[name]
	if len(v) == 0 {
		return "", false
	}
	return v[len(v)-1], true
}

// parseFlags parses args: boolean short flags in bools, short flags with
// a value in vals, long flags as "name" (bool) or "name=" (value). Long
// flags may have a short alias: "line-number:n".
func parseFlags(args []string, bools, vals string, long ...string) (*flagSet, error) {
	f := &flagSet{bools: map[string]bool{}, vals: map[string][]string{}}
	longs := map[string]string{} // name -> alias or name, with "=" kept
	for _, l := range long {
		name, alias, _ := strings.Cut(l, ":")
		longs[strings.TrimSuffix(name, "=")] = alias + map[bool]string{true: "=", false: ""}[strings.HasSuffix(name, "=")]
		if alias == "" {
			longs[strings.TrimSuffix(name, "=")] = strings.TrimSuffix(name, "=") + map[bool]string{true: "=", false: ""}[strings.HasSuffix(name, "=")]
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			f.args = append(f.args, args[i+1:]...)
			return f, nil
		case strings.HasPrefix(a, "--"):
			name, val, hasVal := strings.Cut(a[2:], "=")
			target, ok := longs[name]
			if !ok {
				return nil, fmt.Errorf("unrecognized option '%s'", a)
			}
			if key, isVal := strings.CutSuffix(target, "="); isVal {
				if !hasVal {
					if i+1 >= len(args) {
						return nil, fmt.Errorf("option '--%s' requires an argument", name)
					}
					i++
					val = args[i]
				}
				f.vals[key] = append(f.vals[key], val)
			} else {
				if hasVal {
					return nil, fmt.Errorf("option '--%s' doesn't allow an argument", name)
				}
				f.bools[target] = true
			}
		case len(a) > 1 && a[0] == '-':
			for j := 1; j < len(a); j++ {
				ch := string(a[j])
				switch {
				case strings.Contains(vals, ch):
					val := a[j+1:]
					if val == "" {
						if i+1 >= len(args) {
							return nil, fmt.Errorf("option requires an argument -- '%s'", ch)
						}
						i++
						val = args[i]
					}
					f.vals[ch] = append(f.vals[ch], val)
					j = len(a)
				case strings.Contains(bools, ch):
					f.bools[ch] = true
				default:
					return nil, fmt.Errorf("invalid option -- '%s'", ch)
				}
			}
		default:
			f.args = append(f.args, a)
		}
	}
	return f, nil
}

func cmdCat(c *cmd, args []string) int {
	f, err := parseFlags(args, "nAuv", "")
	if err != nil {
		return c.usage(err)
	}
	out, _ := c.hc.Stdout.(*wfile)
	n := 0
	files := f.args
	if len(files) == 0 {
		files = []string{"-"}
	}
	st := 0
	for _, name := range files {
		if out != nil && name != "-" && c.path(name) == out.path {
			if b, err := c.open(name); err == nil && len(b) > 0 {
				c.errf("%s: input file is output file", name)
				st = 1
				continue
			}
		}
		if name == "-" && !f.has("n") {
			if _, err := io.Copy(c.out, stopReader{c, c.stdin}); err != nil && !c.stopped() && !isPipeErr(err) {
				c.errf("-: %v", err)
				st = 1
			}
			continue
		}
		if s := c.inputs([]string{name}, func(_ string, b []byte) bool {
			if !f.has("n") {
				_, err := c.out.Write(b)
				return err == nil
			}
			for _, l := range splitLines(b) {
				n++
				fmt.Fprintf(c.out, "%6d\t%s\n", n, l)
			}
			return true
		}); s != 0 {
			st = s
		}
	}
	return st
}

// numArg rewrites a leading -N (head -5) as -n N.
func numArg(args []string) []string {
	if len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-' {
		if _, err := strconv.Atoi(args[0][1:]); err == nil {
			return append([]string{"-n", args[0][1:]}, args[1:]...)
		}
	}
	return args
}

func headers(c *cmd, files []string, i int, name string, quiet bool) {
	if len(files) > 1 && !quiet {
		if i > 0 {
			c.out.WriteString("\n")
		}
		if name == "-" {
			name = "standard input"
		}
		fmt.Fprintf(c.out, "==> %s <==\n", name)
	}
}

func cmdHead(c *cmd, args []string) int {
	f, err := parseFlags(numArg(args), "qv", "nc", "lines=:n", "bytes=:c", "quiet:q")
	if err != nil {
		return c.usage(err)
	}
	n, bytesMode := int64(10), false
	var s string
	if v, ok := f.val("c"); ok {
		s, bytesMode = v, true
	} else if v, ok := f.val("n"); ok {
		s = v
	}
	if s != "" {
		if n, err = strconv.ParseInt(s, 10, 64); err != nil {
			c.errf("invalid number of %s: '%s'", map[bool]string{true: "bytes", false: "lines"}[bytesMode], s)
			return 1
		}
	}
	files := f.args
	if len(files) == 0 {
		files = []string{"-"}
	}
	st := 0
	for i, name := range files {
		if name == "-" && !bytesMode && n >= 0 {
			headers(c, files, i, name, f.has("q"))
			// read stdin line by line, so that `yes | head -1` ends
			br := bufio.NewReader(c.stdin)
			for k := int64(0); k < n; k++ {
				line, err := br.ReadString('\n')
				c.out.WriteString(line)
				if err != nil {
					break
				}
			}
			continue
		}
		if s := c.inputs([]string{name}, func(_ string, b []byte) bool {
			headers(c, files, i, name, f.has("q"))
			if bytesMode {
				k := n
				if k < 0 {
					k = max(int64(len(b))+k, 0)
				}
				c.out.Write(b[:min(k, int64(len(b)))])
				return true
			}
			lines := splitKeep(b)
			k := n
			if k < 0 {
				k = max(int64(len(lines))+k, 0)
			}
			for _, l := range lines[:min(k, int64(len(lines)))] {
				c.out.WriteString(l)
			}
			return true
		}); s != 0 {
			st = s
		}
	}
	return st
}

// splitKeep splits b into lines keeping their "\n".
func splitKeep(b []byte) []string {
	var out []string
	s := bytesString(b)
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

func cmdTail(c *cmd, args []string) int {
	f, err := parseFlags(numArg(args), "qv", "nc", "lines=:n", "bytes=:c")
	if err != nil {
		return c.usage(err)
	}
	s, bytesMode := "10", false
	if v, ok := f.val("c"); ok {
		s, bytesMode = v, true
	} else if v, ok := f.val("n"); ok {
		s = v
	}
	from := strings.HasPrefix(s, "+")
	n, err := strconv.ParseInt(strings.TrimPrefix(strings.TrimPrefix(s, "+"), "-"), 10, 64)
	if err != nil {
		c.errf("invalid number of %s: '%s'", map[bool]string{true: "bytes", false: "lines"}[bytesMode], s)
		return 1
	}
	files := f.args
	if len(files) == 0 {
		files = []string{"-"}
	}
	st := 0
	for i, name := range files {
		if s := c.inputs([]string{name}, func(_ string, b []byte) bool {
			headers(c, files, i, name, f.has("q"))
			if bytesMode {
				k := int64(len(b)) - n
				if from {
					k = n - 1
				}
				k = min(max(k, 0), int64(len(b)))
				c.out.Write(b[k:])
				return true
			}
			lines := splitKeep(b)
			k := int64(len(lines)) - n
			if from {
				k = n - 1
			}
			k = min(max(k, 0), int64(len(lines)))
			for _, l := range lines[k:] {
				c.out.WriteString(l)
			}
			return true
		}); s != 0 {
			st = s
		}
	}
	return st
}

func cmdWc(c *cmd, args []string) int {
	f, err := parseFlags(args, "lwcm", "", "lines:l", "words:w", "bytes:c", "chars:m")
	if err != nil {
		return c.usage(err)
	}
	show := []bool{f.has("l"), f.has("w"), f.has("m"), f.has("c")}
	if !slices.Contains(show, true) {
		show = []bool{true, true, false, true}
	}
	type row struct {
		n    counts
		name string
	}
	var rows []row
	var total counts
	files := f.args
	stdinOnly := len(files) == 0
	if stdinOnly {
		files = []string{"-"}
	}
	width, minWidth := 1, 1
	var regular int64
	st := 0
	for _, name := range files {
		var r row
		var err error
		if name == "-" {
			minWidth = 7
			r.n, err = countReader(c, c.stdin)
		} else {
			var b []byte
			if b, err = c.open(name); err == nil {
				r.n, err = countReader(c, bytes.NewReader(b))
				r.name = name
				regular += int64(len(b))
			}
		}
		if err != nil {
			if c.stopped() {
				return 1
			}
			c.errf("%s: %v", name, errText(err))
			st = 1
			continue
		}
		for i := range total {
			total[i] += r.n[i]
		}
		rows = append(rows, r)
	}
	for ; regular >= 10; regular /= 10 {
		width++
	}
	width = max(width, minWidth)
	shown := 0
	for _, s := range show {
		if s {
			shown++
		}
	}
	if shown == 1 && len(files) == 1 {
		width = 1
	}
	if len(files) > 1 {
		rows = append(rows, row{n: total, name: "total"})
	}
	for _, r := range rows {
		var parts []string
		for i, s := range show {
			if s {
				parts = append(parts, fmt.Sprintf("%*d", width, r.n[i]))
			}
		}
		if r.name != "" {
			parts = append(parts, r.name)
		}
		c.out.WriteString(strings.Join(parts, " ") + "\n")
	}
	return st
}

func cmdBasename(c *cmd, args []string) int {
	if len(args) == 0 {
		c.errf("missing operand")
		return 1
	}
	b := path.Base(args[0])
	if len(args) > 1 && b != args[1] {
		b = strings.TrimSuffix(b, args[1])
	}
	c.out.WriteString(b + "\n")
	return 0
}

func cmdDirname(c *cmd, args []string) int {
	if len(args) == 0 {
		c.errf("missing operand")
		return 1
	}
	for _, a := range args {
		d := path.Dir(strings.TrimRight(a, "/"))
		if strings.TrimRight(a, "/") == "" && a != "" {
			d = "/"
		}
		c.out.WriteString(d + "\n")
	}
	return 0
}

func cmdSeq(c *cmd, args []string) int {
	sep := "\n"
	var nums []string
	for i := 0; i < len(args); i++ {
		switch {
		case args[i] == "-s" && i+1 < len(args):
			sep = args[i+1]
			i++
		case strings.HasPrefix(args[i], "-s"):
			sep = args[i][2:]
		default:
			nums = append(nums, args[i])
		}
	}
	if len(nums) == 0 || len(nums) > 3 {
		c.errf("missing operand")
		return 1
	}
	var v []int64
	for _, s := range nums {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			c.errf("invalid argument: '%s'", s)
			return 1
		}
		v = append(v, n)
	}
	first, step, last := int64(1), int64(1), v[len(v)-1]
	switch len(v) {
	case 2:
		first = v[0]
	case 3:
		first, step = v[0], v[1]
	}
	if step == 0 {
		c.errf("invalid Zero increment value: '0'")
		return 1
	}
	wrote := false
	for i, k := first, 0; (step > 0 && i <= last) || (step < 0 && i >= last); i += step {
		if wrote {
			c.out.WriteString(sep)
		}
		if _, err := c.out.WriteString(strconv.FormatInt(i, 10)); err != nil {
			return 1 // the reader went away (seq ... | head)
		}
		wrote = true
		if k++; k%4096 == 0 && c.stopped() {
			return 1
		}
	}
	if wrote {
		c.out.WriteString("\n")
	}
	return 0
}

func cmdYes(c *cmd, args []string) int {
	s := "y"
	if len(args) > 0 {
		s = strings.Join(args, " ")
	}
	line := []byte(s + "\n")
	for !c.stopped() {
		if _, err := c.out.Write(line); err != nil {
			return 1
		}
	}
	return 1
}

func cmdTac(c *cmd, args []string) int {
	return c.inputs(args, func(_ string, b []byte) bool {
		lines := splitKeep(b)
		for i := len(lines) - 1; i >= 0; i-- {
			c.out.WriteString(lines[i])
		}
		return true
	})
}

func cmdRev(c *cmd, args []string) int {
	return c.inputs(args, func(_ string, b []byte) bool {
		for _, l := range splitLines(b) {
			r := []rune(l)
			slices.Reverse(r)
			c.out.WriteString(string(r) + "\n")
		}
		return true
	})
}

func cmdDate(c *cmd, args []string) int {
	t := c.e.now.UTC()
	layout := "+%a %b %e %H:%M:%S %Z %Y"
	for _, a := range args {
		switch {
		case strings.HasPrefix(a, "+"):
			layout = a
		case a == "-u" || a == "--utc":
		case a == "-I" || a == "--iso-8601":
			layout = "+%Y-%m-%d"
		default:
			c.errf("invalid argument '%s' (satchel's date shows the commit clock; only -u, -I and +FORMAT)", a)
			return 1
		}
	}
	c.out.WriteString(strftime(layout[1:], t) + "\n")
	return 0
}

func cmdType(c *cmd, args []string) int {
	st := 0
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			continue
		}
		switch {
		case syntax.IsKeyword(a):
			fmt.Fprintf(c.out, "%s is a shell keyword\n", a)
		case interp.IsBuiltin(a):
			fmt.Fprintf(c.out, "%s is a shell builtin\n", a)
		case commands[a] != nil && !strings.HasPrefix(a, "satchel-"):
			fmt.Fprintf(c.out, "%s is /bin/%s\n", a, a)
		default:
			c.errf("%s: not found", a)
			st = 1
		}
	}
	return st
}

func cmdHash(c *cmd, args []string) int { return 0 }

func cmdCommandV(c *cmd, args []string) int {
	st := 0
	for _, a := range args[1:] {
		switch {
		case interp.IsBuiltin(a) || syntax.IsKeyword(a):
			c.out.WriteString(a + "\n")
		case commands[a] != nil && !strings.HasPrefix(a, "satchel-"):
			c.out.WriteString("/bin/" + a + "\n")
		default:
			st = 1
		}
	}
	return st
}

// stopReader ends a read when the run is stopped.
type stopReader struct {
	c *cmd
	r io.Reader
}

func (s stopReader) Read(b []byte) (int, error) {
	if s.c.stopped() {
		return 0, io.EOF
	}
	return s.r.Read(b)
}

// counts are wc's: lines, words, characters, bytes.
type counts [4]int64

// countReader counts r as wc does, streaming.
func countReader(c *cmd, r io.Reader) (counts, error) {
	var n counts
	br := bufio.NewReaderSize(stopReader{c, r}, 64<<10)
	inWord := false
	for {
		b, err := br.ReadSlice('\n')
		n[3] += int64(len(b))
		n[2] += int64(utf8.RuneCount(b))
		for _, ch := range b {
			switch ch {
			case '\n':
				n[0]++
				inWord = false
			case ' ', '\t', '\r', '\v', '\f':
				inWord = false
			default:
				if !inWord {
					n[1]++
				}
				inWord = true
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// cmdSh runs a script in a new shell over the same files, bounds and
// commands: sh -c SCRIPT [NAME [ARGS...]], sh FILE [ARGS...], or the
// script on standard input. It gets the exported variables.
func cmdSh(c *cmd, args []string) int {
	for len(args) > 0 && (args[0] == "-e" || args[0] == "-u" || args[0] == "-x" || args[0] == "-o" && len(args) > 1 && args[1] == "pipefail") {
		if args[0] == "-o" {
			args = args[1:]
		}
		args = args[1:] // options the nested shell takes as given: set them in the script
	}
	var script string
	var params []string
	switch {
	case len(args) >= 2 && args[0] == "-c":
		script = args[1]
		if len(args) > 3 {
			params = args[3:]
		}
	case len(args) == 1 && args[0] == "-c":
		c.errf("-c: option requires an argument")
		return 2
	case len(args) >= 1 && !strings.HasPrefix(args[0], "-"):
		b, err := c.open(args[0])
		if err != nil {
			c.errf("%s: %v", args[0], errText(err))
			return 127
		}
		script, params = string(b), args[1:]
	case len(args) == 0 || args[0] == "-s":
		b, err := c.readAll(c.stdin)
		if err != nil {
			return 2
		}
		script = string(b)
	default:
		c.errf("%s: invalid option", args[0])
		return 2
	}
	file, err := Parse(script)
	if err != nil {
		fmt.Fprintln(c.stderr, err)
		return 2
	}
	file.Name = c.name // $0
	if len(args) >= 3 && args[0] == "-c" {
		file.Name = args[2]
	} else if len(args) >= 1 && args[0] != "-c" && args[0] != "-s" {
		file.Name = args[0]
	}
	var exported []string
	c.hc.Env.Each(func(name string, vr expand.Variable) bool {
		if vr.Exported && vr.IsSet() {
			exported = append(exported, name+"="+vr.String())
		}
		return true
	})
	c.out.Flush()
	r, err := interp.New(append(c.e.runnerOptions(expand.ListEnviron(append(append([]string{}, baseEnv...), exported...)...), c.stdin, c.hc.Stdout, c.stderr),
		interp.Params(append([]string{"--"}, params...)...))...)
	if err != nil {
		c.errf("%v", err)
		return 2
	}
	if c.dir != "/" {
		cd, _ := syntax.NewParser().Parse(strings.NewReader("cd "+syntaxQuote(c.dir)), "")
		if err := r.Run(c.ctx, cd.Stmts[0]); err != nil {
			return 1
		}
	}
	err = r.Run(c.ctx, file)
	if cause := context.Cause(c.ctx); cause != nil {
		return 2
	}
	if st, ok := interp.IsExitStatus(err); ok {
		return int(st)
	}
	if err != nil {
		c.errf("%v", err)
		return 2
	}
	return 0
}

// syntaxQuote quotes s for the shell.
func syntaxQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// bytesString is b as a string without a copy: the bytes a command reads
// are never changed afterwards (a file's content in the overlay is only
// ever appended to or replaced, never written over).
func bytesString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
