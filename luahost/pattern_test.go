package luahost_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"

	"github.com/satchel-dev/satchel/luahost"
)

// patternCases are string-library calls whose results the host's matcher
// must give exactly as gopher-lua's own string library does.
var patternCases = []string{
	`string.find("hello world", "o w")`,
	`string.find("hello world", "l+")`,
	`string.find("hello world", "(l+)(o)")`,
	`string.find("hello", "l", 1, true)`,
	`string.find("a.b", ".", 1, true)`,
	`string.find("hello", "xyz")`,
	`string.find("hello", "")`,
	`string.find("hello", "l", -2)`,
	`string.find("  key = value", "^%s*(%w+)%s*=%s*(%w+)$")`,
	`string.match("key=value", "(%w+)=(%w+)")`,
	`string.match("2026-12-01", "(%d+)-(%d+)-(%d+)")`,
	`string.match("hello", "()ll()")`,
	`string.match("THE (quick) fox", "%((%a+)%)")`,
	`string.match("f(a(b)c)d", "%b()")`,
	`string.match("abcabc", "(abc)%1")`,
	`string.match("[x]", "[%[]")`,
	`string.match("a-b", "[a%-]+")`,
	`string.match("x9y", "[^%a]")`,
	`string.match("hello", "h.-o")`,
	`string.match("hello", "h.*")`,
	`string.match("hello", "x?h")`,
	`string.match("line1\nline2", "[^\n]+$")`,
	`string.gsub("hello world", "o", "0")`,
	`string.gsub("hello world", "(%w+)", "<%1>")`,
	`string.gsub("hello world", "%w+", "%0 %0", 1)`,
	`string.gsub("abc", "", "-")`,
	`string.gsub("hello", "l", {l = "L"})`,
	`string.gsub("hello world", "%w+", function(w) return w:upper() end)`,
	`string.gsub("a,b,,c", ",", ";")`,
	`string.gsub("100%", "%%", " percent")`,
	`(function() local t = {} for w in string.gmatch("one two  three", "%a+") do t[#t+1] = w end return table.concat(t, "|") end)()`,
	`(function() local t = {} for k, v in string.gmatch("a=1, b=2", "(%w+)=(%w+)") do t[#t+1] = k .. v end return table.concat(t, "|") end)()`,
	`(function() local n = 0 for _ in string.gmatch("abc", "") do n = n + 1 end return n end)()`,
	`("x"):rep(3)`,
	`string.format("%5.2f|%-3s|%d", 3.14159, "a", 42)`,
}

// lua51 are calls where gopher-lua's string library departs from Lua
// 5.1's, with Lua 5.1's results, which the host gives.
var lua51 = map[string]string{
	`string.find("hello", "", 10)`:              "string:2|number:6|number:5|", // init clamps to the end
	`string.match("THE quick", "%f[%a]%a+", 4)`: "string:1|string:quick|",      // the frontier pattern
}

// reference evaluates expr with gopher-lua's own libraries.
func reference(expr string) string {
	L := lua.NewState()
	defer L.Close()
	if err := L.DoString("return tostring(select('#', " + expr + ")), " + expr); err != nil {
		return "error"
	}
	return results(L)
}

func results(L *lua.LState) string {
	var b strings.Builder
	for i := 1; i <= L.GetTop(); i++ {
		fmt.Fprintf(&b, "%s:%s|", L.Get(i).Type(), L.Get(i).String())
	}
	return b.String()
}

func TestPatternsAsGopherLua(t *testing.T) {
	cases := map[string]string{}
	for _, expr := range patternCases {
		cases[expr] = reference(expr)
	}
	for expr, want := range lua51 {
		cases[expr] = want
	}
	for expr, want := range cases {
		s, err := luahost.Compile("p.lua", `local function pack(...) return {n = select('#', ...), ...} end
local r = pack(`+expr+`)
local out = {"string:" .. r.n .. "|"}
for i = 1, r.n do out[#out + 1] = type(r[i]) .. ":" .. tostring(r[i]) .. "|" end
print(table.concat(out))`)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		st := open(t, "memory")
		if _, err := s.Run(context.Background(), luahost.Config{Store: st, Stdout: &out}); err != nil {
			t.Errorf("%s: %v", expr, err)
			continue
		}
		got := strings.TrimSuffix(out.String(), "\n")
		if got != want {
			t.Errorf("%s:\n got %s\nwant %s", expr, got, want)
		}
	}
}

// FuzzPattern: any subject and pattern either match or raise a Lua error;
// the matcher never panics the host.
func FuzzPattern(f *testing.F) {
	for _, c := range []struct{ s, p string }{{"hello", "l+"}, {"f(a)", "%b()"}, {"x", "[%"}, {"ab", "(a)%2"}, {"", "%f[%w]"}} {
		f.Add(c.s, c.p)
	}
	st := open(f, "memory")
	s, err := luahost.Compile("p.lua", `local s, p = arg[1], arg[2]
pcall(string.find, s, p) pcall(string.match, s, p) pcall(string.gsub, s, p, "%0")
pcall(function() for _ in string.gmatch(s, p) do end end)`)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, subject, pattern string) {
		if len(subject) > 200 || len(pattern) > 40 {
			return
		}
		if _, err := s.Run(context.Background(), luahost.Config{Store: st, Args: []string{subject, pattern}, Timeout: 2e9}); err != nil && !strings.Contains(err.Error(), "time limit") {
			t.Fatalf("find(%q, %q): %v", subject, pattern, err)
		}
	})
}
