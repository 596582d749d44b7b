package luahost

import (
	"encoding/json"
	"errors"

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

var errNoProject = &satchel.Error{Kind: satchel.ErrNotFound,
	Msg: "docs: this run has no collections (give the project directory, with stores/ and agents/, with --dir)"}

// collection returns the run's handle on a store, made once.
func (a *armState) collection(L *lua.LState) *satchel.Collection {
	name := L.CheckString(1)
	r := a.r
	if r.cfg.Project == nil {
		r.raise(L, errNoProject)
	}
	r.colMu.Lock()
	c, ok := r.cols[name]
	r.colMu.Unlock()
	if ok {
		return c
	}
	actor := r.cfg.Actor
	if actor.Agent == "" {
		actor.Agent = r.cfg.Agent
	}
	opts := []satchel.CollectionOption{satchel.Recording(actor), satchel.CallerThread(r.cfg.Thread)}
	if r.cfg.Agent != "" {
		opts = append(opts, satchel.AsAgent(r.cfg.Agent))
	}
	c, err := r.cfg.Store.Collection(r.ctx, r.cfg.Project, r.cfg.Scope, name, opts...)
	r.raiseIf(L, err)
	r.colMu.Lock()
	r.cols[name] = c
	r.colMu.Unlock()
	return c
}

// pushDoc pushes a document's JSON as a table.
func pushDoc(L *lua.LState, d satchel.Document) {
	var v any
	if err := d.Decode(&v); err != nil {
		L.RaiseError("document %s: %s", d.Key, err)
	}
	L.Push(fromJSON(L, v))
}

func (a *armState) docGet(L *lua.LState) int {
	c := a.collection(L)
	key := L.CheckString(2)
	history := false
	if opts := L.OptTable(3, nil); opts != nil {
		history = lua.LVAsBool(opts.RawGetString("history"))
	}
	d, err := c.Get(a.r.ctx, key, history)
	if errors.Is(err, satchel.ErrNotFound) {
		L.Push(lua.LNil)
		return 1
	}
	a.r.raiseIf(L, err)
	pushDoc(L, d)
	if !history {
		return 1
	}
	h := L.CreateTable(len(d.History), 0)
	for i, old := range d.History {
		pushDoc(L, old)
		h.RawSetInt(i+1, L.Get(-1))
		L.Pop(1)
	}
	L.Push(h)
	return 2
}

func (a *armState) docSet(L *lua.LState) int {
	c := a.collection(L)
	v, err := a.r.toJSON(L.CheckTable(2), true)
	if err != nil {
		L.ArgError(2, "the document holds "+err.Error())
	}
	b, err := json.Marshal(v)
	if err != nil {
		L.ArgError(2, err.Error())
	}
	key, version, err := c.Set(a.r.ctx, json.RawMessage(b), keyOpts(L, 3)...)
	a.r.raiseIf(L, err)
	L.Push(lua.LString(key))
	L.Push(lua.LNumber(version))
	return 2
}

// pushPage pushes a page's documents and its next cursor (nil at the end).
func pushPage(L *lua.LState, p satchel.DocumentPage) int {
	t := L.CreateTable(len(p.Documents), 0)
	for i, d := range p.Documents {
		pushDoc(L, d)
		t.RawSetInt(i+1, L.Get(-1))
		L.Pop(1)
	}
	L.Push(t)
	if p.NextCursor == "" {
		L.Push(lua.LNil)
	} else {
		L.Push(lua.LString(p.NextCursor))
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
	c := a.collection(L)
	opts := L.OptTable(2, nil)
	p, err := c.Query(a.r.ctx, satchel.QueryRequest{
		Where: optString(opts, "where"), Sort: optString(opts, "sort"),
		Limit: optInt(opts, "limit"), Cursor: optString(opts, "cursor"),
	})
	a.r.raiseIf(L, err)
	return pushPage(L, p)
}

func (a *armState) docList(L *lua.LState) int {
	c := a.collection(L)
	opts := L.OptTable(2, nil)
	p, err := c.List(a.r.ctx, optInt(opts, "limit"), optString(opts, "cursor"))
	a.r.raiseIf(L, err)
	return pushPage(L, p)
}

func (a *armState) docRemove(L *lua.LState) int {
	c := a.collection(L)
	removed, err := c.Remove(a.r.ctx, L.CheckString(2), keyOpts(L, 3)...)
	a.r.raiseIf(L, err)
	L.Push(lua.LBool(removed))
	return 1
}
