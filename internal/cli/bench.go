package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/bench"
	"github.com/satchel-dev/satchel/internal/delayproxy"
)

// benchBackends are the backends `satchel bench` knows, in the order it
// runs them.
var benchBackends = []string{"memory", "sqlite", "postgres"}

// benchPGEnv names the PostgreSQL server of `bench --backend postgres`
// when --pg is not given.
const benchPGEnv = "SATCHEL_BENCH_POSTGRES"

type benchFlags struct {
	workloads, backends string
	pg                  string
	n                   string
	plot                string
	plotFrom            string
	seed                uint32
	noTargets           bool
	cpuProfile          string
	clients             string
	keys                bool // --idempotency-keys
	fileRules           bool // --file-rules
	rulesRun            bool // this run is --file-rules' second
	cacheBytes          int64

	// W4.
	transports, concurrency, nodeDir, satchelBin string
	peerFilesystem                               bool

	w5 w5Flags
}

func newBenchCmd(a *app) *cobra.Command {
	var f benchFlags
	var names []string
	for _, w := range bench.Workloads() {
		names = append(names, fmt.Sprintf("  %-3s %s (default scale %d)", w.Name, w.About, w.DefaultN))
	}
	cmd := &cobra.Command{
		Use:     "bench",
		GroupID: groupAdmin,
		Short:   "Run the standard benchmark workloads",
		Long: `Run the standard workloads (docs/workloads.md) on each backend
chosen, on a fresh database each time: a temporary SQLite file, a new
PostgreSQL schema (dropped afterwards), or memory. --db is not used.

Workloads:
` + strings.Join(names, "\n") + `

Each phase checks its expectation (W1's write: N files exist; read: the
bytes written; ...) and the command exits 1 on the first mismatch.

Output: a table of every phase (operations, seconds, operations per
second, p50 and p99 latency in µs; W3 adds its figures), then each figure
held against its target. With --json, one JSON object a line per phase:
system, workload, phase, ops, seconds, ops_per_s, p50_us, p99_us,
cpu_us_per_op (the process's CPU time per operation), and for
W3 bytes_per_checkpoint, step_us, fork_us, old_read_us, head_read_us, for
W4 transport and concurrency, for W2 clients.

W2 runs once for each number of --clients: its set and update phases
run that many clients at once, each setting its own documents. With more
than one client the read phases are left out; every document is then
read back and must be there with the version its last set was
acknowledged with (the run fails otherwise).

W5 (replicas; run alone, on --backend postgres) starts --processes
satchel processes of 16 clients each, every one reaching PostgreSQL
through a proxy that adds --rtt, runs each phase (--phase: mixed,
private, hot) for --duration, and checks every acknowledged operation.
Its JSON lines: system, workload, phase, processes, rtt_us, ops_per_s,
p50_us, p99_us, stale_commits, cpu_idle, cpu_us_per_op, lost,
duplicated.

--rtt with W1 (on --backend postgres only) puts the same proxy between
satchel and PostgreSQL, adding that round trip to every query, as a
database on another machine would; its JSON lines add rtt_us. The schema
is made and migrated over a direct connection, outside the timed phases.

W4 starts this binary's "serve" (or --satchel's) on a new SQLite database
for each transport (--transport) and number of calls in flight
(--concurrency), and drives it with an MCP client; it runs on the sqlite
backend only. --peer-filesystem also runs the same calls, over stdio,
against @modelcontextprotocol/server-filesystem (system
"server-filesystem"), installed with npm into --node-dir when missing, so
that the ratios are measured side by side.

A progress bar is drawn on standard error when it is a terminal.

PostgreSQL (--backend postgres) needs a server: --pg URL, else
$` + benchPGEnv + `. The user must be allowed to create schemas.`,
		Example: `  satchel bench
  satchel bench --workload w3 --backend sqlite --json
  satchel bench --workload w2 --clients 1,16 --backend sqlite,postgres --n 20000
  satchel bench --workload w4 --backend sqlite --peer-filesystem
  satchel bench --workload w5 --backend postgres --processes 1,2,4 --rtt 1ms
  satchel bench --workload w1 --backend postgres --n 10000 --rtt 500us --json
  satchel bench --workload w1 --n 1000 --backend memory,sqlite,postgres --pg postgres://localhost/bench`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBench(cmd.Context(), a, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.workloads, "workload", "", "workloads to run, comma-separated (default all: "+strings.ToLower(strings.Join(workloadNames(), ","))+")")
	fl.StringVar(&f.backends, "backend", "memory,sqlite", "backends to run on, comma-separated: memory, sqlite, postgres")
	fl.StringVar(&f.pg, "pg", "", "PostgreSQL server URL for --backend postgres (default $"+benchPGEnv+")")
	fl.StringVar(&f.n, "n", "", "scale: W1's and W4's N files, W3's F files (default each workload's own); several, comma-separated, run each in turn")
	fl.StringVar(&f.plot, "plot", "", "draw each phase's figures against the scales of --n as cost curves (log axes) into `FILE.svg`")
	fl.StringVar(&f.plotFrom, "plot-from", "", "with --plot: draw the JSON lines that earlier --json runs printed into `FILES` (comma-separated) instead of running anything")
	fl.Uint32Var(&f.seed, "seed", 1, "seed of the generated data")
	fl.StringVar(&f.clients, "clients", "1", "W2: clients setting documents at once, comma-separated (each number a run of its own)")
	fl.StringVar(&f.transports, "transport", "stdio,http", "W4: MCP transports, comma-separated: stdio, http")
	fl.StringVar(&f.concurrency, "concurrency", "1,16", "W4: calls in flight, comma-separated")
	fl.BoolVar(&f.peerFilesystem, "peer-filesystem", false, "W4: also run @modelcontextprotocol/server-filesystem (over stdio, with Node from --node-dir)")
	fl.StringVar(&f.nodeDir, "node-dir", bench.W4DefaultNodeDir, "W4: `DIR` of node_modules holding the peer and Node 22 (npm installs them when missing)")
	fl.StringVar(&f.satchelBin, "satchel", "", "W4: the satchel `BINARY` whose serve is measured (default this one)")
	fl.BoolVar(&f.noTargets, "no-targets", false, "do not print the figures held against their targets (plain output)")
	fl.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to `FILE` (for go tool pprof)")
	fl.Int64Var(&f.cacheBytes, "cache-bytes", 0, "bound of each store's cache of packs and nodes, in bytes (default the store's own, 256 MiB): a small one makes walks read from the database")
	fl.BoolVar(&f.fileRules, "file-rules", false, "W1: run each backend twice, the second time (system satchel-B+rules) with ten file rules on the workspace, side by side")
	fl.BoolVar(&f.keys, "idempotency-keys", false, "W1: run each backend twice, the second time (system satchel-B+keys) with an idempotency key on every write and append")
	f.w5.register(fl)
	return cmd
}

func workloadNames() []string {
	var out []string
	for _, w := range bench.Workloads() {
		out = append(out, w.Name)
	}
	return out
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func runBench(ctx context.Context, a *app, f benchFlags) error {
	if f.w5.client != "" {
		return runW5Client(ctx, a, f.w5)
	}
	if f.plotFrom != "" {
		if f.plot == "" {
			return usagef("--plot-from draws into the file of --plot: give --plot FILE.svg")
		}
		rs, err := readResults(splitList(f.plotFrom))
		if err != nil {
			return err
		}
		return writePlot(f.plot, rs)
	}
	scales := []int{0}
	if f.n != "" {
		scales = nil
		for _, s := range splitList(f.n) {
			n, err := strconv.Atoi(s)
			if err != nil {
				return usagef("--n takes scales, numbers comma-separated, was %q", f.n)
			}
			if n < 0 {
				return usagef("--n must not be negative, was %d", n)
			}
			scales = append(scales, n)
		}
		if len(scales) == 0 {
			return usagef("--n is empty: give at least one scale")
		}
	}
	if f.cpuProfile != "" {
		out, err := os.Create(f.cpuProfile)
		if err != nil {
			return err
		}
		defer out.Close()
		if err := pprof.StartCPUProfile(out); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	var ws []bench.Workload
	if f.workloads == "" {
		ws = bench.Workloads()
	}
	if slices.Equal(splitList(strings.ToLower(f.workloads)), []string{"w5"}) {
		pg := f.pg
		if pg == "" {
			pg = a.getenv(benchPGEnv)
		}
		if pg == "" {
			return usagef("--backend postgres needs a server: give --pg URL or set %s", benchPGEnv)
		}
		return runW5(ctx, a, f.w5, splitList(f.backends), pg)
	}
	for _, name := range splitList(f.workloads) {
		w, ok := bench.Lookup(name)
		if !ok && strings.EqualFold(name, "w5") {
			return usagef("W5 runs alone: give --workload w5 without other workloads")
		}
		if !ok {
			return usagef("unknown workload %q: choose among %s", name, strings.ToLower(strings.Join(workloadNames(), ", ")))
		}
		ws = append(ws, w)
	}
	backends := splitList(f.backends)
	if len(ws) == 0 || len(backends) == 0 {
		return usagef("nothing to run: give at least one workload and one backend")
	}
	if f.w5.rtt != 0 {
		if f.w5.rtt < 0 || f.w5.rtt > time.Second {
			return usagef("--rtt must be from 0 to 1s, was %v", f.w5.rtt)
		}
		if len(ws) != 1 || ws[0].Name != "W1" {
			return usagef("--rtt applies to W1 and W5 only: give --workload w1 (or w5) alone")
		}
		if !slices.Equal(backends, []string{"postgres"}) {
			return usagef("--rtt runs on the postgres backend only (the proxy sits between satchel and the server): give --backend postgres")
		}
	}
	for _, b := range backends {
		if !slices.Contains(benchBackends, b) {
			return usagef("unknown backend %q: choose among %s", b, strings.Join(benchBackends, ", "))
		}
	}
	pg := f.pg
	if pg == "" {
		pg = a.getenv(benchPGEnv)
	}
	if slices.Contains(backends, "postgres") && pg == "" {
		return usagef("--backend postgres needs a server: give --pg URL or set %s", benchPGEnv)
	}

	var clients []int
	for _, c := range splitList(f.clients) {
		n, err := strconv.Atoi(c)
		if err != nil || n < 1 {
			return usagef("--clients takes positive numbers, comma-separated, was %q", f.clients)
		}
		clients = append(clients, n)
	}
	if len(clients) == 0 {
		return usagef("--clients is empty: give at least one number of clients")
	}

	var concurrency []int
	for _, c := range splitList(f.concurrency) {
		n, err := strconv.Atoi(c)
		if err != nil || n < 1 {
			return usagef("--concurrency takes positive numbers, comma-separated, was %q", f.concurrency)
		}
		concurrency = append(concurrency, n)
	}
	transports := splitList(f.transports)
	for _, t := range transports {
		if t != "stdio" && t != "http" {
			return usagef("unknown transport %q: choose among stdio, http", t)
		}
	}
	bench.W4Config = bench.W4Options{
		Satchel: f.satchelBin, Transports: transports, Concurrency: concurrency,
		PeerFilesystem: f.peerFilesystem, NodeDir: f.nodeDir,
	}

	var all []bench.Result
	report := func(r bench.Result) error {
		all = append(all, r)
		if a.json {
			return a.printJSON(r)
		}
		return nil
	}
	for _, w := range ws {
		for _, n := range scales {
			for _, b := range backends {
				if w.Name == "W4" && b != "sqlite" {
					// W4 measures satchel serve on SQLite.
					if !slices.Contains(backends, "sqlite") && b == backends[0] {
						a.notice("W4 runs on the sqlite backend only: add sqlite to --backend")
					}
					continue
				}
				if err := benchOne(ctx, a, w, b, pg, n, clients, f, false, report); err != nil {
					return err
				}
				if f.keys && w.Name == "W1" {
					if err := benchOne(ctx, a, w, b, pg, n, clients, f, true, report); err != nil {
						return err
					}
				}
				if f.fileRules && w.Name == "W1" {
					fr := f
					fr.rulesRun = true
					if err := benchOne(ctx, a, w, b, pg, n, clients, fr, false, report); err != nil {
						return err
					}
				}
			}
		}
	}
	if f.plot != "" {
		if err := writePlot(f.plot, all); err != nil {
			return err
		}
	}
	if a.json {
		return nil
	}
	if err := printBenchTable(a.stdout, all); err != nil {
		return err
	}
	if f.noTargets {
		return nil
	}
	var verdicts []bench.Verdict
	for _, w := range ws {
		if w.Targets != nil {
			verdicts = append(verdicts, w.Targets(all)...)
		}
	}
	if len(verdicts) > 0 {
		fmt.Fprintln(a.stdout, "\ntargets:")
		for _, v := range verdicts {
			fmt.Fprintln(a.stdout, "  "+v.String())
		}
	}
	return nil
}

// benchOne runs workload w on a fresh store of backend b.
func benchOne(ctx context.Context, a *app, w bench.Workload, b, pg string, n int, clients []int, f benchFlags, keys bool, report func(bench.Result) error) error {
	var st *satchel.Store
	var cleanup func()
	var err error
	if f.w5.rtt > 0 {
		st, cleanup, err = benchPostgresRTT(ctx, pg, f.w5.rtt, f.storeOptions()...)
	} else {
		st, cleanup, err = benchStore(ctx, b, pg, f.storeOptions()...)
	}
	if err != nil {
		return err
	}
	defer cleanup()
	if n == 0 {
		n = w.DefaultN
	}
	var done atomic.Int64
	stop := a.progress(fmt.Sprintf("%s %s", w.Name, b), w.Ops(n)*len(clients), &done)
	var reportErr error
	err = w.Run(ctx, bench.Env{
		Store:    st,
		System:   "satchel-" + b + map[bool]string{true: "+keys"}[keys] + map[bool]string{true: "+rules"}[f.rulesRun],
		Keys:     keys,
		Rules:    f.rulesRun,
		N:        n,
		Seed:     f.seed,
		Clients:  clients,
		Progress: func() { done.Add(1) },
	}, func(r bench.Result) {
		r.N = n
		r.RTTus = f.w5.rtt.Microseconds()
		if err := report(r); err != nil && reportErr == nil {
			reportErr = err
		}
	})
	stop()
	if err != nil {
		return fmt.Errorf("%s on %s: %w", w.Name, b, err)
	}
	return reportErr
}

// benchStore opens a fresh, empty store of a backend and returns what
// removes it.
func benchStore(ctx context.Context, b, pg string, opts ...satchel.Option) (*satchel.Store, func(), error) {
	switch b {
	case "memory":
		st, err := satchel.Open(ctx, "memory:", opts...)
		if err != nil {
			return nil, nil, err
		}
		return st, func() { st.Close() }, nil
	case "sqlite":
		dir, err := os.MkdirTemp("", "satchel-bench-")
		if err != nil {
			return nil, nil, err
		}
		st, err := satchel.Open(ctx, filepath.Join(dir, "bench.db"), opts...)
		if err != nil {
			os.RemoveAll(dir)
			return nil, nil, err
		}
		return st, func() { st.Close(); os.RemoveAll(dir) }, nil
	case "postgres":
		return benchPostgres(ctx, pg, opts...)
	}
	return nil, nil, usagef("unknown backend %q", b)
}

// benchSchemaName returns a new schema name for one run.
func benchSchemaName() string {
	var r [6]byte
	_, _ = rand.Read(r[:])
	return "satchel_bench_" + hex.EncodeToString(r[:])
}

// progress draws a progress bar of total operations on standard error
// while done grows, when standard error is a terminal; the function it
// returns stops and clears it. The bar is redrawn from a ticker, so an
// operation costs one atomic add whatever the terminal.
func (a *app) progress(desc string, total int, done *atomic.Int64) func() {
	f, ok := a.stderr.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return func() {}
	}
	bar := progressbar.NewOptions(total,
		progressbar.OptionSetWriter(f),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionSetWidth(30),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionThrottle(100*time.Millisecond),
	)
	quit := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				_ = bar.Set(int(min(done.Load(), int64(total))))
			}
		}
	}()
	return func() {
		close(quit)
		<-finished
		_ = bar.Finish()
		_ = bar.Clear()
	}
}

