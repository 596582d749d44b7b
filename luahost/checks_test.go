package luahost_test

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/luahost"
)

// hostChecks are scripts built to get past the host's own checks, each
// with the error it must end with. The time limits are short so that a
// check that does not stop the script shows as the wrong error; none is
// a measure of speed.
var hostChecks = []struct {
	name, src, err string
	timeout        time.Duration
}{
	{"gfind is the interruptible matcher", `string.gfind(("a"):rep(40), ("(.-)"):rep(8) .. "b")()`,
		"script exceeded its time limit (200ms)", 200 * time.Millisecond},
	{"gfind as a method", `for _ in (("a"):rep(40)):gfind(("(.-)"):rep(8) .. "b") do end`,
		"script exceeded its time limit (200ms)", 200 * time.Millisecond},
	{"gsub replacement past the limit", `local s = ("x"):rep(2^20) s:gsub("^.*$", ("%0"):rep(2^16))`,
		"script exceeded its memory limit (32 MiB)", time.Minute},
	{"gsub replacement of empty matches", `local s = ("x"):rep(2^20) s:gsub("", ("%0"):rep(2^23))`,
		"script exceeded its time limit (200ms)", 200 * time.Millisecond},
	{"table.concat past the end", `table.concat({}, "", 1, 2^53)`,
		"script.lua:1: invalid value (at index 1) in table for 'concat'", time.Minute},
	{"table.concat of a hole", `table.concat({1, 2, nil, 4}, ",", 1, 4)`,
		"script.lua:1: invalid value (at index 3) in table for 'concat'", time.Minute},
	{"table.concat of a table", `table.concat({1, {}})`,
		"script.lua:1: invalid value (at index 2) in table for 'concat'", time.Minute},
	{"table.concat past the limit", `local t = {} for i = 1, 64 do t[i] = ("x"):rep(2^20) end table.concat(t, "", 1, 2^53)`,
		"script exceeded its memory limit (32 MiB)", time.Minute},
	{"tail calls", `local function g(n) return g(n + 1) end g(1)`,
		"script.lua:1: stack overflow (calls nest at most 200 deep)", time.Minute},
	{"tail calls through a method", `local o = {} function o:g(n) return self:g(n + 1) end o:g(1)`,
		"script.lua:1: stack overflow (calls nest at most 200 deep)", time.Minute},
	{"format argument index", `local s = string.format(("%[1]s"):rep(1000), ("x"):rep(2^20))`,
		"script.lua:1: invalid option '%[' to 'format'", time.Minute},
	{"format width from an argument", `local s = string.format("%.*s", 5, "x")`,
		"script.lua:1: invalid option '%*' to 'format'", time.Minute},
	{"math.random(0)", `math.random(0)`,
		"script.lua:1: bad argument #1 to 'random' (interval is empty)", time.Minute},
	{"math.random(3, 1)", `math.random(3, 1)`,
		"script.lua:1: bad argument #2 to 'random' (interval is empty)", time.Minute},
	{"string.rep overflow", `local s = ("xx"):rep(2^62)`,
		"script exceeded its memory limit (32 MiB)", time.Minute},
	{"string.rep past int64", `local s = ("x"):rep(2^63)`,
		"script exceeded its memory limit (32 MiB)", time.Minute},
	{"error object with __tostring", `local x = 1
error(setmetatable({}, {__tostring = function() return "script.lua:2: boom" end}))`,
		"script.lua:2: boom", time.Minute},
	{"error object with __tostring in an arm", `fanout(function() error(setmetatable({}, {__tostring = function() return "boom" end})) end, {})`,
		"script.lua:1: fanout arm 1 failed: boom", time.Minute},
}

// TestHostChecks: each script ends with its own message, and the host
// runs the next script normally.
func TestHostChecks(t *testing.T) {
	for _, c := range hostChecks {
		t.Run(c.name, func(t *testing.T) {
			st := open(t, "memory")
			// A limit far from the watchdog's figure, which counts what
			// earlier tests left on the heap, unless the limit is the
			// point.
			mem := int64(1 << 30)
			if strings.Contains(c.err, "memory limit") {
				mem = 32 << 20
			}
			_, _, err := exec(t, st, c.src, luahost.Config{Timeout: c.timeout, MaxMemory: mem})
			if err == nil || err.Error() != c.err {
				t.Fatalf("error %v, want %q", err, c.err)
			}
			if strings.Contains(c.err, "limit") && !errors.Is(err, satchel.ErrLimitExceeded) {
				t.Errorf("error %v is not ErrLimitExceeded", err)
			}
			out, _, err := exec(t, st, `print("fine")`, luahost.Config{})
			if err != nil || out != "fine\n" {
				t.Fatalf("the run after: %q %v", out, err)
			}
		})
	}
}

