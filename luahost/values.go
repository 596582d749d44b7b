package luahost

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"

	lua "github.com/yuin/gopher-lua"
)

// Plain data is what crosses between Lua states (fanout arguments and
// results) and into documents: nil, booleans, numbers, strings and tables
// of them, without cycles. Anything else is refused with its type's name.
//
// A copy walks each table once: a table that several others hold (a DAG:
// `t = {t, t}` forty times is 41 tables but 2^40 paths) is copied once and
// the copy holds it as many times, as the original does. A walk counts
// the bytes it builds against the run's memory limit and checks the run's
// context every few thousand values (docs/decisions/0108-lua-sizes.md).

const maxDepth = 100

// Bytes a copy counts: a table, and one pair of it (a key and a value).
const (
	tableCost = 64
	pairCost  = 32
)

// plainTable is a table copied out of a Lua state, its pairs in a stable
// order.
type plainTable struct {
	keys, vals []any
}

// notPlain is the error of a value that is not plain data.
type notPlain struct{ typ string }

func (e notPlain) Error() string { return "a " + e.typ }

// walk is what every copy of a run checks as it goes: the bytes it built
// against max, and the run's context every checkEvery values.
type walk struct {
	r     *run
	size  int64
	steps int
}

// add counts n bytes and one value; it returns the run's memory limit
// once the copy is past it (having stopped the run), or the run's stop.
func (w *walk) add(n int64) error {
	w.size += n
	if w.size > w.r.maxMemory {
		w.r.stop(w.r.memErr)
		return w.r.memErr
	}
	w.steps++
	if w.steps%checkEvery == 0 && w.r.ctx.Err() != nil {
		return context.Cause(w.r.ctx)
	}
	return nil
}

// plainCopy copies values out of a Lua state: the values it copies
// share their tables and one count of bytes (all the arguments of one
// fanout: a table passed to every arm is copied once).
type plainCopy struct {
	walk
	done map[*lua.LTable]*plainTable // tables copied
	open map[*lua.LTable]bool        // tables being copied: a cycle
}

func (r *run) newPlainCopy() *plainCopy {
	return &plainCopy{walk: walk{r: r}, done: map[*lua.LTable]*plainTable{}, open: map[*lua.LTable]bool{}}
}

// toPlain copies v out of its state.
func (r *run) toPlain(v lua.LValue) (any, error) { return r.newPlainCopy().toPlain(v) }

// toPlain copies v out of its state.
func (c *plainCopy) toPlain(v lua.LValue) (any, error) { return c.copy(v, 0) }

func (c *plainCopy) copy(v lua.LValue, depth int) (any, error) {
	switch x := v.(type) {
	case *lua.LNilType:
		return nil, nil
	case lua.LBool:
		return bool(x), nil
	case lua.LNumber:
		return float64(x), nil
	case lua.LString:
		return string(x), nil
	case *lua.LTable:
		if t, ok := c.done[x]; ok {
			return t, nil
		}
		if c.open[x] {
			return nil, notPlain{"table that holds itself"}
		}
		if depth >= maxDepth {
			return nil, notPlain{fmt.Sprintf("table nested over %d deep", maxDepth)}
		}
		if err := c.add(tableCost); err != nil {
			return nil, err
		}
		c.open[x] = true
		t := &plainTable{}
		var err error
		x.ForEach(func(k, val lua.LValue) {
			if err != nil {
				return
			}
			if err = c.add(pairCost); err != nil {
				return
			}
			var pk, pv any
			if pk, err = c.copy(k, depth+1); err != nil {
				return
			}
			if pv, err = c.copy(val, depth+1); err != nil {
				return
			}
			t.keys = append(t.keys, pk)
			t.vals = append(t.vals, pv)
		})
		delete(c.open, x)
		if err != nil {
			return nil, err
		}
		c.done[x] = t
		return t, nil
	}
	return nil, notPlain{v.Type().String()}
}

// toLua builds a plain value in L, each table once: a table held twice
// in the copy is one table held twice in L.
func toLua(L *lua.LState, v any) lua.LValue {
	return buildLua(L, v, map[*plainTable]*lua.LTable{})
}

