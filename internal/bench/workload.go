package bench

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/satchel-dev/satchel"
)

// Env is what a workload runs against: a fresh, empty store, and the
// options every workload shares.
type Env struct {
	// Store is opened for this run alone (a fresh SQLite file, a fresh
	// PostgreSQL schema, or memory).
	Store *satchel.Store
	// System names the system in the results, e.g. "satchel-sqlite".
	System string
	// N is the scale knob; 0 takes the workload's default.
	N int
	// Seed draws the data; 0 means 1.
	Seed uint32
	// Clients lists how many clients run at once, one run each (W2:
	// its set and update phases); empty means one.
	Clients []int
	// Progress, when set, is called after each operation.
	Progress func()
	// Keys gives W1's writes and appends an idempotency key each.
	Keys bool
	// Rules opens W1's workspace with W1Rules, ten file rules that let
	// every path of the workload be written (the cost of the check).
	Rules bool
}

func (e Env) seed() uint32 {
	if e.Seed == 0 {
		return 1
	}
	return e.Seed
}

func (e Env) tick() func() {
	if e.Progress == nil {
		return func() {}
	}
	return e.Progress
}

// Workload is one of the standard workloads of WORKLOADS.md, as `satchel
// bench` runs it.
type Workload struct {
	// Name is the workload's name in results, "W1", "W3", ...
	Name string
	// About says in a few words what it measures (for --help).
	About string
	// DefaultN is the scale used when Env.N is 0.
	DefaultN int
	// Ops returns how many operations a run at scale n makes (for a
	// progress bar; an estimate is fine).
	Ops func(n int) int
	// Run runs the workload, checks each phase's expectation (an error
	// says which failed) and reports each phase's figures.
	Run func(ctx context.Context, env Env, report func(Result)) error
	// Targets, when set, judges the workload's results against the
	// project's targets, one line per figure ("" when it has none).
	Targets func(rs []Result) []Verdict
}

// Verdict is a figure held against its target.
type Verdict struct {
	System string
	Figure string // e.g. "bytes per checkpoint"
	Value  string // e.g. "9.4 KiB"
	Target string // e.g. "< 16 KiB"
	Met    bool
}

func (v Verdict) String() string {
	ok := "met"
	if !v.Met {
		ok = "MISSED"
	}
	return fmt.Sprintf("%s %s: %s (target %s): %s", v.System, v.Figure, v.Value, v.Target, ok)
}

var (
	workloadsMu sync.Mutex
	workloads   = map[string]Workload{}
)

// Register adds a workload to those `satchel bench` knows. Each
// workload's file registers it from an init function, so adding one (W2,
// W4) is adding a file. Registering a name twice panics.
func Register(w Workload) {
	workloadsMu.Lock()
	defer workloadsMu.Unlock()
	key := strings.ToLower(w.Name)
	if _, dup := workloads[key]; dup {
		panic("bench: workload " + w.Name + " registered twice")
	}
	workloads[key] = w
}

// Workloads returns the registered workloads in name order.
func Workloads() []Workload {
	workloadsMu.Lock()
	defer workloadsMu.Unlock()
	out := make([]Workload, 0, len(workloads))
	for _, w := range workloads {
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Lookup finds a workload by name, case-insensitively ("w1" or "W1").
func Lookup(name string) (Workload, bool) {
	workloadsMu.Lock()
	defer workloadsMu.Unlock()
	w, ok := workloads[strings.ToLower(name)]
	return w, ok
}

func init() {
	Register(Workload{
		Name:     "W1",
		About:    "files: write, read, edit, append, glob, grep, exists and delete N files",
		DefaultN: W1DefaultN,
		Ops:      W1Ops,
		Run: func(ctx context.Context, env Env, report func(Result)) error {
			// Above the default bounds (1 GiB, 1,000,000 files: N =
			// 1,000,000 holds 7.3 GB in 1,000,001 files), the thread's
			// limits are raised to what the run holds.
			if err := env.Store.SetLimits(ctx, "bench", "w1", W1Limits(env.N)); err != nil {
				return err
			}
			var opts []satchel.WorkspaceOption
			if env.Rules {
				opts = append(opts, satchel.WithFileRules(W1Rules()))
			}
			ws, err := env.Store.Workspace(ctx, "bench", "w1", opts...)
			if err != nil {
				return err
			}
			return RunW1(ctx, ws, W1Options{System: env.System, N: env.N, Seed: env.Seed, Progress: env.Progress, Keys: env.Keys}, report)
		},
		Targets: w1Targets,
	})
}

// W1Limits returns the bounds of W1's thread at scale n: the defaults,
// or twice what the run holds when that is more (n files of 7.3 KB, their
// paths, and the append phase's log).
func W1Limits(n int) satchel.Limits {
	var l satchel.Limits
	if bytes := int64(n) * 2 * (W1Lines*(W1LineWidth+1) + 64); bytes > satchel.DefaultMaxBytes {
		l.MaxBytes = bytes
	}
	if files := int64(n) + 1; files > satchel.DefaultMaxFiles {
		l.MaxFiles = 2 * files
	}
	return l
}

// Peers' W1 figures at N = 10,000 (DESIGN §1.1.1), operations per second:
// the best of LangChain deepagents' FilesystemBackend and Turso AgentFS.
var w1Peers = map[string]float64{"write": 1991, "read": 3590, "edit": 1591, "glob-dir": 989}

// w1Targets holds W1's phases against the best peer figure of each.
func w1Targets(rs []Result) []Verdict {
	var out []Verdict
	for _, r := range rs {
		peer, ok := w1Peers[r.Phase]
		if !ok || r.Workload != "W1" {
			continue
		}
		out = append(out, Verdict{
			System: r.System,
			Figure: "W1 " + r.Phase,
			Value:  fmt.Sprintf("%.0f ops/s", r.OpsPerSec),
			Target: fmt.Sprintf("> %.0f ops/s (best peer)", peer),
			Met:    r.OpsPerSec > peer,
		})
	}
	return out
}

// W1Rules returns the ten file rules of W1 with --file-rules: nine that
// match none of its paths (three of them hiding, so that its reads go
// through the filtered view) and a last one, "**", that lets it write
// every path: each check tries all ten.
func W1Rules() satchel.FileRules {
	r, err := satchel.ParseFileRules("secrets/**=none,private/**=none,vendor/**=read,docs/**=read,*.lock=read," +
		"build/**=read,tmp/**/*.bak=read,archive/**=read,**/.env=none,**=rw")
	if err != nil {
		panic(err)
	}
	return r
}
