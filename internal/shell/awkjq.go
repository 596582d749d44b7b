package shell

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/benhoyt/goawk/interp"
	"github.com/benhoyt/goawk/parser"
	"github.com/itchyny/gojq"
)

// cmdAwk runs goawk with no file, process or environment access of its
// own: the files named are read from the workspace and given to it as one
// input stream; getline from a file, output redirection and system() are
// refused.
func cmdAwk(c *cmd, args []string) int {
	var vars []string
	fs := ""
	prog := ""
	hasProg := false
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			i++
			goto operands
		case a == "-F" || a == "-v" || a == "-f":
			if i+1 >= len(args) {
				c.errf("option requires an argument -- '%s'", a[1:])
				return 2
			}
			i++
			switch a {
			case "-F":
				fs = args[i]
			case "-v":
				vars = append(vars, args[i])
			case "-f":
				b, err := c.open(args[i])
				if err != nil {
					c.errf("can't open file %s: %v", args[i], errText(err))
					return 2
				}
				prog, hasProg = string(b), true
			}
		case strings.HasPrefix(a, "-F") && len(a) > 2:
			fs = a[2:]
		case strings.HasPrefix(a, "-v") && len(a) > 2:
			vars = append(vars, a[2:])
		case strings.HasPrefix(a, "-") && a != "-":
			c.errf("invalid option -- '%s'", a[1:])
			return 2
		default:
			goto operands
		}
	}
operands:
	rest := args[i:]
	if !hasProg {
		if len(rest) == 0 {
			c.errf("usage: awk [-F fs][-v var=value][prog | -f progfile][file ...]")
			return 2
		}
		prog, rest = rest[0], rest[1:]
	}
	p, err := parser.ParseProgram([]byte(prog), nil)
	if err != nil {
		c.errf("%v", err)
		return 2
	}
	var cfgVars []string
	if fs != "" {
		if fs == "t" {
			fs = "\t"
		}
		cfgVars = append(cfgVars, "FS", fs)
	}
	for _, v := range vars {
		k, val, ok := strings.Cut(v, "=")
		if !ok {
			c.errf("`%s' argument to `-v' not in `var=value' form", v)
			return 2
		}
		cfgVars = append(cfgVars, k, unescapeAwk(val))
	}
	var in io.Reader = c.stdin
	var files []string
	for _, r := range rest {
		if k, v, ok := strings.Cut(r, "="); ok && isIdent(k) {
			cfgVars = append(cfgVars, k, unescapeAwk(v))
			continue
		}
		files = append(files, r)
	}
	if len(files) > 0 {
		var all bytes.Buffer
		st := c.inputs(files, func(_ string, b []byte) bool {
			all.Write(b)
			if len(b) > 0 && b[len(b)-1] != '\n' {
				all.WriteByte('\n')
			}
			return true
		})
		if st != 0 {
			return 2
		}
		in = &all
		if len(files) == 1 {
			cfgVars = append(cfgVars, "FILENAME", files[0])
		}
	}
	cfg := &interp.Config{
		Stdin: in, Output: c.out, Error: c.stderr, Vars: cfgVars,
		Environ: []string{}, NoExec: true, NoFileWrites: true, NoFileReads: true,
		Args: []string{},
	}
	it, err := interp.New(p)
	if err != nil {
		c.errf("%v", err)
		return 2
	}
	st, err := it.ExecuteContext(c.ctx, cfg)
	if err != nil {
		if c.stopped() {
			return 2
		}
		c.errf("%v", err)
		return 2
	}
	return st
}

