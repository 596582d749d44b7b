package luahost_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel/luahost"
)

// content7K are two 7 KiB files, alternated so that every write changes
// the file (a write of the same content commits nothing).
var content7K = [2]string{strings.Repeat("abcdefg\n", 7<<10/8), strings.Repeat("gfedcba\n", 7<<10/8)}

// BenchmarkWrite: store.write from Lua against the same write from Go
// (Workspace.Write), 7 KiB each, over 100 paths.
func BenchmarkWrite(b *testing.B) {
	for _, kind := range backends {
		b.Run(kind+"/go", func(b *testing.B) {
			st := open(b, kind)
			ctx := context.Background()
			ws, _ := st.Workspace(ctx, "default", "main")
			b.SetBytes(7 << 10)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := ws.Write(ctx, "f"+strconv.Itoa(i%100)+".md", content7K[i%2]); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(kind+"/lua", func(b *testing.B) {
			st := open(b, kind)
			s, err := luahost.Compile("bench.lua", `local n, a, b = tonumber(arg[1]), arg[2], arg[3]
for i = 0, n - 1 do store.write("f" .. (i % 100) .. ".md", i % 2 == 0 and a or b) end`)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(7 << 10)
			b.ResetTimer()
			if _, err := s.Run(context.Background(), luahost.Config{Store: st, Timeout: 1 << 40,
				Args: []string{strconv.Itoa(b.N), content7K[0], content7K[1]}}); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// BenchmarkStart: a run from Run to the script's first line, on SQLite
// (a new Lua state, the sandbox, the globals, the head read).
func BenchmarkStart(b *testing.B) {
	st := open(b, "sqlite")
	s, err := luahost.Compile("start.lua", `local first = true`)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.Run(ctx, luahost.Config{Store: st}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFanout8: one fanout of 8 arms, each appending to one file and
// returning a table.
func BenchmarkFanout8(b *testing.B) {
	for _, kind := range backends {
		b.Run(kind, func(b *testing.B) {
			st := open(b, kind)
			tables := strings.Repeat("{}, ", 7) + "{}"
			s, err := luahost.Compile("fanout.lua", fmt.Sprintf(`for i = 1, tonumber(arg[1]) do
  fanout(function(t, i) store.append("log.txt", "arm " .. i .. "\n") return {i = i} end, %s)
end`, tables))
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			if _, err := s.Run(context.Background(), luahost.Config{Store: st, Timeout: 1 << 40, Args: []string{strconv.Itoa(b.N)}}); err != nil {
				b.Fatal(err)
			}
		})
	}
}
