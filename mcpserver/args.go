package mcpserver

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	// The SDK's JSON package: one pass where encoding/json validates the
	// whole input first (a 7 KiB content argument decoded ~4× faster).
	"github.com/segmentio/encoding/json"

	"github.com/satchel-dev/satchel"
)

// args decodes a tool's arguments itself, so that every problem is
// reported at once and in satchel's words (the SDK's typed handlers would
// validate first, in their own): a tool gets its arguments, or one error of
// kind satchel.ErrInvalidArgument (or ErrInvalidPath when paths are all that
// is wrong) whose message lists each problem on its own line.
type args struct {
	raw      map[string]json.RawMessage
	bad      bool // the arguments were not an object: nothing else is checked
	problems []string
	kind     error // the kind of the error when there is one problem
}

// parseArgs reads raw, the arguments of tool, which takes the arguments
// named in props. Unknown arguments are problems (no argument can name a
// scope, or anything else a tool does not take).
func parseArgs(tool string, raw json.RawMessage, props []string) *args {
	a := &args{raw: map[string]json.RawMessage{}}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return a
	}
	if trimmed[0] != '{' || json.Unmarshal(trimmed, &a.raw) != nil {
		a.add(satchel.ErrInvalidArgument, "the arguments of %s must be a JSON object, were %s", tool, show(trimmed))
		a.raw = map[string]json.RawMessage{}
		a.bad = true
		return a
	}
	var unknown []string
	for k := range a.raw {
		if !contains(props, k) {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		if len(props) == 0 {
			a.add(satchel.ErrInvalidArgument, "unknown argument %q: %s takes no arguments", k, tool)
		} else {
			a.add(satchel.ErrInvalidArgument, "unknown argument %q: %s takes %s", k, tool, strings.Join(props, ", "))
		}
	}
	return a
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (a *args) add(kind error, format string, v ...any) {
	a.problems = append(a.problems, fmt.Sprintf(format, v...))
	if len(a.problems) == 1 {
		a.kind = kind
	} else {
		a.kind = satchel.ErrInvalidArgument
	}
}

// err returns the problems found, or nil.
func (a *args) err() error {
	if len(a.problems) == 0 {
		return nil
	}
	return &satchel.Error{Kind: a.kind, Msg: strings.Join(a.problems, "\n")}
}

// get returns the raw value of name; absent and JSON null are the same.
func (a *args) get(name string) (json.RawMessage, bool) {
	v, ok := a.raw[name]
	if !ok || string(bytes.TrimSpace(v)) == "null" {
		return nil, false
	}
	return v, true
}

// show renders a raw JSON value for a message, cut to 60 bytes.
func show(v json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		b.Reset()
		b.Write(v)
	}
	s := b.String()
	if len(s) > 60 {
		cut := 57
		for cut > 0 && !isRuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return s
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// str returns a string argument; a missing required one is a problem.
func (a *args) str(name string, required bool) (string, bool) {
	v, ok := a.get(name)
	if !ok {
		if required && !a.bad {
			a.add(satchel.ErrInvalidArgument, "%s is required", name)
		}
		return "", false
	}
	if s, ok := unquote(v); ok {
		return s, true
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		a.add(satchel.ErrInvalidArgument, "%s must be a string, was %s", name, show(v))
		return "", false
	}
	return s, true
}

// unquote decodes v, a value the JSON decoder accepted (a string literal
// has no control characters nor unescaped quotes then), when it is a
// string in valid UTF-8 whose escapes are of one character (\n, \") or
// of a character outside the surrogates (\u003c).
// It copies the string once, where the decoder makes it in pieces (a
// write's 7 KiB content ~100 times, once per line); other strings are
// left to the decoder (ok false), whose reading of them is the same.
func unquote(v json.RawMessage) (string, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	s := v[1 : len(v)-1]
	if !utf8.Valid(s) {
		return "", false // the decoder replaces invalid bytes
	}
	var b strings.Builder
	b.Grow(len(s))
	for {
		i := bytes.IndexByte(s, '\\')
		if i < 0 {
			b.Write(s)
			return b.String(), true
		}
		b.Write(s[:i])
		if i+1 == len(s) {
			return "", false
		}
		switch s[i+1] {
		case '"', '\\', '/':
			b.WriteByte(s[i+1])
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			// \u003c, as encoding/json writes <, > and &; surrogates
			// (pairs or not) are left to the decoder.
			if i+6 > len(s) {
				return "", false
			}
			r, err := strconv.ParseUint(string(s[i+2:i+6]), 16, 32)
			if err != nil || r >= 0xD800 && r <= 0xDFFF {
				return "", false
			}
			b.WriteRune(rune(r))
			s = s[i+6:]
			continue
		default:
			return "", false
		}
		s = s[i+2:]
	}
}

// path returns a path argument, validated as every file operation
// validates it (DESIGN §2.1).
func (a *args) path(name string, required bool) (string, bool) {
	p, ok := a.str(name, required)
	if !ok {
		return "", false
	}
	if err := satchel.ValidPath(p); err != nil {
		a.add(satchel.ErrInvalidPath, "%s", err.Error())
		return "", false
	}
	return p, true
}

// dir returns a directory argument ("" is the whole workspace; a trailing
// "/" is ignored, as the API does), validated like a path.
func (a *args) dir(name string) string {
	p, ok := a.str(name, false)
	if !ok {
		return ""
	}
	if d := strings.TrimSuffix(p, "/"); d != "" {
		if err := satchel.ValidPath(d); err != nil {
			a.add(satchel.ErrInvalidPath, "%s", err.Error())
			return ""
		}
	}
	return p
}

// integer returns an integer argument within [min, max].
func (a *args) integer(name string, min, max int) (int, bool) {
	v, ok := a.get(name)
	if !ok {
		return 0, false
	}
	var f float64
	if json.Unmarshal(v, &f) != nil || f != math.Trunc(f) || math.IsInf(f, 0) {
		a.add(satchel.ErrInvalidArgument, "%s must be an integer, was %s", name, show(v))
		return 0, false
	}
	if f < float64(min) {
		a.add(satchel.ErrInvalidArgument, "%s must be at least %d, was %s", name, min, show(v))
		return 0, false
	}
	if f > float64(max) {
		a.add(satchel.ErrInvalidArgument, "%s must be at most %d, was %s", name, max, show(v))
		return 0, false
	}
	return int(f), true
}

// boolean returns a boolean argument, def when it is absent.
func (a *args) boolean(name string, def bool) bool {
	v, ok := a.get(name)
	if !ok {
		return def
	}
	var b bool
	if json.Unmarshal(v, &b) != nil {
		a.add(satchel.ErrInvalidArgument, "%s must be a boolean (true or false), was %s", name, show(v))
		return def
	}
	return b
}

// ref returns a commit reference: a checkpoint name, "head", or a
// sequence number given as an integer or a string.
func (a *args) ref(name string, required bool) (string, bool) {
	v, ok := a.get(name)
	if !ok {
		if required && !a.bad {
			a.add(satchel.ErrInvalidArgument, "%s is required", name)
		}
		return "", false
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s, true
	}
	var f float64
	if json.Unmarshal(v, &f) == nil && f == math.Trunc(f) && f >= 0 && f <= 1<<53 {
		return strconv.FormatInt(int64(f), 10), true
	}
	a.add(satchel.ErrInvalidArgument, "%s must be a commit: a sequence number, a checkpoint name or \"head\", was %s", name, show(v))
	return "", false
}
