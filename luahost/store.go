package luahost

import (
	lua "github.com/yuin/gopher-lua"

	"github.com/satchel-dev/satchel"
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
	a.r.raiseIf(L, a.ws.Write(a.r.ctx, p, content, keyOpts(L, 3)...))
	return 0
}

func (a *armState) append(L *lua.LState) int {
	p, text := L.CheckString(1), L.CheckString(2)
	a.r.raiseIf(L, a.ws.Append(a.r.ctx, p, text, keyOpts(L, 3)...))
	return 0
}

// read implements read and read_numbered: read(p), read(p, start),
// read(p, start, end); read(p, nil, end) is refused as the Go API refuses
// an end without a start.
func (a *armState) read(L *lua.LState, numbered bool) int {
	p := L.CheckString(1)
	var b satchel.Bounds
	if v := L.Get(2); v != lua.LNil {
		b.Start, b.HasStart = L.CheckInt(2), true
	}
	if v := L.Get(3); v != lua.LNil {
		b.End, b.HasEnd = L.CheckInt(3), true
	}
	res, err := a.ws.ReadWith(a.r.ctx, p, satchel.ReadOptions{Bounds: b, Numbered: numbered})
	a.r.raiseIf(L, err)
	a.r.checkSize(L, int64(len(res.Text)))
	L.Push(lua.LString(res.Text))
	return 1
}

func (a *armState) strReplace(L *lua.LState) int {
	p, old, new := L.CheckString(1), L.CheckString(2), L.CheckString(3)
	all := L.OptBool(4, false)
	_, err := a.ws.StrReplace(a.r.ctx, p, old, new, all, keyOpts(L, 5)...)
	a.r.raiseIf(L, err)
	return 0
}

func (a *armState) glob(L *lua.LState) int {
	paths, err := a.ws.Glob(a.r.ctx, L.CheckString(1))
	a.r.raiseIf(L, err)
	t := L.CreateTable(len(paths), 0)
	for i, p := range paths {
		t.RawSetInt(i+1, lua.LString(p))
	}
	L.Push(t)
	return 1
}

func (a *armState) exists(L *lua.LState) int {
	ok, err := a.ws.Exists(a.r.ctx, L.CheckString(1))
	a.r.raiseIf(L, err)
	L.Push(lua.LBool(ok))
	return 1
}

func (a *armState) delete(L *lua.LState) int {
	a.r.raiseIf(L, a.ws.Delete(a.r.ctx, L.CheckString(1), keyOpts(L, 2)...))
	return 0
}

// keyOpts reads the optional options table at argument n of a mutator,
// {idempotency_key = "K"} (satchel.IdempotencyKey).
func keyOpts(L *lua.LState, n int) []satchel.WriteOption {
	t := L.OptTable(n, nil)
	if t == nil {
		return nil
	}
	var opts []satchel.WriteOption
	t.ForEach(func(k, v lua.LValue) {
		ks, ok := k.(lua.LString)
		if !ok || ks != "idempotency_key" {
			L.ArgError(n, "unknown option "+k.String()+" (options: idempotency_key)")
		}
		s, ok := v.(lua.LString)
		if !ok {
			L.ArgError(n, "idempotency_key must be a string")
		}
		opts = append(opts, satchel.IdempotencyKey(string(s)))
	})
	return opts
}
