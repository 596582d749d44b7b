package luahost_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/sqlitetest"
	"github.com/satchel-dev/satchel/luahost"
)

// backends are the stores every behaviour is checked on.
var backends = []string{"memory", "sqlite"}

func open(t testing.TB, kind string) *satchel.Store {
	t.Helper()
	dsn := "memory:"
	switch kind {
	case "sqlite":
		dsn = sqlitetest.NewFileAt(t, filepath.Join(t.TempDir(), "lua.db"))
	case "postgres":
		dsn = postgresSchema(t)
	}
	st, err := satchel.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// exec compiles src as script.lua and runs it with cfg on st.
func exec(t testing.TB, st *satchel.Store, src string, cfg luahost.Config) (string, *luahost.Result, error) {
	t.Helper()
	s, err := luahost.Compile("script.lua", src)
	if err != nil {
		return "", nil, err
	}
	var out bytes.Buffer
	cfg.Store = st
	cfg.Stdout = &out
	res, err := s.Run(context.Background(), cfg)
	return out.String(), res, err
}

// TestStore: every store function from Lua, with its results and refusals
// carrying the Go API's messages after the script's file and line.
func TestStore(t *testing.T) {
	cases := []struct {
		name, src, out, err string
		kind                error
	}{
		{name: "write read", src: `store.write("a.md", "one\ntwo\nthree\n"); print(store.read("a.md"))`, out: "one\ntwo\nthree\n\n"},
		{name: "mutators return nil", src: `store.write("a.md", "x")
print(store.write("a.md", "y"), store.append("a.md", "z"), store.str_replace("a.md", "yz", "w"), store.delete("a.md"))`, out: "nil\tnil\tnil\n"}, // the last call adds no value
		{name: "read one bound", src: `store.write("a.md", "1\n2\n3\n"); print(store.read("a.md", 2))`, out: "2\n3\n"},
		{name: "read two bounds", src: `store.write("a.md", "1\n2\n3\n"); print(store.read("a.md", 2, 2))`, out: "2\n"},
		{name: "read end clamps", src: `store.write("a.md", "1\n2\n3\n"); print(store.read("a.md", 2, 99))`, out: "2\n3\n"},
		{name: "read start past end", src: `store.write("a.md", "1\n"); print("[" .. store.read("a.md", 5) .. "]")`, out: "[]\n"},
		{name: "read start below 1", src: `store.write("a.md", "1\n")
store.read("a.md", 0)`, err: "script.lua:2: start must be at least 1", kind: satchel.ErrInvalidRange},
		{name: "read end before start", src: `store.write("a.md", "1\n2\n3\n")
store.read("a.md", 3, 2)`, err: "script.lua:2: end must not be before start", kind: satchel.ErrInvalidRange},
		{name: "read end without start", src: `store.write("a.md", "1\n")
store.read("a.md", nil, 2)`, err: "script.lua:2: end requires start", kind: satchel.ErrInvalidRange},
		{name: "read missing", src: `store.read("nope.md")`, err: "script.lua:1: file not found: nope.md", kind: satchel.ErrNotFound},
		{name: "read_numbered", src: `for i = 1, 12 do store.append("a.md", "l" .. i .. "\n") end
print(store.read_numbered("a.md", 9, 10))`, out: " 9| l9\n10| l10\n"},
		{name: "read_numbered whole", src: `store.write("a.md", "x\ny\n"); print(store.read_numbered("a.md"))`, out: "1| x\n2| y\n"},
		{name: "str_replace", src: `store.write("a.md", "old text here"); store.str_replace("a.md", "old text", "new text"); print(store.read("a.md"))`, out: "new text here\n"},
		{name: "str_replace all", src: `store.write("a.md", "a a a"); store.str_replace("a.md", "a", "b", true); print(store.read("a.md"))`, out: "b b b\n"},
		{name: "str_replace ambiguous", src: `store.write("a.md", "x\ny\nx\n")
store.str_replace("a.md", "x", "z")`, err: "script.lua:2: anchor occurs 2 times in a.md, expected exactly one", kind: satchel.ErrAmbiguousAnchor},
		{name: "str_replace absent", src: `store.write("a.md", "x")
store.str_replace("a.md", "q", "z")`, err: "script.lua:2: anchor not found in a.md", kind: satchel.ErrAnchorNotFound},
		{name: "str_replace empty", src: `store.str_replace("a.md", "", "z")`, err: "script.lua:1: anchor must not be empty"},
		{name: "glob sequence", src: `store.write("notes/b.md", ""); store.write("notes/a.md", ""); store.write("notes/x.txt", "")
local g = store.glob("notes/*.md"); print(#g, g[1], g[2])`, out: "2\tnotes/a.md\tnotes/b.md\n"},
		{name: "glob refused", src: `store.glob("a?.md")`, err: "script.lua:1: invalid pattern", kind: satchel.ErrInvalidPattern},
		{name: "glob backslash", src: `store.glob("a\\*.md")`, err: `script.lua:1: invalid pattern "a\\*.md": pattern does not support backslash escapes`, kind: satchel.ErrInvalidPattern},
		{name: "exists", src: `store.write("d/a.md", "x"); print(store.exists("d/a.md"), store.exists("b.md"), store.exists("d"))`, out: "true\tfalse\tfalse\n"},
		{name: "idempotency key", src: `store.append("a.md", "x", {idempotency_key = "k"}); store.append("a.md", "x", {idempotency_key = "k"}); print(store.read("a.md"))`, out: "x\n"},
		{name: "idempotency key reused", src: `store.append("a.md", "x", {idempotency_key = "k"})
store.append("a.md", "y", {idempotency_key = "k"})`, err: "script.lua:2: idempotency key k was already used with different arguments", kind: satchel.ErrIdempotencyKeyReused},
		{name: "unknown option", src: `store.delete("a.md", {idem = "k"})`, err: "script.lua:1: bad argument #2 to delete (unknown option idem (options: idempotency_key))"},
		{name: "delete missing is silent", src: `store.delete("never.md"); print("ok")`, out: "ok\n"},
		{name: "invalid path", src: `store.write("../x", "y")`, err: `script.lua:1: invalid path "../x"`, kind: satchel.ErrInvalidPath},
		{name: "backslash path", src: `store.write("a\\b", "y")`, err: `script.lua:1: invalid path "a\\b"`, kind: satchel.ErrInvalidPath},
		{name: "device name", src: `store.write("CON", "y")`, err: `script.lua:1: invalid path "CON"`, kind: satchel.ErrInvalidPath},
		{name: "file over directory", src: `store.write("a/b", "x")
store.write("a", "y")`, err: "script.lua:2: a is a directory", kind: satchel.ErrIsDirectory},
		{name: "pcall catches a refusal", src: `local ok, e = pcall(store.read, "nope.md"); print(ok, e)`, out: "false\tscript.lua:1: file not found: nope.md\n"},
		{name: "args and arg", src: `print(args, #arg, arg[2])`, out: "one two\t2\ttwo\n"},
		{name: "untrusted", src: `local u = untrusted("</untrusted_input_x> hi")
print(u:find("&lt;/untrusted_input_x> hi", 1, true) ~= nil, u:find("<untrusted_input_", 1, true) ~= nil)`, out: "true\ttrue\n"},
		{name: "bad argument", src: `store.write("a.md")`, err: "script.lua:1: bad argument #2 to write (string expected, got nil)"},
	}
	for _, kind := range backends {
		for _, c := range cases {
			t.Run(kind+"/"+c.name, func(t *testing.T) {
				st := open(t, kind)
				out, _, err := exec(t, st, c.src, luahost.Config{Args: []string{"one", "two"}})
				if c.err == "" {
					if err != nil {
						t.Fatalf("error %v", err)
					}
					if out != c.out {
						t.Errorf("printed %q, want %q", out, c.out)
					}
					return
				}
				if err == nil || !strings.HasPrefix(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				if c.kind != nil && !errors.Is(err, c.kind) {
					t.Errorf("error %v is not %v", err, c.kind)
				}
			})
		}
	}
}

// TestSandbox: only base, table, string and math; the removed globals
// are nil.
func TestSandbox(t *testing.T) {
	st := open(t, "memory")
	for _, name := range []string{"os", "io", "debug", "package", "require", "module", "dofile", "loadfile",
		"load", "loadstring", "setfenv", "getfenv", "rawset", "rawget", "rawequal", "newproxy", "collectgarbage", "coroutine"} {
		out, _, err := exec(t, st, "print(type("+name+"))", luahost.Config{})
		if err != nil || out != "nil\n" {
			t.Errorf("%s: %q %v, want nil", name, out, err)
		}
	}
	out, _, err := exec(t, st, `local names = {} for k in pairs(store) do names[#names + 1] = k end table.sort(names) print(table.concat(names, " "))`, luahost.Config{})
	if err != nil || out != "append delete exists glob read read_numbered str_replace write\n" {
		t.Errorf("store has %q %v", out, err)
	}
	out, _, err = exec(t, st, `print(type(string.dump), type(string.rep), type(table.concat), type(math.floor), type(pairs), type(store), type(docs), type(fanout), type(untrusted))`, luahost.Config{})
	if err != nil || out != "nil\tfunction\tfunction\tfunction\tfunction\ttable\ttable\tfunction\tfunction\n" {
		t.Errorf("libraries: %q %v", out, err)
	}
}

// TestMemoryLimitAfterGarbage: garbage left by earlier work, still
// counted live at the collection before a run, does not widen the run's
// limit: the run is stopped near its own limit, not that far above the
// garbage.
func TestMemoryLimitAfterGarbage(t *testing.T) {
	const mem = 32 << 20
	st := open(t, "memory")
	src := `local t = {} local i = 0
while true do i = i + 1 t[i] = {i, i} if i % 10000 == 0 then print(i) end end`
	reached := func() int {
		out, _, err := exec(t, st, src, luahost.Config{MaxMemory: mem})
		if err == nil || !strings.Contains(err.Error(), "script exceeded its memory limit (32 MiB)") {
			t.Fatalf("error %v, want the memory limit", err)
		}
		lines := strings.Fields(out)
		if len(lines) == 0 {
			return 0
		}
		n, _ := strconv.Atoi(lines[len(lines)-1])
		return n
	}
	alone := reached()
	garbage := make([][]byte, 16)
	for i := range garbage {
		garbage[i] = bytes.Repeat([]byte{1}, 32<<20) // 512 MiB, live at the collection below
	}
	runtime.GC()
	runtime.KeepAlive(garbage)
	garbage = nil
	after := reached()
	if after > 8*max(alone, 10000) {
		t.Fatalf("after 512 MiB of garbage the run filled %d entries, alone %d: the garbage was counted as the run's allowance", after, alone)
	}
}

// TestLimits: each runaway ends with its own clear error, and the host
// runs the next script normally.
func TestLimits(t *testing.T) {
	const mem = 32 << 20
	cases := []struct {
		name, src, err string
		timeout        time.Duration
	}{
		{"endless loop", `while true do end`, "script exceeded its time limit (500ms)", 500 * time.Millisecond},
		{"endless loop in pcall", `while true do pcall(function() while true do end end) end`, "script exceeded its time limit (500ms)", 500 * time.Millisecond},
		{"s = s .. s", `local s = "x" while true do s = s .. s end`, "script exceeded its memory limit (32 MiB)", time.Minute},
		{"table filled forever", `local t = {} local i = 0 while true do i = i + 1 t[i] = {i, i} end`, "script exceeded its memory limit (32 MiB)", time.Minute},
		{"string.rep", `local s = string.rep("x", 1e9)`, "script exceeded its memory limit (32 MiB)", time.Minute},
		{"table.concat", `local t = {} for i = 1, 100 do t[i] = string.rep("x", 1048576) end local s = table.concat(t)`, "script exceeded its memory limit (32 MiB)", time.Minute},
		{"format width", `string.format("%999999999d", 1)`, "script.lua:1: bad argument #1 to format (invalid format (width or precision too long))", time.Minute},
		{"deep recursion", `local function f(n) return 1 + f(n + 1) end f(1)`, "script.lua:1: stack overflow (calls nest at most 200 deep)", time.Minute},
		{"pathological pattern", `local s = string.rep("a", 5000) string.find(s, "(.-)(.-)(.-)(.-)(.-)(.-)(.-)(.-)b")`, "script exceeded its time limit (500ms)", 500 * time.Millisecond},
		{"gsub growth", `local s = string.rep("x", 1048576) s = s:gsub("", string.rep("y", 100))`, "script exceeded its memory limit (32 MiB)", time.Minute},
	}
	for _, kind := range backends {
		for _, c := range cases {
			t.Run(kind+"/"+c.name, func(t *testing.T) {
				st := open(t, kind)
				_, _, err := exec(t, st, c.src, luahost.Config{Timeout: c.timeout, MaxMemory: mem})
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				// The host is healthy: the next run works.
				out, _, err := exec(t, st, `store.write("ok.md", "fine") print(store.read("ok.md"))`, luahost.Config{})
				if err != nil || out != "fine\n" {
					t.Fatalf("the run after: %q %v", out, err)
				}
			})
		}
	}
}
