package luahost_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/luahost"
)

// sideRound is how many 7 KiB writes each side makes in one round of
// BenchmarkWriteSideBySide.
const sideRound = 400

// sideScript makes arg[2] writes from arg[1] on, as the Go side does, in
// a directory of the round (a run changes only files it has read or
// made), between two prints: the parent takes the time of each as it
// carries it out, and the first print comes after a waiting call and the
// second after another, so that the writes between them are all carried
// out and no start or end of the run is counted.
const sideScript = `local from, n, a, b = tonumber(arg[1]), tonumber(arg[2]), arg[3], arg[4]
store.exists("start.md")
print("start")
for i = from, from + n - 1 do store.write("r" .. from .. "/f" .. (i % 100) .. ".md", math.floor(i / 100) % 2 == 0 and a or b) end
store.exists("end.md")
print("end")`

// marks records when the run printed each line, and this process's CPU
// time then.
type marks struct {
	mu    sync.Mutex
	times []time.Time
	cpu   []time.Duration
}

func (m *marks) Write(p []byte) (int, error) {
	m.mu.Lock()
	m.times = append(m.times, time.Now())
	m.cpu = append(m.cpu, processCPU())
	m.mu.Unlock()
	return len(p), nil
}

// BenchmarkWriteSideBySide: a 7 KiB store.write from Lua in a child
// process against Go's Workspace.Write, side by side
// (docs/decisions/0150-lua-write-floor-on-memory.md). Each iteration is a
// round of 400 writes from Go, 400 more from Go, then 400 from a Lua run,
// each on a store of its own of the backend, so that the machine's load
// falls on all alike; the Lua side is timed from the script's first print
// to its second (its writes only, not the run's start and end). The first
// Go side writes the same two strings over and over (go-µs/write), the
// second a copy made for each write (go-fresh-µs/write), as content that
// arrives from elsewhere is: the memory backend keeps the string it is
// given, so only the copies take new memory, as the content a child sends
// does. Reported: each side's time per write, lua/go, lua/go-fresh, and
// the parent's CPU per Lua write (parent-cpu-µs/write, while the writes
// run; 0 where unmeasured).
func BenchmarkWriteSideBySide(b *testing.B) {
	s, err := luahost.Compile("side.lua", sideScript)
	if err != nil {
		b.Fatal(err)
	}
	for _, kind := range backends {
		b.Run(kind, func(b *testing.B) {
			ctx := context.Background()
			luaStore := open(b, kind)
			ws, err := open(b, kind).Workspace(ctx, "default", "main")
			if err != nil {
				b.Fatal(err)
			}
			fresh, err := open(b, kind).Workspace(ctx, "default", "main")
			if err != nil {
				b.Fatal(err)
			}
			goWrites := func(ws *satchel.Workspace, from int, clone bool) time.Duration {
				t0 := time.Now()
				for i := from; i < from+sideRound; i++ {
					content := content7K[i/100%2]
					if clone {
						content = strings.Clone(content)
					}
					if err := ws.Write(ctx, "r"+strconv.Itoa(from)+"/f"+strconv.Itoa(i%100)+".md", content); err != nil {
						b.Fatal(err)
					}
				}
				return time.Since(t0)
			}
			var goTime, freshTime, luaTime, cpu time.Duration
			round := 0
			for b.Loop() {
				from := round * sideRound
				round++
				goTime += goWrites(ws, from, false)
				freshTime += goWrites(fresh, from, true)
				m := &marks{}
				if _, err := s.Run(ctx, luahost.Config{Store: luaStore, Stdout: m, Timeout: time.Hour,
					Args: []string{strconv.Itoa(from), strconv.Itoa(sideRound), content7K[0], content7K[1]}}); err != nil {
					b.Fatal(err)
				}
				if len(m.times) != 2 {
					b.Fatalf("%d prints", len(m.times))
				}
				luaTime += m.times[1].Sub(m.times[0])
				cpu += m.cpu[1] - m.cpu[0]
			}
			writes := float64(b.N * sideRound)
			b.ReportMetric(float64(goTime.Microseconds())/writes, "go-µs/write")
			b.ReportMetric(float64(freshTime.Microseconds())/writes, "go-fresh-µs/write")
			b.ReportMetric(float64(luaTime.Microseconds())/writes, "lua-µs/write")
			b.ReportMetric(float64(luaTime)/float64(goTime), "lua/go")
			b.ReportMetric(float64(luaTime)/float64(freshTime), "lua/go-fresh")
			b.ReportMetric(float64(cpu.Microseconds())/writes, "parent-cpu-µs/write")
			b.ReportMetric(0, "ns/op")
		})
	}
}
