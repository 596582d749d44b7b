package luahost

import (
	"context"
	"math"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// capStrings replaces the string functions that could build a string
// past the memory limit in one call, or match without end: rep, format,
// find, match, gmatch and gsub.
func (r *run) capStrings(L *lua.LState, str *lua.LTable) {
	rep := str.RawGetString("rep").(*lua.LFunction)
	str.RawSetString("rep", L.NewFunction(func(L *lua.LState) int {
		s := L.CheckString(1)
		n := float64(L.CheckNumber(2))
		// In floating point, so that no count overflows the check: a
		// count past the limit, however large, is refused by its size.
		if size := float64(len(s)) * math.Trunc(n); size > float64(r.maxMemory) {
			r.checkSize(L, math.MaxInt64)
		}
		return callOriginal(L, rep)
	}))
	format := str.RawGetString("format").(*lua.LFunction)
	str.RawSetString("format", L.NewFunction(func(L *lua.LState) int {
		f := L.CheckString(1)
		if c, bad := badConversion(f); bad {
			// Lua 5.1's words. Go's argument indexes (%[1]s) and widths
			// from arguments (%*d) would let one argument be written many
			// times, past the size counted below.
			L.RaiseError("invalid option '%%%c' to 'format'", c)
		}
		if err := checkFormat(f); err != "" {
			L.ArgError(1, err)
		}
		size := int64(len(f))
		for i := 2; i <= L.GetTop(); i++ {
			size += int64(len(L.Get(i).String())) + 100
		}
		r.checkSize(L, size)
		return callOriginal(L, format)
	}))
	str.RawSetString("find", L.NewFunction(func(L *lua.LState) int { return r.find(L, true) }))
	str.RawSetString("match", L.NewFunction(func(L *lua.LState) int { return r.find(L, false) }))
	// gfind is Lua 5.1's old name of gmatch: the same function.
	gmatch := L.NewFunction(r.gmatch)
	str.RawSetString("gmatch", gmatch)
	str.RawSetString("gfind", gmatch)
	str.RawSetString("gsub", L.NewFunction(r.gsub))
}

// callOriginal calls fn with the current arguments and returns its results.
func callOriginal(L *lua.LState, fn *lua.LFunction) int {
	n := L.GetTop()
	L.Insert(fn, 1)
	L.Call(n, lua.MultRet)
	return L.GetTop()
}

// badConversion returns the conversion of the first directive of f that
// is neither a letter nor %, past its flags, width and precision.
func badConversion(f string) (byte, bool) {
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		i++
		for i < len(f) && strings.IndexByte("-+ #0", f[i]) >= 0 {
			i++
		}
		for i < len(f) && f[i] >= '0' && f[i] <= '9' {
			i++
		}
		if i < len(f) && f[i] == '.' {
			i++
			for i < len(f) && f[i] >= '0' && f[i] <= '9' {
				i++
			}
		}
		if i < len(f) && f[i] != '%' && !isAlpha(f[i]) {
			return f[i], true
		}
	}
	return 0, false
}

// checkFormat refuses what Lua 5.1 refuses in a format (a width or a
// precision of more than two digits), which also bounds what each
// directive can produce.
func checkFormat(f string) string {
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		i++
		for i < len(f) && strings.IndexByte("-+ #0", f[i]) >= 0 {
			i++
		}
		digits := 0
		for i < len(f) && f[i] >= '0' && f[i] <= '9' {
			i++
			digits++
		}
		if digits > 2 {
			return "invalid format (width or precision too long)"
		}
		if i < len(f) && f[i] == '.' {
			i++
			digits = 0
			for i < len(f) && f[i] >= '0' && f[i] <= '9' {
				i++
				digits++
			}
			if digits > 2 {
				return "invalid format (width or precision too long)"
			}
		}
	}
	return ""
}

