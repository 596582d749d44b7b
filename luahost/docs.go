package luahost

import (
	"encoding/json"

	lua "github.com/yuin/gopher-lua"

	"github.com/satchel-dev/satchel"
)

// bindDocs sets the global `docs`: the collections of the run's project
// (DESIGN §3) with the access of its agent. Documents are Lua tables.
//
//	docs.get(store, key [, {history = true}]) -> doc or nil [, previous versions]
//	docs.set(store, doc [, {idempotency_key = K}]) -> key, version
//	docs.query(store, {where =, sort =, limit =, cursor =}) -> docs, next_cursor
//	docs.list(store [, {limit =, cursor =}]) -> docs, next_cursor
//	docs.remove(store, key [, {idempotency_key = K}]) -> removed
func (a *armState) bindDocs(L *lua.LState) {
	t := L.CreateTable(0, 5)
	L.SetFuncs(t, map[string]lua.LGFunction{
		"get": a.docGet, "set": a.docSet, "query": a.docQuery,
		"list": a.docList, "remove": a.docRemove,
	})
	L.SetGlobal("docs", t)
}

// pushDocs pushes the documents of res from s[from] on, key and JSON
// pairs, as tables into a new sequence, or the first alone with one.
func pushDocs(L *lua.LState, res *frame, from int) *lua.LTable {
	t := L.CreateTable((len(res.s)-from)/2, 0)
	for i := from; i+1 < len(res.s); i += 2 {
		pushDoc(L, res.s[i], res.s[i+1])
		t.RawSetInt(t.Len()+1, L.Get(-1))
		L.Pop(1)
	}
	return t
}

// pushDoc pushes a document's JSON as a table.
func pushDoc(L *lua.LState, key, js string) {
	var v any
	if err := (satchel.Document{Key: key, JSON: json.RawMessage(js)}).Decode(&v); err != nil {
		L.RaiseError("document %s: %s", key, err)
	}
	L.Push(fromJSON(L, v))
}

func (a *armState) docGet(L *lua.LState) int {
	name, key := L.CheckString(1), L.CheckString(2)
	history := false
	if opts := L.OptTable(3, nil); opts != nil {
		history = lua.LVAsBool(opts.RawGetString("history"))
	}
	res := a.call(L, &frame{op: opDocGet, s: []string{name, key}, n: []int64{boolInt(history)}})
	if res.num(0) == 0 {
		L.Push(lua.LNil)
		return 1
	}
	pushDoc(L, res.str(0), res.str(1))
	if !history {
		return 1
	}
	L.Push(pushDocs(L, res, 2))
	return 2
}

func (a *armState) docSet(L *lua.LState) int {
	name := L.CheckString(1)
	v, err := a.r.toJSON(L.CheckTable(2), true)
	if err != nil {
		L.ArgError(2, "the document holds "+err.Error())
	}
	b, err := json.Marshal(v)
	if err != nil {
		L.ArgError(2, err.Error())
	}
	key, has := keyOpt(L, 3)
	res := a.call(L, &frame{op: opDocSet, s: []string{name, string(b), key}, n: []int64{has}})
	L.Push(lua.LString(res.str(0)))
	L.Push(lua.LNumber(res.num(0)))
	return 2
}

// pushPage pushes a page's documents and its next cursor (nil at the end).
func pushPage(L *lua.LState, res *frame) int {
	L.Push(pushDocs(L, res, 1))
	if next := res.str(0); next == "" {
		L.Push(lua.LNil)
	} else {
		L.Push(lua.LString(next))
	}
	return 2
}

func optString(t *lua.LTable, key string) string {
	if t == nil {
		return ""
	}
	if s, ok := t.RawGetString(key).(lua.LString); ok {
		return string(s)
	}
	return ""
}

func optInt(t *lua.LTable, key string) int {
	if t == nil {
		return 0
	}
	if n, ok := t.RawGetString(key).(lua.LNumber); ok {
		return int(n)
	}
	return 0
}

func (a *armState) docQuery(L *lua.LState) int {
	name := L.CheckString(1)
	opts := L.OptTable(2, nil)
	return pushPage(L, a.call(L, &frame{op: opDocQuery,
		s: []string{name, optString(opts, "where"), optString(opts, "sort"), optString(opts, "cursor")},
		n: []int64{int64(optInt(opts, "limit"))}}))
}

func (a *armState) docList(L *lua.LState) int {
	name := L.CheckString(1)
	opts := L.OptTable(2, nil)
	return pushPage(L, a.call(L, &frame{op: opDocList,
		s: []string{name, optString(opts, "cursor")}, n: []int64{int64(optInt(opts, "limit"))}}))
}

func (a *armState) docRemove(L *lua.LState) int {
	name, key := L.CheckString(1), L.CheckString(2)
	idem, has := keyOpt(L, 3)
	res := a.call(L, &frame{op: opDocRemove, s: []string{name, key, idem}, n: []int64{has}})
	L.Push(lua.LBool(res.num(0) != 0))
	return 1
}
