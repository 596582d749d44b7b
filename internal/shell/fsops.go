package shell

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"mvdan.cc/sh/v3/interp"

	"github.com/satchel-dev/satchel/internal/udiff"
)

// run runs one command of the table, or a builtin, with c's streams, as
// xargs and find -exec do.
func (c *cmd) run(args []string) int {
	if n := c.e.lim.ran.Add(1); n > c.e.lim.commands {
		c.e.lim.fail(&LimitError{Msg: fmt.Sprintf("sh: the run was stopped after %d commands (the cap on commands run)", c.e.lim.commands)})
		return 255
	}
	if c.stopped() {
		return 255
	}
	if f, ok := commands[args[0]]; ok && !strings.HasPrefix(args[0], "satchel-") {
		c.out.Flush()
		sub := &cmd{ctx: c.ctx, e: c.e, hc: c.hc, name: args[0], dir: c.dir, stdin: strings.NewReader(""), out: c.out, stderr: c.stderr}
		return sub.safe(f, args[1:])
	}
	if interp.IsBuiltin(args[0]) {
		c.out.Flush()
		err := c.hc.Builtin(c.ctx, args)
		if err == nil {
			return 0
		}
		var code int
		if _, e := fmt.Sscanf(err.Error(), "builtin exit status %d", &code); e == nil {
			return code
		}
		return 1
	}
	fmt.Fprintln(c.stderr, NotFound(args[0]))
	return 127
}

func cmdFind(c *cmd, args []string) int {
	var roots []string
	i := 0
	for ; i < len(args); i++ {
		if strings.HasPrefix(args[i], "-") || args[i] == "!" || args[i] == "(" {
			break
		}
		roots = append(roots, args[i])
	}
	if len(roots) == 0 {
		roots = []string{"."}
	}
	type test struct {
		kind, arg string
		not       bool
		exec      []string
		plus      bool
	}
	var groups [][]test // OR of ANDs
	cur := []test{}
	maxDepth, minDepth := -1, 0
	not := false
	hasAction := false
	for ; i < len(args); i++ {
		a := args[i]
		need := func() (string, bool) {
			if i+1 >= len(args) {
				c.errf("missing argument to `%s'", a)
				return "", false
			}
			i++
			return args[i], true
		}
		switch a {
		case "!", "-not":
			not = !not
			continue
		case "-o", "-or":
			groups = append(groups, cur)
			cur = []test{}
		case "-a", "-and", "-print":
		case "-name", "-iname", "-path", "-ipath", "-wholename", "-type":
			v, ok := need()
			if !ok {
				return 1
			}
			if a == "-type" && v != "f" && v != "d" {
				c.errf("Unknown argument to -type: %s", v)
				return 1
			}
			cur = append(cur, test{kind: a, arg: v, not: not})
		case "-maxdepth", "-mindepth":
			v, ok := need()
			if !ok {
				return 1
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				c.errf("Expected a positive decimal integer argument to %s, but got `%s'", a, v)
				return 1
			}
			if a == "-maxdepth" {
				maxDepth = n
			} else {
				minDepth = n
			}
		case "-exec":
			j := i + 1
			for j < len(args) && args[j] != ";" && args[j] != "+" {
				j++
			}
			if j >= len(args) || j == i+1 {
				c.errf("missing argument to `-exec'")
				return 1
			}
			cur = append(cur, test{kind: a, exec: args[i+1 : j], plus: args[j] == "+"})
			hasAction = true
			i = j
		default:
			c.errf("unknown predicate `%s'", a)
			return 1
		}
		not = false
	}
	groups = append(groups, cur)
	st := 0
	var batch []string
	var batchCmd []string
	matchTest := func(t test, shown, base string, isDir bool) bool {
		ok := true
		switch t.kind {
		case "-name":
			ok, _ = path.Match(t.arg, base)
		case "-iname":
			ok, _ = path.Match(strings.ToLower(t.arg), strings.ToLower(base))
		case "-path", "-wholename":
			ok = globPath(t.arg, shown)
		case "-ipath":
			ok = globPath(strings.ToLower(t.arg), strings.ToLower(shown))
		case "-type":
			ok = (t.arg == "d") == isDir
		case "-exec":
			if t.plus {
				batchCmd = t.exec
				batch = append(batch, shown)
				return true
			}
			var argv []string
			for _, x := range t.exec {
				argv = append(argv, strings.ReplaceAll(x, "{}", shown))
			}
			return c.run(argv) == 0
		}
		return ok != t.not
	}
	for _, op := range roots {
		p := c.path(op)
		if _, err := c.e.v.stat(p); err != nil {
			c.errf("'%s': %v", op, errText(err))
			st = 1
			continue
		}
		depthOf := func(q string) int {
			if q == p {
				return 0
			}
			if p == "." {
				return strings.Count(q, "/") + 1
			}
			return strings.Count(q[len(p):], "/")
		}
		err := c.e.v.walk(p, func(q string, isDir bool) error {
			if c.stopped() {
				return c.ctx.Err()
			}
			d := depthOf(q)
			shown := joinOperand(op, p, q)
			base := path.Base(shown)
			if q == p {
				base = path.Base(op)
			}
			if d >= minDepth && (maxDepth < 0 || d <= maxDepth) {
				for _, g := range groups {
					all := true
					for _, t := range g {
						if !matchTest(t, shown, base, isDir) {
							all = false
							break
						}
					}
					if all {
						if !hasAction {
							c.out.WriteString(shown + "\n")
						}
						break
					}
				}
			}
			if isDir && maxDepth >= 0 && d >= maxDepth {
				return errSkipDir
			}
			return nil
		})
		if err != nil && !errors.Is(err, fs.SkipDir) {
			return 1
		}
	}
	if len(batch) > 0 {
		var argv []string
		for _, x := range batchCmd {
			if x == "{}" {
				argv = append(argv, batch...)
			} else {
				argv = append(argv, x)
			}
		}
		if c.run(argv) != 0 {
			st = 1
		}
	}
	return st
}

