package luahost_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/luahost"
)

func TestFanout(t *testing.T) {
	cases := []struct {
		name, src, out, err string
		kind                error
	}{
		{name: "results in order", src: `
local r = fanout(function(t, i) return {i = i, twice = t.n * 2} end, {n = 1}, {n = 2}, {n = 3})
for i, v in ipairs(r) do print(v.i, v.twice) end`, out: "1\t2\n2\t4\n3\t6\n"},
		{name: "upvalues are nil", src: `
local secret = "hidden"
local r = fanout(function(t) return tostring(secret) end, {})
print(r[1])`, out: "nil\n"},
		{name: "arms see the globals", src: `
local r = fanout(function(t, i) store.write("arm" .. i .. ".md", t.text) return type(string.rep) end, {text = "a"}, {text = "b"})
print(r[1], store.read("arm1.md"), store.read("arm2.md"))`, out: "function\ta\tb\n"},
		{name: "appends are legal", src: `
fanout(function(t) for k = 1, 20 do store.append("log.txt", t.tag .. "\n") end end, {tag = "a"}, {tag = "b"}, {tag = "c"})
print(#store.read("log.txt"))`, out: "120\n"},
		{name: "write-write race", src: `fanout(function(t) store.write("same.md", t.v) end, {v = "1"}, {v = "2"})`,
			err: "write-write race on same.md: another arm of the same fanout already wrote it", kind: satchel.ErrWriteRace},
		{name: "no table", src: `fanout(function() end)`, err: "script.lua:1: fanout(fn) needs at least one argument table: fanout(fn, t1, t2, ...)"},
		{name: "not a table", src: `fanout(function() end, 3)`, err: "script.lua:1: bad argument #2 to fanout (table expected, got number)"},
		{name: "returns a function", src: `fanout(function(t, i) if i == 2 then return print end return 1 end, {}, {})`,
			err: "script.lua:1: fanout arm 2 returned a function; arms return plain data"},
		{name: "first error in arm order", src: `fanout(function(t, i) if i > 1 then error("arm " .. i .. " broke") end end, {}, {}, {})`,
			err: "script.lua:1: fanout arm 2 failed: script.lua:1: arm 2 broke"},
		{name: "nesting", src: `
local function nest(t, i) return fanout(function(t) return t.d end, {d = t.d + 1})[1] end
print(fanout(nest, {d = 1})[1])`, out: "2\n"},
		{name: "nesting 8 deep", src: nested(8), out: "ok\n"},
		{name: "nesting too deep", src: nested(9), err: "fanout nests at most 8 deep"},
		{name: "argument copied in", src: `
local arg1 = {list = {1, 2, 3}}
fanout(function(t) t.list[1] = 99 end, arg1)
print(arg1.list[1])`, out: "1\n"},
	}
	for _, kind := range backends {
		for _, c := range cases {
			t.Run(kind+"/"+c.name, func(t *testing.T) {
				st := open(t, kind)
				out, _, err := exec(t, st, c.src, luahost.Config{})
				if c.err == "" {
					if err != nil || out != c.out {
						t.Fatalf("printed %q, error %v; want %q", out, err, c.out)
					}
					return
				}
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				if c.kind != nil && !errors.Is(err, c.kind) {
					t.Errorf("error %v is not %v", err, c.kind)
				}
			})
		}
	}
}

// TestFanoutConcurrent: the arms meet at a rendezvous, which deadlocks
// (and the run times out) if they run one after another.
func TestFanoutConcurrent(t *testing.T) {
	st := open(t, "memory")
	src := `
local function meet(t, i)
  store.append("here.txt", i .. "\n")
  while select(2, store.read("here.txt"):gsub("\n", "")) < t.n do end
  return i
end
local r = fanout(meet, {n = 4}, {n = 4}, {n = 4}, {n = 4})
print(#r)`
	out, _, err := exec(t, st, src, luahost.Config{FanoutMax: 4})
	if err != nil || out != "4\n" {
		t.Fatalf("printed %q, error %v", out, err)
	}
	// With one arm at a time the rendezvous cannot happen.
	_, _, err = exec(t, st, strings.Replace(src, "here.txt", "there.txt", -1), luahost.Config{FanoutMax: 1, Timeout: 300e6})
	if err == nil || !strings.Contains(err.Error(), "time limit") {
		t.Fatalf("with --fanout-max 1: %v, want the time limit", err)
	}
}

// nested is a script whose fanouts nest n deep.
func nested(n int) string {
	src := "return 1"
	for i := 0; i < n; i++ {
		src = "return fanout(function() " + src + " end, {})"
	}
	return "local function f() " + src + " end f() print('ok')"
}
