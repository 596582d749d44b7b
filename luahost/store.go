package luahost

import (
	"strconv"

	lua "github.com/yuin/gopher-lua"
)

// bindStore sets the global `store`: the workspace's file operations with
// DESIGN §2's semantics. Mutators return nothing; every refusal raises a
// Lua error with the Go API's message at the calling line.
func (a *armState) bindStore(L *lua.LState) {
	t := L.CreateTable(0, 8)
	L.SetFuncs(t, map[string]lua.LGFunction{
		"write":         a.write,
		"append":        a.append,
		"read":          func(L *lua.LState) int { return a.read(L, false) },
		"read_numbered": func(L *lua.LState) int { return a.read(L, true) },
		"str_replace":   a.strReplace,
		"glob":          a.glob,
		"exists":        a.exists,
		"delete":        a.delete,
	})
	L.SetGlobal("store", t)
}

func (a *armState) write(L *lua.LState) int {
	p, content := L.CheckString(1), L.CheckString(2)
	key, has := keyOpt(L, 3)
	a.mutate(L, &frame{op: opWrite, s: []string{p, content, key}, n: []int64{has}})
	return 0
}

func (a *armState) append(L *lua.LState) int {
	p, text := L.CheckString(1), L.CheckString(2)
	key, has := keyOpt(L, 3)
	a.mutate(L, &frame{op: opAppend, s: []string{p, text, key}, n: []int64{has}})
	return 0
}

// read implements read and read_numbered: read(p), read(p, start),
// read(p, start, end); read(p, nil, end) is refused as the Go API refuses
// an end without a start.
func (a *armState) read(L *lua.LState, numbered bool) int {
	p := L.CheckString(1)
	n := []int64{boolInt(numbered), 0, 0, 0, 0}
	if v := L.Get(2); v != lua.LNil {
		n[1], n[2] = 1, int64(L.CheckInt(2))
	}
	if v := L.Get(3); v != lua.LNil {
		n[3], n[4] = 1, int64(L.CheckInt(3))
	}
	res := a.call(L, &frame{op: opRead, s: []string{p}, n: n})
	text := res.str(0)
	a.r.checkSize(L, int64(len(text)))
	L.Push(lua.LString(text))
	return 1
}

func (a *armState) strReplace(L *lua.LState) int {
	p, old, new := L.CheckString(1), L.CheckString(2), L.CheckString(3)
	all := L.OptBool(4, false)
	key, has := keyOpt(L, 5)
	a.mutate(L, &frame{op: opStrReplace, s: []string{p, old, new, key}, n: []int64{boolInt(all), has}})
	return 0
}

func (a *armState) glob(L *lua.LState) int {
	res := a.call(L, &frame{op: opGlob, s: []string{L.CheckString(1)}})
	t := L.CreateTable(len(res.s), 0)
	for i, p := range res.s {
		t.RawSetInt(i+1, lua.LString(p))
	}
	L.Push(t)
	return 1
}

func (a *armState) exists(L *lua.LState) int {
	res := a.call(L, &frame{op: opExists, s: []string{L.CheckString(1)}})
	L.Push(lua.LBool(res.num(0) != 0))
	return 1
}

func (a *armState) delete(L *lua.LState) int {
	p := L.CheckString(1)
	key, has := keyOpt(L, 2)
	a.mutate(L, &frame{op: opDelete, s: []string{p, key}, n: []int64{has}})
	return 0
}

// keyOpt reads the optional options table at argument n of a mutator,
// {idempotency_key = "K"} (satchel.IdempotencyKey): the key and 1, or 0
// without one.
func keyOpt(L *lua.LState, n int) (string, int64) {
	t := L.OptTable(n, nil)
	if t == nil {
		return "", 0
	}
	key, has := "", int64(0)
	t.ForEach(func(k, v lua.LValue) {
		ks, ok := k.(lua.LString)
		if !ok || ks != "idempotency_key" {
			L.ArgError(n, "unknown option "+k.String()+" (options: idempotency_key)")
		}
		s, ok := v.(lua.LString)
		if !ok {
			L.ArgError(n, "idempotency_key must be a string")
		}
		key, has = string(s), 1
	})
	return key, has
}

// mutate makes a call that answers nothing. In a child process, on the
// run's own workspace and outside pcall, it is posted: the script goes on
// while the parent carries it out, and a failure is raised at the script's
// next call that waits, with the line of the call that failed; nothing the
// script did after it reaches the store or the output (decision 0109).
func (a *armState) mutate(L *lua.LState, f *frame) {
	rh, ok := a.r.host.(*remoteHost)
	if !ok || a.ws != rootHandle || a.protected > 0 {
		a.call(L, f)
		return
	}
	f.ws = a.ws
	a.r.raiseIf(L, rh.post(f, where(L)))
}

// where is the position of the Lua code that called the running Go
// function, as Lua's errors give it: "script.lua:12:".
func where(L *lua.LState) string {
	for level := 0; ; level++ {
		dbg, ok := L.GetStack(level)
		if !ok {
			return ""
		}
		if _, err := L.GetInfo("Sl", dbg, lua.LNil); err != nil {
			return ""
		}
		if dbg.CurrentLine != -1 && dbg.Source != "" {
			return dbg.Source + ":" + strconv.Itoa(dbg.CurrentLine) + ":"
		}
	}
}

// protect wraps pcall or xpcall: posted calls are waited for before it
// (their failure is not the protected function's to catch), and every
// call within it waits for its answer, so that it catches what fails.
func (a *armState) protect(L *lua.LState, orig lua.LValue) *lua.LFunction {
	return L.NewFunction(func(L *lua.LState) int {
		if rh, ok := a.r.host.(*remoteHost); ok {
			a.r.raiseIf(L, rh.sync(a.r.ctx))
		}
		a.protected++
		defer func() { a.protected-- }()
		L.Insert(orig, 1)
		L.Call(L.GetTop()-1, lua.MultRet)
		return L.GetTop()
	})
}
