package luahost

import (
	"context"
	"strconv"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"

	"github.com/satchel-dev/satchel"
)

// everywhere has `..` and tail calls in every place a statement or an
// expression can hold them.
const everywhere = `local a, b = "x" .. 1, {["k" .. 2] = "v" .. 3, "w" .. 4}
a = a .. b[1]
b["k" .. 5] = a .. "y"
print(a .. "z")
do local c = a .. a end
while a .. "" == "" do end
repeat local d = 1 until ("" .. a) ~= nil
if a .. "1" == "" then a = a .. "2" elseif a .. "3" == "" then a = a .. "4" else a = a .. "5" end
for i = #("a" .. "b"), #("c" .. "d"), #("e" .. "f") do a = a .. i end
for k, v in pairs({a .. "g"}) do a = a .. k .. v end
local function f(...) return ... .. "h" end
function b.m(x) return f(x .. "i") end
function b:n(x) return self.m(x .. "j") end
local g = function(x) return (x .. "k"):upper() end
local h = not (a .. "" == "") and -#(a .. "l") + 1 < #(a .. "m")
return f(a) .. g("n"), b:n("o")`

// opcodes counts the instructions of p and its functions with opcode op.
func opcodes(p *lua.FunctionProto, op int) int {
	n := 0
	for _, inst := range p.Code {
		if int(inst>>26) == op {
			n++
		}
	}
	for _, f := range p.FunctionPrototypes {
		n += opcodes(f, op)
	}
	return n
}

// TestCompiledWithoutConcatOrTailCall: Compile leaves no `..` instruction
// (each is a call of the host's concatenation) and no tail call (each is
// a call), wherever the source has them.
func TestCompiledWithoutConcatOrTailCall(t *testing.T) {
	s, err := Compile("e.lua", everywhere)
	if err != nil {
		t.Fatal(err)
	}
	if n := opcodes(s.proto, lua.OP_CONCAT); n != 0 {
		t.Errorf("%d concatenation instructions left", n)
	}
	if n := opcodes(s.proto, lua.OP_TAILCALL); n != 0 {
		t.Errorf("%d tail calls left", n)
	}
}

// BenchmarkConcatHook: the same scripts with `..` compiled as gopher-lua's
// instruction and as the host's call, side by side (with -count, the two
// alternate): a loop of `..` alone, and a script of ordinary work.
func BenchmarkConcatHook(b *testing.B) {
	scripts := map[string]string{
		"concat": `local s for i = 1, tonumber(arg[1]) do s = "f" .. (i % 100) .. ".md" end`,
		"ordinary": `local n = tonumber(arg[1])
local total = 0
for i = 1, n do
  local lines = {}
  for j = 1, 20 do
    lines[#lines + 1] = "- item " .. j .. ": " .. string.format("%5.2f", j / 3) .. " (" .. (j % 2 == 0 and "even" or "odd") .. ")"
  end
  local text = table.concat(lines, "\n")
  text = text:gsub("item", "entry")
  for w in text:gmatch("%a+") do total = total + #w end
  local t = {name = "report " .. i, tags = {"a", "b"}, size = #text}
end`,
	}
	st, err := satchel.Open(context.Background(), "memory:")
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	for _, name := range []string{"concat", "ordinary"} {
		for _, hooked := range []bool{false, true} {
			chunk, err := parse.Parse(strings.NewReader(scripts[name]), name)
			if err != nil {
				b.Fatal(err)
			}
			label := name + "/instruction"
			if hooked {
				hookConcat(chunk)
				label = name + "/host"
			}
			proto, err := lua.Compile(chunk, name)
			if err != nil {
				b.Fatal(err)
			}
			noTailCalls(proto)
			s := &Script{Name: name, proto: proto}
			b.Run(label, func(b *testing.B) {
				if _, err := s.Run(context.Background(), Config{Store: st, Timeout: 1 << 40, Args: []string{strconv.Itoa(b.N)}}); err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}