// capConcat replaces table.concat with one that follows Lua 5.1 (a value
// of i..j that is not a string or a number is an error naming its index)
// and checks, as it walks, the size of what it builds and the run's
// context: a walk over a range far past the table's end stops at the
// first missing value, and none outgrows the memory limit.
func (r *run) capConcat(L *lua.LState, tab *lua.LTable) {
	tab.RawSetString("concat", L.NewFunction(func(L *lua.LState) int {
		t := L.CheckTable(1)
		sep := L.OptString(2, "")
		i := L.OptInt(3, 1)
		j := L.OptInt(4, t.Len())
		var b strings.Builder
		for k := i; k <= j; k++ {
			var s string
			switch v := t.RawGetInt(k).(type) {
			case lua.LString:
				s = string(v)
			case lua.LNumber:
				s = v.String()
			default:
				L.RaiseError("invalid value (at index %d) in table for 'concat'", k)
			}
			size := int64(b.Len()) + int64(len(s))
			if k < j {
				size += int64(len(sep))
			}
			r.checkSize(L, size)
			b.WriteString(s)
			if k == j {
				break // k++ would overflow when j is the largest int
			}
			b.WriteString(sep)
			if (k-i)%checkEvery == checkEvery-1 {
				r.checkContext(L)
			}
		}
		L.Push(lua.LString(b.String()))
		return 1
	}))
}

// checkContext raises the run's stop (its time limit, its memory limit,
// a cancel) when it was stopped.
func (r *run) checkContext(L *lua.LState) {
	if r.ctx.Err() != nil {
		r.raise(L, context.Cause(r.ctx))
	}
}

var specials = "^$*+?.([%-"

// find implements string.find (find) and string.match.
func (r *run) find(L *lua.LState, find bool) int {
	s := L.CheckString(1)
	p := L.CheckString(2)
	init := L.OptInt(3, 1)
	if init < 0 {
		init = len(s) + init + 1
	}
	if init < 1 {
		init = 1
	}
	if init > len(s)+1 { // as Lua 5.1 does
		init = len(s) + 1
	}
	if len(p) > maxPatternLen {
		L.ArgError(2, "pattern too long")
	}
	if find && (L.ToBool(4) || !strings.ContainsAny(p, specials)) {
		i := strings.Index(s[init-1:], p)
		if i < 0 {
			L.Push(lua.LNil)
			return 1
		}
		L.Push(lua.LNumber(init + i))
		L.Push(lua.LNumber(init + i + len(p) - 1))
		return 2
	}
	anchor := strings.HasPrefix(p, "^")
	if anchor {
		p = p[1:]
	}
	ms := &matchState{src: s, pat: p, ctx: r.ctx}
	var caps []captureValue
	start, end := -1, -1
	err := protect(func() {
		for s1 := init - 1; ; s1++ {
			ms.level = 0
			if e := ms.match(s1, 0); e >= 0 {
				start, end = s1, e
				caps = ms.captures(s1, e, !find)
				return
			}
			if s1 >= len(s) || anchor {
				return
			}
		}
	})
	r.raiseIf(L, err)
	if start < 0 {
		L.Push(lua.LNil)
		return 1
	}
	n := 0
	if find {
		L.Push(lua.LNumber(start + 1))
		L.Push(lua.LNumber(end))
		n = 2
	}
	for _, c := range caps {
		L.Push(c.lua())
	}
	return n + len(caps)
}

func (c captureValue) lua() lua.LValue {
	if c.isPos {
		return lua.LNumber(c.pos)
	}
	return lua.LString(c.str)
}

// gmatch implements string.gmatch.
func (r *run) gmatch(L *lua.LState) int {
	s := L.CheckString(1)
	p := L.CheckString(2)
	if len(p) > maxPatternLen {
		L.ArgError(2, "pattern too long")
	}
	pos := 0
	L.Push(L.NewFunction(func(L *lua.LState) int {
		ms := &matchState{src: s, pat: p, ctx: r.ctx}
		var caps []captureValue
		found := false
		err := protect(func() {
			for src := pos; src <= len(s); src++ {
				ms.level = 0
				if e := ms.match(src, 0); e >= 0 {
					pos = e
					if e == src {
						pos++ // an empty match: go on one position
					}
					caps = ms.captures(src, e, true)
					found = true
					return
				}
			}
			pos = len(s) + 1
		})
		r.raiseIf(L, err)
		if !found {
			L.Push(lua.LNil)
			return 1
		}
		for _, c := range caps {
			L.Push(c.lua())
		}
		return len(caps)
	}))
	return 1
}

