package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/satchel-dev/satchel/internal/bench/w5"
	"github.com/satchel-dev/satchel/internal/loadtest"
)

// w5Flags are the flags of `satchel bench --workload w5`.
type w5Flags struct {
	processes string
	rtt       time.Duration
	duration  time.Duration
	phases    string
	// client, hidden, makes this process one of W5's client processes:
	// "P SECONDS MIX", the DSN in w5.ClientEnv.
	client string
}

func (f *w5Flags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.processes, "processes", "1,2,4", "W5: numbers of satchel processes, comma-separated")
	fl.DurationVar(&f.rtt, "rtt", 0, "W1 and W5 on postgres: round trip a proxy adds between satchel (each process of W5) and PostgreSQL (e.g. 1ms)")
	fl.DurationVar(&f.duration, "duration", w5.DefaultDuration, "W5: how long each phase runs at each number of processes")
	fl.StringVar(&f.phases, "phase", strings.Join(w5.Phases, ","), "W5: phases, comma-separated: "+strings.Join(w5.Phases, ", "))
	fl.StringVar(&f.client, "w5-client", "", "")
	_ = fl.MarkHidden("w5-client")
}

// runW5Client is one client process of W5.
func runW5Client(ctx context.Context, a *app, f w5Flags) error {
	var p int
	var seconds float64
	var mix string
	if _, err := fmt.Sscanf(f.client, "%d %g %s", &p, &seconds, &mix); err != nil {
		return usagef("--w5-client takes \"PROCESS SECONDS MIX\", was %q", f.client)
	}
	dsn := os.Getenv(w5.ClientEnv)
	if dsn == "" {
		return usagef("--w5-client needs the server's URL in %s", w5.ClientEnv)
	}
	return loadtest.RunClient(ctx, dsn, p, time.Duration(seconds*float64(time.Second)), mix, a.stdout)
}

// runW5 runs W5 on PostgreSQL at pg.
func runW5(ctx context.Context, a *app, f w5Flags, backends []string, pg string) error {
	if !slices.Equal(backends, []string{"postgres"}) {
		return usagef("W5 runs on the postgres backend only: give --backend postgres")
	}
	var procs []int
	for _, s := range splitList(f.processes) {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 64 {
			return usagef("--processes takes numbers from 1 to 64, comma-separated, was %q", f.processes)
		}
		procs = append(procs, n)
	}
	if len(procs) == 0 {
		return usagef("--processes is empty: give at least one number of processes")
	}
	if f.rtt < 0 || f.rtt > time.Second {
		return usagef("--rtt must be from 0 to 1s, was %v", f.rtt)
	}
	if f.duration < time.Second {
		return usagef("--duration must be at least 1s, was %v", f.duration)
	}
	phases := splitList(f.phases)
	for _, p := range phases {
		if !slices.Contains(w5.Phases, p) {
			return usagef("unknown W5 phase %q: choose among %s", p, strings.Join(w5.Phases, ", "))
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	var rs []w5.Result
	err = w5.Run(ctx, w5.Options{
		PG: pg, Processes: procs, Phases: phases, RTT: f.rtt, Duration: f.duration,
		Client: func(p int, d time.Duration, mix string) *exec.Cmd {
			return w5Client(ctx, exe, p, d, mix)
		},
	}, func(r w5.Result) {
		rs = append(rs, r)
		if a.json {
			_ = a.printJSON(r)
		}
	})
	if !a.json {
		printW5Table(a, rs)
	}
	return err
}

// w5Client is the command of W5's client process p. Each stands for a
// replica.
func w5Client(ctx context.Context, exe string, p int, d time.Duration, mix string) *exec.Cmd {
	return exec.CommandContext(ctx, exe, "bench", "--w5-client", fmt.Sprintf("%d %g %s", p, d.Seconds(), mix))
}

func printW5Table(a *app, rs []w5.Result) {
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "phase\tprocesses\trtt µs\tops/s\t× 1 process\tp50 µs\tp99 µs\tstale\tconflicts\tidle\tCPU µs/op\tlost\tduplicated\tround trips/op\tcommits/Append\tµs/Append\tsatchel µs/op\tpostgres µs/op\tproxy µs/op\t")
	base := map[string]float64{}
	for _, r := range rs {
		if _, ok := base[r.Phase]; !ok {
			base[r.Phase] = r.OpsPerSec
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.0f\t%.2f\t%.0f\t%.0f\t%d\t%d\t%.0f%%\t%.0f\t%d\t%d\t%.1f\t%.1f\t%.0f\t%.0f\t%.0f\t%.0f\t\n",
			r.Phase, r.Processes, r.RTTus, r.OpsPerSec, r.OpsPerSec/max(1e-9, base[r.Phase]), r.P50us, r.P99us,
			r.StaleCommits, r.Conflicts, 100*r.CPUIdle, r.CPUusPerOp, r.Lost, r.Duplicated, r.RoundTripsPerOp, r.CommitsPerAppend, r.AppendUs,
			r.SatchelUsPerOp, r.PostgresUsPerOp, r.ProxyUsPerOp)
	}
	_ = tw.Flush()
}