func isIdent(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func unescapeAwk(s string) string {
	return strings.NewReplacer(`\n`, "\n", `\t`, "\t", `\\`, `\`).Replace(s)
}

// cmdJq runs gojq: no modules, no environment, input from the workspace.
func cmdJq(c *cmd, args []string) int {
	var raw, compact, null, slurp, exit, join, tab bool
	indent := 2
	var names []string
	var values []any
	var filter string
	hasFilter := false
	var files []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--arg" || a == "--argjson":
			if i+2 >= len(args) {
				c.errf("error: %s takes two parameters (e.g. %s varname value)", a, a)
				return 2
			}
			names = append(names, "$"+args[i+1])
			if a == "--arg" {
				values = append(values, args[i+2])
			} else {
				v, err := decodeOne(args[i+2])
				if err != nil {
					c.errf("error: invalid JSON text passed to --argjson")
					return 2
				}
				values = append(values, v)
			}
			i += 2
		case a == "--indent":
			if i+1 >= len(args) {
				c.errf("error: --indent takes one parameter")
				return 2
			}
			i++
			indent, _ = strconv.Atoi(args[i])
		case a == "--tab":
			tab = true
		case a == "--raw-output":
			raw = true
		case a == "--compact-output":
			compact = true
		case a == "--null-input":
			null = true
		case a == "--slurp":
			slurp = true
		case a == "--exit-status":
			exit = true
		case a == "--join-output":
			raw, join = true, true
		case a == "--sort-keys":
		case len(a) > 1 && a[0] == '-' && a[1] != '-':
			for _, ch := range a[1:] {
				switch ch {
				case 'r':
					raw = true
				case 'c':
					compact = true
				case 'n':
					null = true
				case 's':
					slurp = true
				case 'e':
					exit = true
				case 'j':
					raw, join = true, true
				case 'S', 'M', 'C':
				default:
					c.errf("Unknown arguments: %s", a)
					return 2
				}
			}
		default:
			if !hasFilter {
				filter, hasFilter = a, true
			} else {
				files = append(files, a)
			}
		}
	}
	if !hasFilter {
		filter = "."
	}
	q, err := gojq.Parse(filter)
	if err != nil {
		c.errf("error: %v\njq: 1 compile error", err)
		return 3
	}
	code, err := gojq.Compile(q, gojq.WithVariables(names), gojq.WithEnvironLoader(func() []string { return nil }))
	if err != nil {
		c.errf("error: %v\njq: 1 compile error", err)
		return 3
	}
	var data bytes.Buffer
	if st := c.inputs(files, func(_ string, b []byte) bool {
		data.Write(b)
		data.WriteByte('\n')
		return true
	}); st != 0 {
		return 2
	}
	var inputs []any
	if !null || slurp {
		dec := json.NewDecoder(&data)
		dec.UseNumber()
		for {
			var v any
			if err := dec.Decode(&v); err == io.EOF {
				break
			} else if err != nil {
				c.errf("error (at <stdin>:0): Cannot parse input: %v", err)
				return 2
			}
			inputs = append(inputs, normalize(v))
		}
	}
	if slurp {
		if inputs == nil {
			inputs = []any{}
		}
		inputs = []any{inputs}
	}
	if null {
		inputs = []any{nil}
	}
	st := 0
	var last any = true
	hadOutput := false
	ind := strings.Repeat(" ", indent)
	if tab {
		ind = "\t"
	}
	for _, in := range inputs {
		iter := code.RunWithContext(c.ctx, in, values...)
		for {
			v, ok := iter.Next()
			if !ok {
				break
			}
			if err, ok := v.(error); ok {
				var he interface{ IsEmptyError() bool }
				if errors.As(err, &he) && he.IsEmptyError() {
					break
				}
				c.errf("error (at <stdin>:0): %v", err)
				st = 5
				break
			}
			last, hadOutput = v, true
			if s, ok := v.(string); ok && raw {
				c.out.WriteString(s)
			} else {
				var b bytes.Buffer
				writeJSON(&b, v, compact, ind, "")
				c.out.Write(b.Bytes())
			}
			if !join {
				c.out.WriteByte('\n')
			}
			if c.stopped() {
				return 5
			}
		}
	}
	if exit && st == 0 {
		switch {
		case !hadOutput:
			return 4
		case last == nil || last == false:
			return 1
		}
	}
	return st
}

func decodeOne(s string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return normalize(v), nil
}

// normalize turns json.Numbers into the numbers gojq uses.
func normalize(v any) any {
	switch v := v.(type) {
	case json.Number:
		if i, err := strconv.Atoi(string(v)); err == nil {
			return i
		}
		if !strings.ContainsAny(string(v), ".eE") {
			if b, ok := new(big.Int).SetString(string(v), 10); ok {
				return b
			}
		}
		f, _ := strconv.ParseFloat(string(v), 64)
		return f
	case []any:
		for i := range v {
			v[i] = normalize(v[i])
		}
	case map[string]any:
		for k := range v {
			v[k] = normalize(v[k])
		}
	}
	return v
}

// writeJSON writes v as jq does: indented, or compact; keys sorted.
func writeJSON(b *bytes.Buffer, v any, compact bool, ind, prefix string) {
	switch x := v.(type) {
	case []any:
		if len(x) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if !compact {
				b.WriteString("\n" + prefix + ind)
			}
			writeJSON(b, e, compact, ind, prefix+ind)
		}
		if !compact {
			b.WriteString("\n" + prefix)
		}
		b.WriteByte(']')
	case map[string]any:
		if len(x) == 0 {
			b.WriteString("{}")
			return
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			if !compact {
				b.WriteString("\n" + prefix + ind)
			}
			kb, _ := gojq.Marshal(k)
			b.Write(kb)
			b.WriteByte(':')
			if !compact {
				b.WriteByte(' ')
			}
			writeJSON(b, x[k], compact, ind, prefix+ind)
		}
		if !compact {
			b.WriteString("\n" + prefix)
		}
		b.WriteByte('}')
	default:
		s, err := gojq.Marshal(x)
		if err != nil {
			fmt.Fprintf(b, "%q", fmt.Sprint(x))
			return
		}
		b.Write(s)
	}
}