func buildLua(L *lua.LState, v any, built map[*plainTable]*lua.LTable) lua.LValue {
	switch x := v.(type) {
	case nil:
		return lua.LNil
	case bool:
		return lua.LBool(x)
	case float64:
		return lua.LNumber(x)
	case string:
		return lua.LString(x)
	case *plainTable:
		if t, ok := built[x]; ok {
			return t
		}
		t := L.CreateTable(0, len(x.keys))
		built[x] = t
		for i, k := range x.keys {
			t.RawSet(buildLua(L, k, built), buildLua(L, x.vals[i], built))
		}
		return t
	}
	panic(fmt.Sprintf("luahost: toLua of %T", v))
}

// toJSON converts a Lua value to what encoding/json writes: tables whose
// keys are 1..n are arrays, tables with string keys objects; an empty
// table is an empty array, or an empty object when emptyObject. JSON
// holds no shared values, so a table held twice is written twice: the
// walk counts what the tree it builds takes and stops at the run's memory
// limit.
func (r *run) toJSON(v lua.LValue, emptyObject bool) (any, error) {
	w := &walk{r: r}
	return w.json(v, 0, emptyObject)
}

func (w *walk) json(v lua.LValue, depth int, emptyObject bool) (any, error) {
	if err := w.add(jsonCost(v)); err != nil {
		return nil, err
	}
	if depth > maxDepth {
		return nil, fmt.Errorf("a table nested over %d deep", maxDepth)
	}
	switch x := v.(type) {
	case *lua.LNilType:
		return nil, nil
	case lua.LBool:
		return bool(x), nil
	case lua.LNumber:
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("the number %v, which JSON cannot hold", f)
		}
		if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return json.Number(strconv.FormatInt(int64(f), 10)), nil
		}
		return json.Number(strconv.FormatFloat(f, 'g', -1, 64)), nil
	case lua.LString:
		return string(x), nil
	case *lua.LTable:
		n := x.Len()
		count := 0
		allInts := true
		x.ForEach(func(k, _ lua.LValue) {
			count++
			if kn, ok := k.(lua.LNumber); !ok || float64(kn) != math.Trunc(float64(kn)) || kn < 1 || int(kn) > n {
				allInts = false
			}
		})
		if count == 0 {
			if emptyObject {
				return map[string]any{}, nil
			}
			return []any{}, nil
		}
		if allInts && count == n {
			arr := make([]any, n)
			for i := 1; i <= n; i++ {
				e, err := w.json(x.RawGetInt(i), depth+1, false)
				if err != nil {
					return nil, err
				}
				arr[i-1] = e
			}
			return arr, nil
		}
		obj := make(map[string]any, count)
		var err error
		x.ForEach(func(k, val lua.LValue) {
			if err != nil {
				return
			}
			ks, ok := k.(lua.LString)
			if !ok {
				err = fmt.Errorf("a table mixing keys %v (%s) with string keys: a document's tables are arrays (keys 1..n) or objects (string keys)", k, k.Type())
				return
			}
			var e any
			if err = w.add(int64(len(ks)) + 48); err != nil { // a map entry
				return
			}
			if e, err = w.json(val, depth+1, false); err == nil {
				obj[string(ks)] = e
			}
		})
		return obj, err
	}
	return nil, fmt.Errorf("a %s, which a document cannot hold", v.Type())
}

// jsonCost is what v takes in the tree toJSON builds, its elements
// apart: a slot of 16 bytes, and a string's bytes, a number's text, a
// table's map or slice; each is more than the value's JSON text, which
// the tree then becomes.
func jsonCost(v lua.LValue) int64 {
	switch x := v.(type) {
	case lua.LString:
		return int64(len(x)) + 32
	case lua.LNumber:
		return 48
	case *lua.LTable:
		return 64
	}
	return 16
}

// fromJSON builds in L the Lua value of decoded JSON (numbers as
// json.Number); object keys are set in sorted order.
func fromJSON(L *lua.LState, v any) lua.LValue {
	switch x := v.(type) {
	case nil:
		return lua.LNil
	case bool:
		return lua.LBool(x)
	case json.Number:
		f, _ := x.Float64()
		return lua.LNumber(f)
	case float64:
		return lua.LNumber(x)
	case string:
		return lua.LString(x)
	case []any:
		t := L.CreateTable(len(x), 0)
		for i, e := range x {
			t.RawSetInt(i+1, fromJSON(L, e))
		}
		return t
	case map[string]any:
		t := L.CreateTable(0, len(x))
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			t.RawSetString(k, fromJSON(L, x[k]))
		}
		return t
	}
	return lua.LString(fmt.Sprint(v))
}
