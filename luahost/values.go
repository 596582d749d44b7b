package luahost

import (
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

const maxDepth = 100

// plainTable is a table copied out of a Lua state, its pairs in a stable
// order.
type plainTable struct {
	keys, vals []any
}

// notPlain is the error of a value that is not plain data.
type notPlain struct{ typ string }

func (e notPlain) Error() string { return "a " + e.typ }

// toPlain copies v out of its state.
func toPlain(v lua.LValue) (any, error) {
	return toPlainDepth(v, 0, map[*lua.LTable]bool{})
}

func toPlainDepth(v lua.LValue, depth int, seen map[*lua.LTable]bool) (any, error) {
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
		if seen[x] {
			return nil, notPlain{"table that holds itself"}
		}
		if depth >= maxDepth {
			return nil, notPlain{fmt.Sprintf("table nested over %d deep", maxDepth)}
		}
		seen[x] = true
		defer delete(seen, x)
		var t plainTable
		var err error
		x.ForEach(func(k, val lua.LValue) {
			if err != nil {
				return
			}
			var pk, pv any
			if pk, err = toPlainDepth(k, depth+1, seen); err != nil {
				return
			}
			if pv, err = toPlainDepth(val, depth+1, seen); err != nil {
				return
			}
			t.keys = append(t.keys, pk)
			t.vals = append(t.vals, pv)
		})
		return &t, err
	}
	return nil, notPlain{v.Type().String()}
}

// toLua builds a plain value in L.
func toLua(L *lua.LState, v any) lua.LValue {
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
		t := L.CreateTable(0, len(x.keys))
		for i, k := range x.keys {
			t.RawSet(toLua(L, k), toLua(L, x.vals[i]))
		}
		return t
	}
	panic(fmt.Sprintf("luahost: toLua of %T", v))
}

// toJSON converts a Lua value to what encoding/json writes: tables whose
// keys are 1..n are arrays, tables with string keys objects; an empty
// table is an empty array, or an empty object when emptyObject.
func toJSON(v lua.LValue, depth int, emptyObject bool) (any, error) {
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
				e, err := toJSON(x.RawGetInt(i), depth+1, false)
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
			if e, err = toJSON(val, depth+1, false); err == nil {
				obj[string(ks)] = e
			}
		})
		return obj, err
	}
	return nil, fmt.Errorf("a %s, which a document cannot hold", v.Type())
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