// globPath matches a find -path pattern, where * also matches "/".
func globPath(pat, name string) bool {
	re := "^"
	for i := 0; i < len(pat); i++ {
		switch ch := pat[i]; ch {
		case '*':
			re += ".*"
		case '?':
			re += "."
		case '[':
			j := strings.IndexByte(pat[i:], ']')
			if j < 0 {
				re += `\[`
				continue
			}
			re += pat[i : i+j+1]
			i += j
		default:
			re += regexpQuote(string(ch))
		}
	}
	r, err := compileRE(re+"$", true, false, false, false, false)
	return err == nil && r.MatchString(name)
}

func regexpQuote(s string) string {
	if strings.ContainsAny(s, `\.+*?()|[]{}^$`) {
		return `\` + s
	}
	return s
}

func cmdLs(c *cmd, args []string) int {
	f, err := parseFlags(args, "laA1RdFhrtS", "", "all:a", "almost-all:A", "recursive:R", "directory:d", "reverse:r")
	if err != nil {
		return c.usage(err)
	}
	ops := f.args
	if len(ops) == 0 {
		ops = []string{"."}
	}
	st := 0
	var files, dirs []string
	for _, op := range ops {
		fi, err := c.e.v.stat(c.path(op))
		if err != nil {
			c.errf("cannot access '%s': %v", op, errText(err))
			st = 2
			continue
		}
		if fi.IsDir() && !f.has("d") {
			dirs = append(dirs, op)
		} else {
			files = append(files, op)
		}
	}
	order := func(names []string, info func(string) fs.FileInfo) {
		sortStrings(names)
		switch {
		case f.has("t"):
			slices.SortStableFunc(names, func(a, b string) int { return info(b).ModTime().Compare(info(a).ModTime()) })
		case f.has("S"):
			slices.SortStableFunc(names, func(a, b string) int { return cmp.Compare(info(b).Size(), info(a).Size()) })
		}
		if f.has("r") {
			slices.Reverse(names)
		}
	}
	statOf := func(op string) fs.FileInfo {
		fi, err := c.e.v.stat(c.path(op))
		if err != nil {
			return dirInfo{name: op}
		}
		return fi
	}
	order(files, statOf)
	order(dirs, statOf)
	line := func(name string, fi fs.FileInfo) {
		if f.has("l") {
			mode, links := "-rw-r--r--", 1
			if fi.IsDir() {
				mode, links = "drwxr-xr-x", 2
			}
			fmt.Fprintf(c.out, "%s %d satchel satchel %d %s %s\n", mode, links, fi.Size(), fi.ModTime().UTC().Format("Jan _2 15:04"), name)
			return
		}
		if f.has("F") && fi.IsDir() {
			name += "/"
		}
		c.out.WriteString(name + "\n")
	}
	for _, op := range files {
		fi, _ := c.e.v.stat(c.path(op))
		line(op, fi)
	}
	headed := len(ops) > 1 || f.has("R")
	first := len(files) == 0
	var list func(op string)
	list = func(op string) {
		p := c.path(op)
		ents, err := c.e.v.readDir(p)
		if err != nil {
			return
		}
		if !first {
			c.out.WriteString("\n")
		}
		first = false
		if headed {
			c.out.WriteString(op + ":\n")
		}
		if f.has("l") {
			fmt.Fprintf(c.out, "total %d\n", len(ents))
		}
		if f.has("a") {
			line(".", dirInfo{name: "."})
			line("..", dirInfo{name: ".."})
		}
		var subs []string
		infos := map[string]fs.FileInfo{}
		names := make([]string, 0, len(ents))
		for _, e := range ents {
			fi, _ := e.Info()
			infos[e.Name()] = fi
			names = append(names, e.Name())
		}
		order(names, func(n string) fs.FileInfo { return infos[n] })
		for _, name := range names {
			e := fs.FileInfoToDirEntry(infos[name])
			if strings.HasPrefix(e.Name(), ".") && !f.has("a") && !f.has("A") {
				continue
			}
			line(e.Name(), infos[name])
			if e.IsDir() {
				subs = append(subs, e.Name())
			}
		}
		if f.has("R") {
			for _, s := range subs {
				list(strings.TrimSuffix(op, "/") + "/" + s)
			}
		}
	}
	for _, op := range dirs {
		list(op)
	}
	return st
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func cmdMkdir(c *cmd, args []string) int {
	f, err := parseFlags(args, "pv", "m", "parents:p")
	if err != nil {
		return c.usage(err)
	}
	if len(f.args) == 0 {
		c.errf("missing operand")
		return 1
	}
	st := 0
	for _, op := range f.args {
		p := c.path(op)
		fi, err := c.e.v.stat(p)
		if err == nil {
			if !f.has("p") || !fi.IsDir() {
				c.errf("cannot create directory '%s': File exists", op)
				st = 1
			}
			continue
		}
		if !f.has("p") && !c.e.v.isDir(path.Dir(p)) {
			c.errf("cannot create directory '%s': No such file or directory", op)
			st = 1
			continue
		}
		if err := c.e.v.mkdir(p); err != nil {
			c.errf("cannot create directory '%s': %v", op, errText(err))
			st = 1
		}
	}
	return st
}

// removeTree deletes workspace path p: a file, or a directory and all
// below it.
func (c *cmd) removeTree(p string) error {
	var files []string
	if err := c.e.v.walk(p, func(q string, isDir bool) error {
		if !isDir {
			files = append(files, q)
		}
		return nil
	}); err != nil {
		return err
	}
	for _, q := range files {
		if err := c.e.v.remove(q); err != nil {
			return err
		}
	}
	c.e.v.mu.Lock()
	for d := range c.e.v.dirs {
		if d == p || strings.HasPrefix(d, p+"/") {
			delete(c.e.v.dirs, d)
		}
	}
	c.e.v.mu.Unlock()
	return nil
}

func cmdRm(c *cmd, args []string) int {
	f, err := parseFlags(args, "rRfvd", "", "recursive:r", "force:f")
	if err != nil {
		return c.usage(err)
	}
	if len(f.args) == 0 && !f.has("f") {
		c.errf("missing operand")
		return 1
	}
	st := 0
	for _, op := range f.args {
		p := c.path(op)
		fi, err := c.e.v.stat(p)
		if err != nil {
			if !f.has("f") {
				c.errf("cannot remove '%s': No such file or directory", op)
				st = 1
			}
			continue
		}
		if p == "." {
			c.errf("refusing to remove '.' or '..' directory: skipping '%s'", op)
			st = 1
			continue
		}
		if fi.IsDir() && !f.has("r") && !f.has("R") {
			c.errf("cannot remove '%s': Is a directory", op)
			st = 1
			continue
		}
		if err := c.removeTree(p); err != nil {
			if isLimit(err) {
				return 1
			}
			c.errf("cannot remove '%s': %v", op, errText(err))
			st = 1
		}
	}
	return st
}

// copyTree copies workspace path from to to (a file, or a directory and
// all below it); move removes from afterwards.
func (c *cmd) copyTree(from, to string, move bool) error {
	type pair struct{ from, to string }
	var files []pair
	if err := c.e.v.walk(from, func(q string, isDir bool) error {
		if !isDir {
			files = append(files, pair{q, to + q[len(from):]})
		}
		return nil
	}); err != nil {
		return err
	}
	if from != to && strings.HasPrefix(to, from+"/") {
		return fmt.Errorf("cannot %s a directory into itself", map[bool]string{true: "move", false: "copy"}[move])
	}
	for _, p := range files {
		b, err := c.e.v.readFile(p.from)
		if err != nil {
			return err
		}
		if err := c.e.v.writeFile(p.to, b); err != nil {
			return err
		}
	}
	if move {
		if err := c.removeTree(from); err != nil {
			return err
		}
	}
	return nil
}

func cmdMv(c *cmd, args []string) int { return copyOrMove(c, args, true) }
func cmdCp(c *cmd, args []string) int { return copyOrMove(c, args, false) }

func copyOrMove(c *cmd, args []string, move bool) int {
	f, err := parseFlags(args, "rRfivnpa", "", "recursive:r", "force:f")
	if err != nil {
		return c.usage(err)
	}
	if len(f.args) < 2 {
		if len(f.args) == 0 {
			c.errf("missing file operand")
		} else {
			c.errf("missing destination file operand after '%s'", f.args[0])
		}
		return 1
	}
	srcs, dst := f.args[:len(f.args)-1], f.args[len(f.args)-1]
	dp := c.path(dst)
	dstDir := c.e.v.isDir(dp)
	if len(srcs) > 1 && !dstDir {
		c.errf("target '%s': Not a directory", dst)
		return 1
	}
	st := 0
	for _, src := range srcs {
		sp := c.path(src)
		fi, err := c.e.v.stat(sp)
		if err != nil {
			c.errf("cannot stat '%s': No such file or directory", src)
			st = 1
			continue
		}
		if fi.IsDir() && !move && !f.has("r") && !f.has("R") && !f.has("a") {
			c.errf("-r not specified; omitting directory '%s'", src)
			st = 1
			continue
		}
		to := dp
		if dstDir {
			to = path.Join(dp, path.Base(sp))
			if dp == "." {
				to = path.Base(sp)
			}
		}
		if to == sp {
			if move {
				c.errf("'%s' and '%s' are the same file", src, dst)
			} else {
				c.errf("'%s' and '%s' are the same file", src, dst)
			}
			st = 1
			continue
		}
		if fi.IsDir() && !dstDir && c.e.v.isDir(path.Dir(to)) == false && path.Dir(to) != "." {
			c.errf("cannot create directory '%s': No such file or directory", dst)
			st = 1
			continue
		}
		if err := c.copyTree(sp, to, move); err != nil {
			if isLimit(err) {
				return 1
			}
			c.errf("cannot %s '%s' to '%s': %v", map[bool]string{true: "move", false: "copy"}[move], src, dst, errText(err))
			st = 1
		}
		if fi.IsDir() && move {
			c.e.v.mkdir(to)
		}
	}
	return st
}

func cmdTouch(c *cmd, args []string) int {
	f, err := parseFlags(args, "cam", "dt", "no-create:c")
	if err != nil {
		return c.usage(err)
	}
	st := 0
	for _, op := range f.args {
		p := c.path(op)
		if _, err := c.e.v.stat(p); err == nil || f.has("c") {
			continue
		}
		if err := c.e.v.writeFile(p, nil); err != nil {
			if isLimit(err) {
				return 1
			}
			c.errf("cannot touch '%s': %v", op, errText(err))
			st = 1
		}
	}
	return st
}

func cmdTee(c *cmd, args []string) int {
	f, err := parseFlags(args, "ai", "", "append:a")
	if err != nil {
		return c.usage(err)
	}
	var ws []io.Writer
	st := 0
	for _, op := range f.args {
		w, err := c.e.v.create(c.path(op), f.has("a"))
		if err != nil {
			if isLimit(err) {
				return 1
			}
			c.errf("%s: %v", op, errText(err))
			st = 1
			continue
		}
		ws = append(ws, w)
	}
	buf := make([]byte, 32<<10)
	for !c.stopped() {
		n, err := c.stdin.Read(buf)
		if n > 0 {
			c.out.Write(buf[:n])
			for _, w := range ws {
				if _, err := w.Write(buf[:n]); err != nil {
					return 1
				}
			}
		}
		if err != nil {
			break
		}
	}
	return st
}

// xargsWords splits xargs input into words: blanks separate, quotes and
// backslashes escape.
func xargsWords(s string) ([]string, error) {
	var out []string
	var b strings.Builder
	in := false
	var q rune
	for i, r := 0, []rune(s); i < len(r); i++ {
		ch := r[i]
		switch {
		case q != 0:
			if ch == q {
				q = 0
			} else {
				b.WriteRune(ch)
			}
		case ch == '\'' || ch == '"':
			q, in = ch, true
		case ch == '\\' && i+1 < len(r):
			i++
			b.WriteRune(r[i])
			in = true
		case unicode.IsSpace(ch):
			if in {
				out = append(out, b.String())
				b.Reset()
				in = false
			}
		default:
			b.WriteRune(ch)
			in = true
		}
	}
	if q != 0 {
		return nil, fmt.Errorf("unmatched %s quote; by default quotes are special to xargs unless you use the -0 option", map[rune]string{'\'': "single", '"': "double"}[q])
	}
	if in {
		out = append(out, b.String())
	}
	return out, nil
}

func cmdXargs(c *cmd, args []string) int {
	n, repl, nul, delim := 0, "", false, ""
	i := 0
	for ; i < len(args) && strings.HasPrefix(args[i], "-"); i++ {
		a := args[i]
		switch {
		case a == "-0" || a == "--null":
			nul = true
		case a == "-r" || a == "--no-run-if-empty":
		case a == "-n" || a == "-I" || a == "-d":
			if i+1 >= len(args) {
				c.errf("option requires an argument -- '%s'", a[1:])
				return 1
			}
			i++
			switch a {
			case "-n":
				n, _ = strconv.Atoi(args[i])
			case "-I":
				repl = args[i]
			case "-d":
				delim = args[i]
			}
		case strings.HasPrefix(a, "-n"):
			n, _ = strconv.Atoi(a[2:])
		case strings.HasPrefix(a, "-I"):
			repl = a[2:]
		default:
			c.errf("invalid option -- '%s'", strings.TrimPrefix(a, "-"))
			return 1
		}
	}
	cmdArgs := args[i:]
	if len(cmdArgs) == 0 {
		cmdArgs = []string{"echo"}
	}
	in, err := c.readAll(c.stdin)
	if err != nil {
		return 1
	}
	var words []string
	switch {
	case nul || delim != "":
		d := "\x00"
		if delim != "" {
			d = strings.NewReplacer(`\n`, "\n", `\t`, "\t").Replace(delim)
		}
		words = strings.Split(string(in), d)
		if len(words) > 0 && words[len(words)-1] == "" {
			words = words[:len(words)-1]
		}
	case repl != "":
		for _, l := range splitLines(in) {
			if l = strings.TrimLeft(l, " \t"); l != "" {
				words = append(words, l)
			}
		}
	default:
		if words, err = xargsWords(string(in)); err != nil {
			c.errf("%v", err)
			return 1
		}
	}
	st := 0
	runOne := func(argv []string) bool {
		switch s := c.run(argv); {
		case s == 255:
			return false
		case s == 127 || s == 126:
			st = s
			return false
		case s != 0:
			st = 123
		}
		return !c.stopped()
	}
	switch {
	case repl != "":
		for _, w := range words {
			var argv []string
			for _, a := range cmdArgs {
				argv = append(argv, strings.ReplaceAll(a, repl, w))
			}
			if !runOne(argv) {
				break
			}
		}
	case n > 0:
		for k := 0; k < len(words); k += n {
			if !runOne(append(append([]string{}, cmdArgs...), words[k:min(k+n, len(words))]...)) {
				break
			}
		}
	default:
		if len(words) > 0 || true {
			runOne(append(append([]string{}, cmdArgs...), words...))
		}
	}
	return st
}

func cmdDiff(c *cmd, args []string) int {
	f, err := parseFlags(args, "uqN", "U", "unified", "brief:q")
	if err != nil {
		c.errf("%v", err)
		return 2
	}
	if len(f.args) != 2 {
		c.errf("missing operand after '%s'", strings.Join(args, " "))
		return 2
	}
	ctxLines := 3
	if u, ok := f.val("U"); ok {
		ctxLines, _ = strconv.Atoi(u)
	}
	var texts [2]string
	for i, op := range f.args {
		b, err := c.open(op)
		if err != nil {
			if f.has("N") && errors.Is(err, fs.ErrNotExist) {
				continue
			}
			c.errf("%s: %v", op, errText(err))
			return 2
		}
		texts[i] = string(b)
	}
	if texts[0] == texts[1] {
		return 0
	}
	if f.has("q") {
		fmt.Fprintf(c.out, "Files %s and %s differ\n", f.args[0], f.args[1])
		return 1
	}
	if f.has("u") || f.has("U") {
		c.out.WriteString(udiff.Unified(f.args[0], f.args[1], texts[0], texts[1], ctxLines))
		return 1
	}
	c.out.WriteString(normalDiff(texts[0], texts[1]))
	return 1
}

// normalDiff is diff's default output: "2c2", "< old", "---", "> new".
func normalDiff(a, b string) string {
	al, bl := splitKeep([]byte(a)), splitKeep([]byte(b))
	rng := func(lo, hi int) string { // 1-based lo..hi
		if hi <= lo {
			return strconv.Itoa(lo)
		}
		return strconv.Itoa(lo) + "," + strconv.Itoa(hi)
	}
	var out strings.Builder
	side := func(lines []string, mark string) {
		for _, l := range lines {
			out.WriteString(mark + l)
			if !strings.HasSuffix(l, "\n") {
				out.WriteString("\n\\ No newline at end of file\n")
			}
		}
	}
	for _, bk := range udiff.Blocks(a, b) {
		switch {
		case bk.B0 == bk.B1:
			fmt.Fprintf(&out, "%sd%d\n", rng(bk.A0+1, bk.A1), bk.B0)
			side(al[bk.A0:bk.A1], "< ")
		case bk.A0 == bk.A1:
			fmt.Fprintf(&out, "%da%s\n", bk.A0, rng(bk.B0+1, bk.B1))
			side(bl[bk.B0:bk.B1], "> ")
		default:
			fmt.Fprintf(&out, "%sc%s\n", rng(bk.A0+1, bk.A1), rng(bk.B0+1, bk.B1))
			side(al[bk.A0:bk.A1], "< ")
			out.WriteString("---\n")
			side(bl[bk.B0:bk.B1], "> ")
		}
	}
	return out.String()
}
