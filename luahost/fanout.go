package luahost

import (
	"fmt"
	"strings"
	"sync"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// fanout(fn, t1, t2, ...) calls fn(t, i) once per argument table, each
// call (an arm) in a Lua state of its own, concurrently, over the same
// workspace through satchel's Workspace.Fanout (DESIGN §2.5: two arms
// writing one path is a write-write race, raised in the later arm). fn's
// compiled code is shared; an arm sees its argument (copied in), its
// index, the globals every state has, and nil for fn's upvalues. It
// returns the arms' results (copied out) in order; if an arm failed, it
// raises the first failure in arm order once every arm has finished
// (docs/decisions/0017-lua-fanout.md).
func (a *armState) fanout(L *lua.LState) int {
	r := a.r
	fn := L.CheckFunction(1)
	if fn.IsG || fn.Proto == nil {
		L.ArgError(1, "a Lua function expected, not a built-in one")
	}
	n := L.GetTop() - 1
	if n == 0 {
		L.RaiseError("fanout(fn) needs at least one argument table: fanout(fn, t1, t2, ...)")
	}
	if a.depth >= MaxFanoutDepth {
		L.RaiseError("fanout nests at most %d deep", MaxFanoutDepth)
	}
	inputs := make([]any, n)
	in := r.newPlainCopy()
	for i := range inputs {
		t, ok := L.Get(i + 2).(*lua.LTable)
		if !ok {
			L.ArgError(i+2, "table expected, got "+L.Get(i+2).Type().String())
		}
		v, err := in.toPlain(t)
		if err != nil {
			L.ArgError(i+2, "arms take plain data; it holds "+err.Error())
		}
		inputs[i] = v
	}
	results := make([]any, n)
	failures := make([]string, n)
	open := a.call(L, &frame{op: opFanoutOpen, n: []int64{int64(n)}})
	if len(open.n) != n+1 {
		L.RaiseError("fanout: the host opened %d arms of %d", len(open.n)-1, n)
	}
	sem := make(chan struct{}, r.fanoutMax)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-r.ctx.Done():
				failures[i] = "stopped before it started"
				return
			}
			defer func() { <-sem }()
			defer func() {
				if v := recover(); v != nil { // a bug of the host: the arm fails, not the process
					failures[i] = fmt.Sprintf("failed: internal error: %v", v)
				}
			}()
			results[i], failures[i] = a.arm(fn.Proto, uint64(open.n[i+1]), inputs[i], i+1)
		}()
	}
	wg.Wait()
	a.call(L, &frame{op: opFanoutClose, n: []int64{open.n[0]}})
	for i, f := range failures {
		if f != "" {
			L.RaiseError("fanout arm %d %s", i+1, f)
		}
	}
	out := L.CreateTable(n, 0)
	for i, v := range results {
		out.RawSetInt(i+1, toLua(L, v))
	}
	L.Push(out)
	return 1
}

// arm runs one arm in a state of its own and returns its result, or why
// it failed ("failed: MESSAGE", "returned a function; ...").
func (a *armState) arm(proto *lua.FunctionProto, ws uint64, input any, index int) (any, string) {
	child := &armState{r: a.r, ws: ws, depth: a.depth + 1}
	L := child.newState()
	defer L.Close()
	child.setArgs(L)
	f := L.NewFunctionFromProto(proto)
	if len(f.Upvalues) > 0 {
		ups, err := nilUpvalues(L, len(f.Upvalues))
		if err != nil {
			return nil, "failed: " + err.Error()
		}
		copy(f.Upvalues, ups)
	}
	L.Push(f)
	L.Push(toLua(L, input))
	L.Push(lua.LNumber(index))
	if err := L.PCall(2, 1, nil); err != nil {
		return nil, "failed: " + a.r.scriptError(errorObject(L, err))
	}
	v, err := a.r.toPlain(L.Get(-1))
	if err != nil {
		return nil, fmt.Sprintf("returned %s; arms return plain data", err)
	}
	return v, ""
}

// nilUpvalues returns n fresh upvalues holding nil: an arm's copy of fn
// shares nothing with the script's variables. They come from a closure
// over n locals, made in L.
func nilUpvalues(L *lua.LState, n int) ([]*lua.Upvalue, error) {
	proto, err := upvalueMaker(n)
	if err != nil {
		return nil, err
	}
	L.Push(L.NewFunctionFromProto(proto))
	if err := L.PCall(0, 1, nil); err != nil {
		return nil, err
	}
	g := L.Get(-1).(*lua.LFunction)
	L.Pop(1)
	return g.Upvalues, nil
}

var upvalueMakers sync.Map // int -> *lua.FunctionProto

// upvalueMaker compiles, once per n, "local u1, ..., un; return
// function() return u1, ..., un end".
func upvalueMaker(n int) (*lua.FunctionProto, error) {
	if p, ok := upvalueMakers.Load(n); ok {
		return p.(*lua.FunctionProto), nil
	}
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("u%d", i+1)
	}
	list := strings.Join(names, ", ")
	src := "local " + list + "\nreturn function() return " + list + " end"
	chunk, err := parse.Parse(strings.NewReader(src), "fanout")
	if err != nil {
		return nil, err
	}
	p, err := lua.Compile(chunk, "fanout")
	if err != nil {
		return nil, err
	}
	upvalueMakers.Store(n, p)
	return p, nil
}