// printBenchTable prints results as an aligned table.
func printBenchTable(w io.Writer, rs []bench.Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "system\tworkload\tphase\tops\tseconds\tops/s\tp50 µs\tp99 µs\t")
	w3 := false
	for _, r := range rs {
		phase := r.Phase
		if r.Transport != "" {
			phase = fmt.Sprintf("%s %s×%d", r.Phase, r.Transport, r.Concurrency)
		}
		if r.Clients > 1 {
			phase = fmt.Sprintf("%s ×%d", r.Phase, r.Clients)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.3f\t%.0f\t%.1f\t%.1f\t\n",
			r.System, r.Workload, phase, r.Ops, r.Seconds, r.OpsPerSec, r.P50us, r.P99us)
		w3 = w3 || r.Workload == "W3"
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if !w3 {
		return nil
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "system\tW3 bytes/checkpoint\tstep µs\tfork µs\told read µs\thead read µs\t")
	for _, r := range rs {
		if r.Workload == "W3" && r.Phase == "edit" {
			fmt.Fprintf(tw, "%s\t%.0f\t%.1f\t%.1f\t%.1f\t%.1f\t\n",
				r.System, r.BytesPerCheckpoint, r.StepUs, r.ForkUs, r.OldReadUs, r.HeadReadUs)
		}
	}
	return tw.Flush()
}

