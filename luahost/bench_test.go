package luahost_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/luahost"
)

// content7K are two 7 KiB files, alternated round by round over the 100
// paths, so that every write changes its file (a write of the same content
// commits nothing, and would measure a no-op).
var content7K = [2]string{strings.Repeat("abcdefg\n", 7<<10/8), strings.Repeat("gfedcba\n", 7<<10/8)}

// BenchmarkWrite: store.write from Lua against the same write from Go
// (Workspace.Write), 7 KiB each, over 100 paths.
func BenchmarkWrite(b *testing.B) {
	for _, kind := range backends {
		for _, tracked := range []bool{false, true} {
			name := kind + "/go"
			var opts []satchel.WorkspaceOption
			if tracked { // as a Lua run is: its writes update a read ledger
				name += "-tracked"
				opts = append(opts, satchel.TrackReads())
			}
			b.Run(name, func(b *testing.B) {
				st := open(b, kind)
				ctx := context.Background()
				ws, _ := st.Workspace(ctx, "default", "main", opts...)
				b.SetBytes(7 << 10)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if err := ws.Write(ctx, "f"+strconv.Itoa(i%100)+".md", content7K[i/100%2]); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		for _, mode := range modes {
			b.Run(kind+"/lua"+mode.name, func(b *testing.B) {
				st := open(b, kind)
				s, err := luahost.Compile("bench.lua", `local n, a, b = tonumber(arg[1]), arg[2], arg[3]
for i = 0, n - 1 do store.write("f" .. (i % 100) .. ".md", math.floor(i / 100) % 2 == 0 and a or b) end`)
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(7 << 10)
				b.ResetTimer()
				if _, err := s.Run(context.Background(), luahost.Config{Store: st, Timeout: 1 << 40, InProcess: mode.inProcess,
					Args: []string{strconv.Itoa(b.N), content7K[0], content7K[1]}}); err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}

// modes are the two ways a run executes: in a child process (the
// default) and in the calling process.
var modes = []struct {
	name      string
	inProcess bool
}{{"", false}, {"-inprocess", true}}

// BenchmarkRoundTrip: one store call that does almost nothing
// (store.exists of a missing file) from Lua, in a child process and in
// process, against Go's Workspace.Exists: the cost of the pipe.
func BenchmarkRoundTrip(b *testing.B) {
	st := open(b, "memory")
	b.Run("go", func(b *testing.B) {
		ws, _ := st.Workspace(context.Background(), "default", "main")
		for i := 0; i < b.N; i++ {
			if _, err := ws.Exists(context.Background(), "missing.md"); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, mode := range modes {
		b.Run("lua"+mode.name, func(b *testing.B) {
			s, err := luahost.Compile("exists.lua", `for i = 1, tonumber(arg[1]) do store.exists("missing.md") end`)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			if _, err := s.Run(context.Background(), luahost.Config{Store: st, Timeout: 1 << 40, InProcess: mode.inProcess,
				Args: []string{strconv.Itoa(b.N)}}); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// firstLine records when a run first prints.
type firstLine struct {
	at time.Time
}

func (f *firstLine) Write(p []byte) (int, error) {
	if f.at.IsZero() {
		f.at = time.Now()
	}
	return len(p), nil
}

// BenchmarkFirstLine: from Run to the script's first line (a print the
// host receives), on SQLite: in a child process from a warm pool, in a
// child process started for the run, and in process. ns/op is the whole
// run; first-line-µs the start.
func BenchmarkFirstLine(b *testing.B) {
	st := open(b, "sqlite")
	s, err := luahost.Compile("start.lua", `print("first")`)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		pool      bool
		inProcess bool
	}{{"pool", true, false}, {"cold", false, false}, {"inprocess", false, true}} {
		b.Run(c.name, func(b *testing.B) {
			var pool *luahost.Pool
			if c.pool {
				pool = luahost.NewPool(2)
				defer pool.Close()
			}
			ctx := context.Background()
			var total time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if pool != nil {
					b.StopTimer()
					time.Sleep(30 * time.Millisecond) // the pool has started the next child: a warm pool
					b.StartTimer()
				}
				out := &firstLine{}
				start := time.Now()
				if _, err := s.Run(ctx, luahost.Config{Store: st, Stdout: out, Pool: pool, InProcess: c.inProcess}); err != nil {
					b.Fatal(err)
				}
				total += out.at.Sub(start)
			}
			b.ReportMetric(float64(total.Microseconds())/float64(b.N), "first-line-µs")
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
			for _, mode := range modes {
				b.Run("lua"+mode.name, func(b *testing.B) {
					b.ResetTimer()
					if _, err := s.Run(context.Background(), luahost.Config{Store: st, Timeout: 1 << 40, InProcess: mode.inProcess,
						Args: []string{strconv.Itoa(b.N)}}); err != nil {
						b.Fatal(err)
					}
				})
			}
		})
	}
}

// rssMiB is this process's resident memory, from /proc (0 elsewhere).
func rssMiB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return float64(kb) / 1024
		}
	}
	return 0
}

// BenchmarkMemory32: 32 runs at once, each filling memory until its
// limit (64 MiB) stops it; reports this process's resident memory (the
// server's, which holds the store) before and at its peak while they run.
func BenchmarkMemory32(b *testing.B) {
	st := open(b, "memory")
	s, err := luahost.Compile("grow.lua", `local t = {} local i = 0 while true do i = i + 1 t[i] = {i, i} end`)
	if err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	before := rssMiB()
	peak := before
	for i := 0; i < b.N; i++ {
		var wg sync.WaitGroup
		done := make(chan struct{})
		sampled := make(chan struct{})
		go func() {
			defer close(sampled)
			t := time.NewTicker(time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-done:
					return
				case <-t.C:
					peak = max(peak, rssMiB())
				}
			}
		}()
		for range 32 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := s.Run(context.Background(), luahost.Config{Store: st, MaxMemory: 64 << 20})
				if err == nil || !strings.Contains(err.Error(), "script exceeded its memory limit (64 MiB)") {
					b.Errorf("error %v, want the memory limit", err)
				}
			}()
		}
		wg.Wait()
		close(done)
		<-sampled
	}
	b.ReportMetric(before, "rss-before-MiB")
	b.ReportMetric(peak, "rss-peak-MiB")
}
