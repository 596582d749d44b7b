package luahost

import (
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// The stack bounds of every Lua state: a call stack of callDepth frames
// (deep recursion ends with a clear error instead of exhausting memory)
// and a value stack that grows in steps up to registryMax slots.
const (
	callDepth    = 200
	registryInit = 1024
	registryMax  = 256 * 1024
	registryStep = 1024
)

// removed are the globals of the base library a script never sees: the
// file system, bytecode and source loading, environment tampering, raw
// access that would bypass the host's metatables, and the collector.
var removed = []string{
	"os", "io", "debug", "package", "require", "module", "dofile", "loadfile",
	"load", "loadstring", "setfenv", "getfenv", "rawset", "rawget", "rawequal",
	"newproxy", "collectgarbage", "_printregs", "_GOPHER_LUA_VERSION",
}

// newState returns a Lua 5.1 state with only base, table, string and math
// open, without the removed globals, with the string functions that could
// build unbounded strings capped, and stopped when the run's context is
// done (its time limit, its memory limit, or a cancel).
func (r *run) newState() *lua.LState {
	L := lua.NewState(lua.Options{
		SkipOpenLibs:     true,
		CallStackSize:    callDepth,
		RegistrySize:     registryInit,
		RegistryMaxSize:  registryMax,
		RegistryGrowStep: registryStep,
	})
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath},
	} {
		L.Push(L.NewFunction(lib.open))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	for _, name := range removed {
		L.SetGlobal(name, lua.LNil)
	}
	str := L.GetGlobal("string").(*lua.LTable)
	str.RawSetString("dump", lua.LNil)
	r.capStrings(L, str)
	tab := L.GetGlobal("table").(*lua.LTable)
	r.capConcat(L, tab)
	setRandom(L)
	L.SetGlobal(concatName, L.NewFunction(r.concat))
	L.SetGlobal("print", L.NewFunction(r.print))
	L.SetGlobal("untrusted", L.NewFunction(r.untrusted))
	if r.ctx != nil { // nil in a state made ahead of its run
		L.SetContext(r.ctx)
	}
	return L
}

// print writes its arguments, tostring'd and separated by tabs, and a
// newline to the run's output.
func (r *run) print(L *lua.LState) int {
	n := L.GetTop()
	var b strings.Builder
	tostring := L.GetGlobal("tostring")
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteByte('\t')
		}
		L.Push(tostring)
		L.Push(L.Get(i))
		L.Call(1, 1)
		s := L.ToString(-1)
		r.checkSize(L, int64(b.Len())+int64(len(s))+1) // one line, bounded as any string
		b.WriteString(s)
		L.Pop(1)
	}
	b.WriteByte('\n')
	r.out(b.String())
	return 0
}

// untrusted wraps its argument in the run's untrusted envelope.
func (r *run) untrusted(L *lua.LState) int {
	s := L.CheckString(1)
	r.checkSize(L, int64(len(s))*2+200)
	res, err := r.host.call(r.ctx, &frame{op: opUntrusted, s: []string{s}})
	r.raiseIf(L, err)
	L.Push(lua.LString(res.str(0)))
	return 1
}