// gsub implements string.gsub, bounding the string it builds.
func (r *run) gsub(L *lua.LState) int {
	s := L.CheckString(1)
	p := L.CheckString(2)
	repl := L.Get(3)
	switch repl.Type() {
	case lua.LTNumber, lua.LTString, lua.LTTable, lua.LTFunction:
	default:
		L.ArgError(3, "string/function/table expected")
	}
	maxN := L.OptInt(4, len(s)+1)
	if len(p) > maxPatternLen {
		L.ArgError(2, "pattern too long")
	}
	anchor := strings.HasPrefix(p, "^")
	if anchor {
		p = p[1:]
	}
	ms := &matchState{src: s, pat: p, ctx: r.ctx}
	b := &boundedBuilder{max: r.maxMemory}
	src, n := 0, 0
	for n < maxN {
		ms.level = 0
		e := -1
		var caps []captureValue
		err := protect(func() {
			if e = ms.match(src, 0); e >= 0 {
				caps = ms.captures(src, e, true)
			}
		})
		r.raiseIf(L, err)
		if e >= 0 {
			n++
			r.addValue(L, b, ms, src, e, repl, caps)
		}
		switch {
		case e >= 0 && e > src:
			src = e
		case src < len(s):
			b.WriteString(s[src : src+1])
			src++
		default:
			src = len(s) + 1
		}
		r.checkBuilt(L, b)
		if src > len(s) || anchor {
			break
		}
	}
	if src < len(s) {
		b.WriteString(s[src:])
	}
	r.checkBuilt(L, b)
	L.Push(lua.LString(b.String()))
	L.Push(lua.LNumber(n))
	return 2
}

// boundedBuilder is gsub's result: it stops taking text past max bytes
// (it then holds what it had, and over is set).
type boundedBuilder struct {
	b    strings.Builder
	max  int64
	over bool
}

func (b *boundedBuilder) WriteString(s string) {
	if b.over || int64(b.b.Len())+int64(len(s)) > b.max {
		b.over = true
		return
	}
	b.b.WriteString(s)
}

func (b *boundedBuilder) String() string { return b.b.String() }

// checkBuilt stops the run when gsub's result went past the memory limit.
func (r *run) checkBuilt(L *lua.LState, b *boundedBuilder) {
	if b.over {
		r.checkSize(L, math.MaxInt64)
	}
}

// addValue appends the replacement of one match to b. A replacement
// string is expanded piece by piece, each piece checked against the
// memory limit, and the matcher's step count (which checks the run's
// context) counts the pieces: ("%0"):rep(65536) over a 1 MiB match stops
// at the limit, having built no more than it.
func (r *run) addValue(L *lua.LState, b *boundedBuilder, ms *matchState, s, e int, repl lua.LValue, caps []captureValue) {
	var v lua.LValue
	switch rv := repl.(type) {
	case lua.LString, lua.LNumber:
		news := rv.String()
		var err error
		err = protect(func() {
			for i := 0; i < len(news) && !b.over; i++ {
				ms.step()
				c := news[i]
				if c != '%' || i+1 >= len(news) {
					b.WriteString(news[i : i+1])
					continue
				}
				i++
				d := news[i]
				switch {
				case d < '0' || d > '9':
					b.WriteString(news[i : i+1])
				case d == '0':
					b.WriteString(ms.src[s:e])
				default:
					b.WriteString(ms.get(int(d-'1'), s, e).lua().String())
				}
			}
		})
		r.raiseIf(L, err)
		r.checkBuilt(L, b)
		return
	case *lua.LTable:
		v = L.GetTable(rv, caps[0].lua())
	case *lua.LFunction:
		L.Push(rv)
		for _, c := range caps {
			L.Push(c.lua())
		}
		L.Call(len(caps), 1)
		v = L.Get(-1)
		L.Pop(1)
	}
	switch v.Type() {
	case lua.LTNil:
		b.WriteString(ms.src[s:e])
	case lua.LTBool:
		if !lua.LVAsBool(v) {
			b.WriteString(ms.src[s:e])
		} else {
			L.RaiseError("invalid replacement value (a boolean)")
		}
	case lua.LTString, lua.LTNumber:
		b.WriteString(v.String())
		r.checkBuilt(L, b)
	default:
		L.RaiseError("invalid replacement value (a %s)", v.Type().String())
	}
}
