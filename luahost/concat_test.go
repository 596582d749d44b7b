package luahost_test

import (
	"context"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"

	"github.com/satchel-dev/satchel/luahost"
)

// concatPrelude defines the values the concatenation cases use: a table
// with __concat, one without, and nil.
const concatPrelude = `local m = setmetatable({}, {__concat = function(a, b)
  return "<" .. (type(a) == "table" and "m" or tostring(a)) .. "|" .. (type(b) == "table" and "m" or tostring(b)) .. ">"
end})
local plain, none = {}, nil
`

// concatResult runs expr after the prelude, as the host runs it when
// host is true, or in a plain gopher-lua state: its value, or "error: "
// and the message without its position.
func concatResult(t testing.TB, expr string, host bool) string {
	src := concatPrelude + "print(" + expr + ")"
	var out strings.Builder
	var err error
	if host {
		var s *luahost.Script
		if s, err = luahost.Compile("c.lua", src); err != nil {
			return "compile error"
		}
		_, err = s.Run(context.Background(), luahost.Config{Store: open(t, "memory"), Stdout: &out, Timeout: 1e10})
	} else {
		L := lua.NewState()
		defer L.Close()
		L.SetGlobal("print", L.NewFunction(func(L *lua.LState) int {
			parts := make([]string, L.GetTop())
			for i := range parts {
				parts[i] = L.ToStringMeta(L.Get(i + 1)).String()
			}
			out.WriteString(strings.Join(parts, "\t") + "\n")
			return 0
		}))
		err = L.DoString(src)
	}
	if err != nil {
		msg := err.Error()
		if i := strings.Index(msg, "cannot perform"); i >= 0 {
			msg = msg[i:]
		}
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		return "error: " + msg
	}
	return out.String()
}

var concatCases = []string{
	`"a" .. "b"`, `"a" .. 1 .. 2.5 .. "b"`, `1 .. 2`, `-0.1 .. 1e100`,
	`"x" .. m`, `m .. "y"`, `"a" .. "b" .. m .. "c" .. "d"`, `(m .. "a") .. m`, `m .. m`,
	`"a" .. none`, `none .. "a"`, `plain .. "a"`, `"a" .. true`,
	`("a" .. "b"):upper()`, `#("ab" .. "c")`, `({["k" .. 1] = "v" .. 2})["k1"]`,
	`(function(...) return ... .. "!" end)("x")`, `(function() return "a" .. "b", "c" end)()`,
}

// TestConcatAsGopherLua: the host's `..` gives what gopher-lua's gives,
// values, metamethods and errors alike.
func TestConcatAsGopherLua(t *testing.T) {
	for _, expr := range concatCases {
		if got, want := concatResult(t, expr, true), concatResult(t, expr, false); got != want {
			t.Errorf("%s: host %q, gopher-lua %q", expr, got, want)
		}
	}
}

// FuzzConcat: an expression of `..` over strings, numbers, tables with
// and without __concat, and nil, in any grouping, gives what gopher-lua
// gives.
func FuzzConcat(f *testing.F) {
	f.Add([]byte{0, 1, 2})
	f.Add([]byte{5, 4, 3, 2, 1, 0})
	f.Add([]byte{9, 7, 1, 8, 2})
	operands := []string{`"s"`, `1`, `2.5`, `m`, `plain`, `none`, `""`}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 || len(data) > 12 { // one operand is no concatenation
			return
		}
		var b strings.Builder
		open := 0
		for i, c := range data {
			if i > 0 {
				b.WriteString(" .. ")
			}
			if c&0x80 != 0 {
				b.WriteString("(")
				open++
			}
			b.WriteString(operands[int(c&0x7f)%len(operands)])
			if c&0x40 != 0 && open > 0 {
				b.WriteString(")")
				open--
			}
		}
		b.WriteString(strings.Repeat(")", open))
		expr := b.String()
		if got, want := concatResult(t, expr, true), concatResult(t, expr, false); got != want {
			t.Fatalf("%s: host %q, gopher-lua %q", expr, got, want)
		}
	})
}
