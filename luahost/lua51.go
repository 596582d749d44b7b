package luahost

import (
	"errors"
	"math"
	"math/rand"

	lua "github.com/yuin/gopher-lua"
)

// Where gopher-lua departs from Lua 5.1 in ways a script can use against
// the host, the host gives Lua 5.1's behaviour and messages.

// noTailCalls turns every tail call of p, and of the functions it
// defines, into a plain call followed by its return. gopher-lua keeps a
// tail call in its caller's frame but counts it, and an error's
// traceback then writes one line per tail call ever made in the frame:
// `local function g(n) return g(n + 1) end g(1)` ran until its time
// limit and then built gigabytes of traceback, which nothing could
// interrupt. As plain calls they nest like any call, and a chain of them
// ends with `stack overflow` at the call depth. The compiler emits a
// tail call as a call with all its results kept (C = 0) whose opcode it
// then changes, and the return after it returns them all, so changing
// the opcode back is the whole rewrite.
func noTailCalls(p *lua.FunctionProto) {
	for i, inst := range p.Code {
		if int(inst>>26) == lua.OP_TAILCALL {
			p.Code[i] = inst&0x3ffffff | uint32(lua.OP_CALL)<<26
		}
	}
	for _, f := range p.FunctionPrototypes {
		noTailCalls(f)
	}
}

// setRandom replaces math.random with Lua 5.1's: no argument gives a
// number in [0, 1), m an integer in [1, m], m and n one in [m, n]; an
// empty interval is `bad argument #1 to 'random' (interval is empty)`
// (#2 with two arguments), as Lua 5.1 words it. gopher-lua's raised a
// Go panic's text ("invalid argument to Intn").
func setRandom(L *lua.LState) {
	m := L.GetGlobal("math").(*lua.LTable)
	m.RawSetString("random", L.NewFunction(func(L *lua.LState) int {
		r := rand.Float64()
		switch L.GetTop() {
		case 0:
			L.Push(lua.LNumber(r))
		case 1:
			u := math.Trunc(float64(L.CheckNumber(1)))
			if u < 1 {
				L.RaiseError("bad argument #1 to 'random' (interval is empty)")
			}
			L.Push(lua.LNumber(math.Floor(r*u) + 1))
		case 2:
			l := math.Trunc(float64(L.CheckNumber(1)))
			u := math.Trunc(float64(L.CheckNumber(2)))
			if l > u {
				L.RaiseError("bad argument #2 to 'random' (interval is empty)")
			}
			L.Push(lua.LNumber(math.Floor(r*(u-l+1)) + l))
		default:
			L.RaiseError("wrong number of arguments")
		}
		return 1
	}))
}

// errorObject gives the error of a failed call of L whose error object
// has a __tostring metamethod the text it returns, as the script would
// read it with tostring: `error(setmetatable({}, {__tostring = f}))`
// fails with what f returns (gopher-lua gave "table: 0x..."). Any other
// error is returned as it is, and so is this one when __tostring fails
// or returns something other than a string.
func errorObject(L *lua.LState, err error) error {
	var ae *lua.ApiError
	if !errors.As(err, &ae) || ae.Object == nil {
		return err
	}
	switch ae.Object.Type() {
	case lua.LTTable, lua.LTUserData:
	default:
		return err
	}
	fn, ok := L.GetMetaField(ae.Object, "__tostring").(*lua.LFunction)
	if !ok {
		return err
	}
	top := L.GetTop()
	defer L.SetTop(top)
	L.Push(fn)
	L.Push(ae.Object)
	if L.PCall(1, 1, nil) != nil {
		return err
	}
	s, ok := L.Get(-1).(lua.LString)
	if !ok {
		return err
	}
	return &lua.ApiError{Type: ae.Type, Object: s, StackTrace: ae.StackTrace, Cause: ae.Cause}
}
