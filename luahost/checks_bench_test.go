package luahost_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/satchel-dev/satchel/luahost"
)

// ordinary is a script of the kind agents run: it formats lines with
// `..` and string.format, joins them with table.concat, rewrites them
// with gsub, scans them with gmatch and builds tables; every `..`,
// table.concat and gsub of it goes through the host's checks.
const ordinary = `local n = tonumber(arg[1])
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
end
print(total)`

// BenchmarkOrdinaryScript: one op is one report of 20 lines
// (docs/decisions/0108-lua-sizes.md).
func BenchmarkOrdinaryScript(b *testing.B) {
	st := open(b, "memory")
	s, err := luahost.Compile("ordinary.lua", ordinary)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	if _, err := s.Run(context.Background(), luahost.Config{Store: st, Timeout: 1 << 40, Args: []string{strconv.Itoa(b.N)}}); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkConcat: one op is one `..` of three operands, a number among
// them, the worst case of the host's `..` against the instruction.
func BenchmarkConcat(b *testing.B) {
	st := open(b, "memory")
	s, err := luahost.Compile("concat.lua", `local s for i = 1, tonumber(arg[1]) do s = "f" .. (i % 100) .. ".md" end`)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	if _, err := s.Run(context.Background(), luahost.Config{Store: st, Timeout: 1 << 40, Args: []string{strconv.Itoa(b.N)}}); err != nil {
		b.Fatal(err)
	}
}
