// Package w5 runs workload W5 of docs/workloads.md: P satchel processes of
// 16 clients each on one PostgreSQL database, the load of
// internal/loadtest for a fixed time, every process reaching the server
// through a proxy that delays each direction by half a round trip.
// Every acknowledged operation is checked afterwards.
package w5

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/backend/postgres"
	"github.com/satchel-dev/satchel/internal/delayproxy"
	"github.com/satchel-dev/satchel/internal/loadtest"
)

// DefaultDuration is how long each phase runs at each number of
// processes when Options.Duration is 0.
const DefaultDuration = 10 * time.Second

// Phases are W5's phases: the mixes of internal/loadtest, in the order
// they run.
var Phases = []string{loadtest.Mixed, loadtest.Private, loadtest.Hot}

// Result is one phase at one number of processes: one JSON line of
// `satchel bench --workload w5 --json`.
type Result struct {
	System       string  `json:"system"`
	Workload     string  `json:"workload"`
	Phase        string  `json:"phase"`
	Processes    int     `json:"processes"`
	RTTus        int64   `json:"rtt_us"`
	OpsPerSec    float64 `json:"ops_per_s"`
	P50us        float64 `json:"p50_us"`
	P99us        float64 `json:"p99_us"`
	StaleCommits int     `json:"stale_commits"`
	// Conflicts counts operations refused because other writers kept
	// moving the thread, and tried again by their client.
	Conflicts int `json:"conflicts,omitempty"`
	// CPUIdle is the machine's idle share (0 to 1) while the phase ran.
	CPUIdle float64 `json:"cpu_idle"`
	// CPUusPerOp is the CPU time of the satchel processes and of their
	// PostgreSQL backends per operation.
	CPUusPerOp float64 `json:"cpu_us_per_op"`
	Lost       int     `json:"lost"`
	Duplicated int     `json:"duplicated"`

	// Where the time goes (the table of plain output, not the JSON line).
	// RoundTripsPerOp is the messages the processes sent through the proxy
	// per operation (about one round trip each); CommitsPerAppend the
	// commits batched in one Append to PostgreSQL; AppendUs the time of
	// one Append.
	RoundTripsPerOp float64 `json:"-"`
	// SatchelUsPerOp and PostgresUsPerOp split CPUusPerOp; ProxyUsPerOp
	// is the bench's own CPU per operation, almost all of it the delay
	// proxy's: a cost of the simulation that a real network does not put
	// on the machine, though it counts in the machine's idle share.
	SatchelUsPerOp   float64 `json:"-"`
	PostgresUsPerOp  float64 `json:"-"`
	ProxyUsPerOp     float64 `json:"-"`
	CommitsPerAppend float64 `json:"-"`
	AppendUs         float64 `json:"-"`
}

// Options configure a run.
type Options struct {
	// PG is the PostgreSQL server's URL (postgres://host:port/db?...).
	PG string
	// Processes lists the numbers of processes to run each phase with.
	Processes []int
	// Phases to run (default Phases).
	Phases []string
	// RTT is the round trip the proxy adds between each process and the
	// server (0: the proxy forwards without delay).
	RTT time.Duration
	// Duration each phase runs at each number of processes (default
	// DefaultDuration).
	Duration time.Duration
	// Client returns the command that runs client process p of the mix
	// for d against dsn (ClientEnv carries the dsn): satchel re-executes
	// itself.
	Client func(p int, d time.Duration, mix string) *exec.Cmd
}

// ClientEnv names the environment variable that carries the client
// processes' DSN (it may hold a password: not on the command line).
const ClientEnv = "SATCHEL_W5_DSN"

// Run runs every phase at every number of processes and reports each.
// It returns an error when a process fails or an acknowledged operation
// is lost or duplicated (after reporting that phase).
func Run(ctx context.Context, o Options, report func(Result)) error {
	if o.Duration <= 0 {
		o.Duration = DefaultDuration
	}
	if len(o.Phases) == 0 {
		o.Phases = Phases
	}
	for _, mix := range o.Phases {
		for _, procs := range o.Processes {
			r, err := runOne(ctx, o, mix, procs)
			if err != nil {
				return fmt.Errorf("W5 %s with %d processes: %w", mix, procs, err)
			}
			report(r)
			if r.Lost != 0 || r.Duplicated != 0 {
				return fmt.Errorf("bench W5 %s: expectation failed: %d acknowledged operations lost, %d duplicated", mix, r.Lost, r.Duplicated)
			}
		}
	}
	return nil
}

