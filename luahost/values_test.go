package luahost

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// testRun is a run for the walks alone: no store, the given limit.
func testRun(max int64) *run {
	ctx, stop := context.WithCancelCause(context.Background())
	return &run{ctx: ctx, stop: stop, maxMemory: max,
		memErr: limitError("script exceeded its memory limit (%s)", formatBytes(max))}
}

// graph builds, from data, up to 16 tables holding each other and
// scalars: each three bytes set table a's key k to table b, or to a
// scalar. It returns the tables and, for each, the tables it holds.
func graph(L *lua.LState, data []byte) ([]*lua.LTable, [][]int) {
	n := 1
	if len(data) > 0 {
		n = int(data[0])%16 + 1
		data = data[1:]
	}
	ts := make([]*lua.LTable, n)
	for i := range ts {
		ts[i] = L.NewTable()
	}
	for ; len(data) >= 3; data = data[3:] {
		a, k, b := int(data[0])%n, lua.LNumber(data[1]%8), int(data[2])
		switch {
		case b < 128:
			ts[a].RawSet(k, ts[b%n])
		case b < 192:
			ts[a].RawSet(k, lua.LString(string(rune('a'+b%26))))
		default:
			ts[a].RawSet(k, lua.LNumber(b))
		}
	}
	holds := make([][]int, n)
	for i, t := range ts {
		t.ForEach(func(_, v lua.LValue) {
			for j, u := range ts {
				if v == u {
					holds[i] = append(holds[i], j)
				}
			}
		})
	}
	return ts, holds
}

// cyclic says whether a cycle is reachable from table 0.
func cyclic(holds [][]int) bool {
	state := make([]int, len(holds)) // 0 unseen, 1 open, 2 done
	var visit func(int) bool
	visit = func(i int) bool {
		if state[i] == 1 {
			return true
		}
		if state[i] == 2 {
			return false
		}
		state[i] = 1
		for _, j := range holds[i] {
			if visit(j) {
				return true
			}
		}
		state[i] = 2
		return false
	}
	return visit(0)
}

// same says whether a and b hold the same values with the same sharing:
// m maps a's tables to b's, one to one.
func same(a, b lua.LValue, m map[*lua.LTable]*lua.LTable, back map[*lua.LTable]*lua.LTable) bool {
	ta, ok := a.(*lua.LTable)
	if !ok {
		return a == b
	}
	tb, ok := b.(*lua.LTable)
	if !ok {
		return false
	}
	if u, ok := m[ta]; ok {
		return u == tb
	}
	if _, ok := back[tb]; ok {
		return false
	}
	m[ta], back[tb] = tb, ta
	n, eq := 0, true
	ta.ForEach(func(k, v lua.LValue) {
		n++
		eq = eq && same(v, tb.RawGet(k), m, back)
	})
	tb.ForEach(func(_, _ lua.LValue) { n-- })
	return eq && n == 0
}

// FuzzPlainCopy: any graph of tables is copied with its sharing (each
// table once, held as often as in the original), or refused as a cycle;
// its JSON is built or refused by size; nothing panics.
func FuzzPlainCopy(f *testing.F) {
	f.Add([]byte{0})
	f.Add([]byte{1, 0, 1, 1, 0, 2, 1})                  // 0 holds 1 twice
	f.Add([]byte{0, 0, 0, 0})                           // a table that holds itself
	f.Add([]byte{2, 0, 0, 1, 1, 0, 2, 1, 1, 2, 0, 130}) // a chain with a scalar
	f.Add([]byte{15, 0, 0, 1, 0, 1, 1, 1, 0, 2, 1, 1, 2, 2, 0, 3, 2, 1, 3, 3, 0, 4, 3, 1, 4, 4, 0, 5, 4, 1, 5})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 300 {
			return
		}
		L := lua.NewState(lua.Options{SkipOpenLibs: true})
		defer L.Close()
		ts, holds := graph(L, data)
		r := testRun(1 << 20)
		v, err := r.toPlain(ts[0])
		if cyclic(holds) {
			var np notPlain
			if !errors.As(err, &np) || np.typ != "table that holds itself" {
				t.Fatalf("a cycle copied: %v", err)
			}
			return
		}
		if err != nil {
			t.Fatalf("copy: %v", err)
		}
		L2 := lua.NewState(lua.Options{SkipOpenLibs: true})
		defer L2.Close()
		if !same(ts[0], toLua(L2, v), map[*lua.LTable]*lua.LTable{}, map[*lua.LTable]*lua.LTable{}) {
			t.Fatal("the copy differs from the original")
		}
		j, err := testRun(1<<16).toJSON(ts[0], false)
		if err != nil {
			return // refused by its size or its shape
		}
		b, err := json.Marshal(j)
		if err != nil {
			t.Fatalf("json: %v", err)
		}
		if len(b) > 1<<16 {
			t.Fatalf("a document of %d bytes built under a limit of 64 KiB", len(b))
		}
	})
}

// TestPlainCopyShared: one copy of several values (a fanout's arguments)
// copies a table they share once, and counts their bytes together.
func TestPlainCopyShared(t *testing.T) {
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer L.Close()
	table := func() *lua.LTable {
		u := L.NewTable()
		for i := 1; i <= 1000; i++ {
			u.RawSetInt(i, lua.LNumber(i))
		}
		return u
	}
	shared := table()
	c := testRun(1 << 20).newPlainCopy()
	a, err := c.toPlain(shared)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := c.toPlain(shared); err != nil || b != a {
		t.Fatalf("the second copy of one table: %p, %v; want the first, %p", b, err, a)
	}
	c = testRun(48 << 10).newPlainCopy() // room for one table of 1,000 pairs, not two
	if _, err := c.toPlain(table()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.toPlain(table()); err == nil || err.Error() != "script exceeded its memory limit (48 KiB)" {
		t.Fatalf("two tables past the limit together: %v", err)
	}
}