// benchPostgres creates a new schema on the server at url and opens a
// store in it; the function it returns closes the store and drops the
// schema.
func benchPostgres(ctx context.Context, url string, opts ...satchel.Option) (*satchel.Store, func(), error) {
	return bench.OpenPostgres(ctx, url, benchSchemaName(), opts...)
}

// benchPostgresRTT is benchPostgres whose store reaches the server
// through a proxy that adds rtt to each round trip (--rtt). The schema is
// made and migrated over a direct connection first.
func benchPostgresRTT(ctx context.Context, pg string, rtt time.Duration, opts ...satchel.Option) (*satchel.Store, func(), error) {
	u, err := url.Parse(pg)
	if err != nil {
		return nil, nil, usagef("--pg: %v", err)
	}
	q := u.Query()
	if q.Has("host") || u.Host == "" || strings.Contains(u.Host, ",") {
		return nil, nil, usagef("--rtt needs a PostgreSQL server reached over TCP as postgres://HOST:PORT/...: the proxy sits on that link")
	}
	target := u.Host
	if u.Port() == "" {
		target = net.JoinHostPort(u.Hostname(), "5432")
	}
	schema := benchSchemaName()
	drop, err := bench.PreparePostgres(ctx, pg, schema)
	if err != nil {
		return nil, nil, err
	}
	proxy, err := delayproxy.Start(target, rtt)
	if err != nil {
		drop()
		return nil, nil, err
	}
	u.Host = proxy.Addr()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	st, err := satchel.Open(ctx, u.String(), opts...)
	if err != nil {
		proxy.Close()
		drop()
		return nil, nil, err
	}
	return st, func() {
		st.Close()
		proxy.Close()
		drop()
	}, nil
}

// storeOptions are the options of the stores the benchmarks open.
func (f benchFlags) storeOptions() []satchel.Option {
	if f.cacheBytes > 0 {
		return []satchel.Option{satchel.WithCacheBytes(f.cacheBytes)}
	}
	return nil
}