// proxied returns the URL pg with its host replaced by the proxy's, the
// schema as search path and a name for the connections, and the server's
// address.
func proxied(pg, proxy, schema, app string) (string, error) {
	u, err := url.Parse(pg)
	if err != nil {
		return "", fmt.Errorf("--pg: %w", err)
	}
	q := u.Query()
	if q.Has("host") || u.Host == "" || strings.Contains(u.Host, ",") {
		return "", errors.New("W5 needs a PostgreSQL server reached over TCP as postgres://HOST:PORT/...: the proxy sits on that link")
	}
	u.Host = proxy
	q.Set("search_path", schema)
	q.Set("application_name", app)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// serverAddr is the host:port of the server at pg.
func serverAddr(pg string) (string, error) {
	u, err := url.Parse(pg)
	if err != nil {
		return "", fmt.Errorf("--pg: %w", err)
	}
	if u.Port() == "" {
		return net.JoinHostPort(u.Hostname(), "5432"), nil
	}
	return u.Host, nil
}

func runOne(ctx context.Context, o Options, mix string, procs int) (Result, error) {
	var r [6]byte
	_, _ = rand.Read(r[:])
	schema := "satchel_w5_" + hex.EncodeToString(r[:])
	b, err := postgres.OpenFresh(ctx, o.PG, schema)
	if err != nil {
		_ = postgres.DropSchema(context.WithoutCancel(ctx), o.PG, schema)
		return Result{}, err
	}
	defer postgres.DropSchema(context.WithoutCancel(ctx), o.PG, schema)
	st := satchel.New(b)
	defer st.Close()
	if err := loadtest.Prepare(ctx, st, procs); err != nil {
		return Result{}, err
	}
	target, err := serverAddr(o.PG)
	if err != nil {
		return Result{}, err
	}
	proxy, err := delayproxy.Start(target, o.RTT)
	if err != nil {
		return Result{}, err
	}
	defer proxy.Close()
	dsn, err := proxied(o.PG, proxy.Addr(), schema, schema)
	if err != nil {
		return Result{}, err
	}
	conn, err := postgres.Connect(ctx, o.PG)
	if err != nil {
		return Result{}, err
	}
	defer conn.Close(context.WithoutCancel(ctx))

	type proc struct {
		cmd     *exec.Cmd
		lines   []string
		readErr error
		stderr  strings.Builder
		done    chan struct{}
	}
	ps := make([]*proc, procs)
	var pids []int
	for p := range ps {
		cmd := o.Client(p, o.Duration, mix)
		if cmd.Env == nil {
			cmd.Env = os.Environ()
		}
		cmd.Env = append(cmd.Env, ClientEnv+"="+dsn)
		pr := &proc{cmd: cmd, done: make(chan struct{})}
		cmd.Stderr = &pr.stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			return Result{}, err
		}
		if err := cmd.Start(); err != nil {
			return Result{}, err
		}
		go func() {
			defer close(pr.done)
			pr.lines, pr.readErr = loadtest.ReadLines(stdout)
		}()
		ps[p] = pr
		pids = append(pids, cmd.Process.Pid)
	}
	// The CPU, sampled from 20% to 90% of the phase, when every process has
	// opened its connections; the server's processes are those of the
	// connections named after this run's schema.
	backends := func() []int {
		rows, err := conn.Query(ctx, "SELECT pid FROM pg_stat_activity WHERE application_name = $1", schema)
		if err != nil {
			return []int{}
		}
		out, _ := pgx.CollectRows(rows, pgx.RowTo[int32])
		pids := []int{}
		for _, p := range out {
			pids = append(pids, int(p))
		}
		return pids
	}
	wait := func(d time.Duration) {
		select {
		case <-ctx.Done():
		case <-time.After(d):
		}
	}
	wait(o.Duration / 5)
	bs := backends()
	cpu0 := loadtest.SampleCPU(pids, bs)
	wait(o.Duration * 7 / 10)
	shares := loadtest.SampleCPU(pids, bs).Since(cpu0)

	var lines []string
	var errs []error
	for p, pr := range ps {
		<-pr.done
		if err := pr.cmd.Wait(); err != nil {
			errs = append(errs, fmt.Errorf("process %d: %v: %s", p, err, strings.TrimSpace(pr.stderr.String())))
		}
		if pr.readErr != nil {
			errs = append(errs, pr.readErr)
		}
		lines = append(lines, pr.lines...)
	}
	if err := errors.Join(errs...); err != nil {
		return Result{}, err
	}
	// Each process opens its own connections: fewer through the proxy
	// means some reached the server directly, and the RTT was not paid.
	if n := proxy.Accepted(); n < int64(procs) {
		return Result{}, fmt.Errorf("%d connections went through the proxy, fewer than the %d processes", n, procs)
	}
	out, err := loadtest.Check(ctx, st, procs, mix, lines)
	if err != nil {
		return Result{}, err
	}
	if len(out.Problems) > 0 && out.Lost == 0 && out.Duplicated == 0 {
		return Result{}, fmt.Errorf("check: %s", strings.Join(out.Problems, "; "))
	}
	res := Result{
		System: "satchel-postgres", Workload: "W5", Phase: mix, Processes: procs,
		RTTus: o.RTT.Microseconds(), StaleCommits: out.Stale, Conflicts: out.Conflicts,
		CPUIdle: shares.IdleShare, Lost: out.Lost, Duplicated: out.Duplicated,
	}
	res.OpsPerSec = float64(out.Ops) / o.Duration.Seconds()
	if n := len(out.Latencies); n > 0 {
		res.P50us = float64(out.Latencies[n/2].Microseconds())
		res.P99us = float64(out.Latencies[min(n-1, n*99/100)].Microseconds())
	}
	if out.Ops > 0 {
		res.RoundTripsPerOp = float64(proxy.Sends()) / float64(out.Ops)
	}
	if out.Appends > 0 {
		res.CommitsPerAppend = float64(out.Commits) / float64(out.Appends)
		res.AppendUs = float64(out.AppendTime.Microseconds()) / float64(out.Appends)
	}
	if res.OpsPerSec > 0 {
		res.CPUusPerOp = (shares.Satchel + shares.Postgres) / res.OpsPerSec * 1e6
		res.SatchelUsPerOp = shares.Satchel / res.OpsPerSec * 1e6
		res.PostgresUsPerOp = shares.Postgres / res.OpsPerSec * 1e6
		res.ProxyUsPerOp = shares.Self / res.OpsPerSec * 1e6
	}
	return res, nil
}