// TestGsubBuildsNoMoreThanTheLimit: a replacement that expands past the
// limit is refused as it is built, not once built: the run allocates a
// few times the limit, not the 1 GiB the replacement would take.
func TestGsubBuildsNoMoreThanTheLimit(t *testing.T) {
	st := open(t, "memory")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _, err := exec(t, st, `local s = ("x"):rep(2^14) s:gsub("^.*$", ("%0"):rep(2^16))`, luahost.Config{MaxMemory: 1 << 20})
	runtime.ReadMemStats(&after)
	if err == nil || err.Error() != "script exceeded its memory limit (1 MiB)" {
		t.Fatalf("error %v, want the memory limit", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 256<<20 {
		t.Fatalf("the run allocated %d MiB under a limit of 1 MiB", got>>20)
	}
}

// TestTailCallsStillWork: tail calls are plain calls, so a chain of them
// shorter than the call depth works, and pcall catches the overflow of a
// longer one with Lua's message.
func TestTailCallsStillWork(t *testing.T) {
	st := open(t, "memory")
	out, _, err := exec(t, st, `local function count(n, acc) if n == 0 then return acc end return count(n - 1, acc + n) end
local function g(n) return g(n + 1) end
print(count(150, 0), select(2, pcall(g, 1)))`, luahost.Config{})
	if err != nil || out != "11325\tscript.lua:2: stack overflow\n" {
		t.Fatalf("printed %q, error %v", out, err)
	}
}

// TestRandom: math.random gives Lua 5.1's ranges.
func TestRandom(t *testing.T) {
	st := open(t, "memory")
	out, _, err := exec(t, st, `for i = 1, 1000 do
  local a, b, c = math.random(), math.random(3), math.random(-2, 2)
  assert(a >= 0 and a < 1, a)
  assert(b == math.floor(b) and b >= 1 and b <= 3, b)
  assert(c == math.floor(c) and c >= -2 and c <= 2, c)
end
print(math.random(1), math.random(5, 5), pcall(math.random, 1, 2, 3))`, luahost.Config{})
	if err != nil || out != "1\t5\tfalse\tscript.lua:7: wrong number of arguments\n" {
		t.Fatalf("printed %q, error %v", out, err)
	}
}

// TestSharedTables: a table held many times (t = {t, t} forty times has
// 2^40 paths) is copied once into an arm and out of it, and the copy
// holds it as often as the original; a document, which cannot share, is
// refused by its size; a cycle is refused.
func TestSharedTables(t *testing.T) {
	st := open(t, "memory")
	out, _, err := exec(t, st, `local t = {} for i = 1, 40 do t = {t, t} end
local r = fanout(function(x) return {x, x[1] == x[2]} end, t)[1]
local depth, u = 0, r[1]
while u[1] do assert(u[1] == u[2]) u = u[1] depth = depth + 1 end
print(depth, r[2], r[1] == r[1])`, luahost.Config{Timeout: time.Minute})
	if err != nil || out != "40\ttrue\ttrue\n" {
		t.Fatalf("printed %q, error %v", out, err)
	}
	_, _, err = exec(t, st, `local t = {} for i = 1, 40 do t = {t, t} end
docs.set("notes", {id = "a", rank = 1, tags = t})`, luahost.Config{MaxMemory: 32 << 20, Timeout: time.Minute, Project: project(t)})
	if err == nil || err.Error() != "script exceeded its memory limit (32 MiB)" {
		t.Fatalf("docs.set of a shared table: %v", err)
	}
	_, _, err = exec(t, st, `local t = {} for i = 1, 40 do t = {t, t} end
fanout(function(x) local r = {} for i = 1, 40 do r = {r, r} end return r end, {})
`, luahost.Config{Timeout: time.Minute})
	if err != nil {
		t.Fatalf("an arm returning a shared table: %v", err)
	}
	for _, src := range []string{
		`local t = {} t.self = t fanout(function() end, t)`,
		`local t = {{}} t[1][1] = t fanout(function() end, t)`,
	} {
		_, _, err = exec(t, st, src, luahost.Config{})
		if err == nil || err.Error() != "script.lua:1: bad argument #2 to fanout (arms take plain data; it holds a table that holds itself)" {
			t.Errorf("%s: %v", src, err)
		}
	}
}

// TestConcatBuildsNoMoreThanTheLimit: `..` refuses a string past the
// limit before it builds it (the watchdog, which samples the heap, saw
// `s = s .. s` only after the doubling that crossed the limit, and the
// doublings after it that ran before its next sample).
func TestConcatBuildsNoMoreThanTheLimit(t *testing.T) {
	st := open(t, "memory")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _, err := exec(t, st, `local a = ("x"):rep(2^24) local b = a .. a .. a .. a`, luahost.Config{MaxMemory: 32 << 20})
	runtime.ReadMemStats(&after)
	if err == nil || err.Error() != "script exceeded its memory limit (32 MiB)" {
		t.Fatalf("error %v, want the memory limit", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got >= 64<<20 {
		t.Fatalf("the run allocated %d MiB: the 64 MiB string was built", got>>20)
	}
	_, _, err = exec(t, st, `local s = "x" while true do s = s .. s end`, luahost.Config{MaxMemory: 32 << 20})
	if err == nil || err.Error() != "script exceeded its memory limit (32 MiB)" {
		t.Fatalf("s = s .. s: %v", err)
	}
}

// TestPrintPastTheLimit: a line of print past the limit is refused before
// it is built, so nothing of it is written.
func TestPrintPastTheLimit(t *testing.T) {
	st := open(t, "memory")
	out, _, err := exec(t, st, `local s = ("x"):rep(2^24) print(s, s, s)`, luahost.Config{MaxMemory: 32 << 20})
	if err == nil || err.Error() != "script exceeded its memory limit (32 MiB)" || out != "" {
		t.Fatalf("printed %d bytes, error %v; want nothing and the memory limit", len(out), err)
	}
}
