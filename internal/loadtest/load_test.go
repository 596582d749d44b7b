package loadtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/backend/postgres"
	"github.com/satchel-dev/satchel/internal/testenv"
)

// Environment of the client processes.
const (
	roleEnv = "SATCHEL_LOADTEST_ROLE" // "client": be a client process
	dsnEnv  = "SATCHEL_LOADTEST_DSN"
	argsEnv = "SATCHEL_LOADTEST_ARGS" // "PROCESS SECONDS MIX"
)

func TestMain(m *testing.M) {
	if os.Getenv(roleEnv) == "client" {
		var p int
		var seconds float64
		var mix string
		_, err := fmt.Sscanf(os.Getenv(argsEnv), "%d %g %s", &p, &seconds, &mix)
		if err == nil {
			err = RunClient(context.Background(), os.Getenv(dsnEnv), p, time.Duration(seconds*float64(time.Second)), mix, os.Stdout)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestLoad runs the load with 1, 2 and 4 client processes against fresh
// schemas of one PostgreSQL database and checks every acknowledged
// operation after each run.
func TestLoad(t *testing.T) {
	testenv.Long(t, "load test")
	url := testenv.PostgresURL(t)
	seconds := 60.0
	if s := os.Getenv("SATCHEL_LOADTEST_SECONDS"); s != "" {
		seconds, _ = strconv.ParseFloat(s, 64)
	}
	// The mixed load (30% of operations on 4 shared threads) with 4
	// processes for the full duration, then 1 and 2 processes for a third
	// of it; then the private mix (every operation on the client's own
	// thread), which separates the cost of conflicts on shared threads
	// from the capacity of the machine.
	for _, mix := range []string{Mixed, Private} {
		var base float64
		for _, procs := range []int{1, 2, 4} {
			d := seconds / 3
			if procs == 4 && mix == Mixed {
				d = seconds
			}
			r := runLoad(t, url, procs, d, mix)
			if procs == 1 {
				base = r.opsPerSec
			}
			t.Logf("%s load, %d process(es) × %d clients, %.0f s: %.0f ops/s (%.0f mutations/s), %.2f× one process; "+
				"CPU: satchel %.2f cores, PostgreSQL %.2f, rest of the machine %.2f, idle %.2f of %d; "+
				"%.1f commits per Append (group commit), %.1f%% of commits stale (retried), %.0f µs per Append",
				mix, procs, Clients, d, r.opsPerSec, r.mutsPerSec, r.opsPerSec/base,
				r.cpu.Satchel, r.cpu.Postgres, r.cpu.Other, r.cpu.Idle, r.cpu.Cores,
				float64(r.Commits)/float64(max(1, r.Appends)), 100*float64(r.Stale)/float64(max(1, r.Commits)), float64(r.AppendTime.Microseconds())/float64(max(1, r.Appends)))
		}
	}
}

type loadResult struct {
	Outcome
	opsPerSec, mutsPerSec float64
	cpu                   CPUShares
}

func runLoad(t *testing.T, url string, procs int, seconds float64, mix string) loadResult {
	ctx := t.Context()
	schema := fmt.Sprintf("satchel_load_%d_%s_%d", os.Getpid(), mix, procs)
	b, err := postgres.OpenFresh(ctx, url, schema)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { postgres.DropSchema(context.Background(), url, schema) })
	st := satchel.New(b)
	defer st.Close()
	if err := Prepare(ctx, st, procs); err != nil {
		t.Fatal(err)
	}
	dsn := url + map[bool]string{true: "&", false: "?"}[strings.Contains(url, "?")] + "search_path=" + schema

	start := time.Now()
	type proc struct {
		cmd    *exec.Cmd
		out    []string
		stderr strings.Builder
		done   chan struct{}
	}
	ps := make([]*proc, procs)
	for p := range ps {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), roleEnv+"=client", dsnEnv+"="+dsn, argsEnv+fmt.Sprintf("=%d %g %s", p, seconds, mix))
		pr := &proc{cmd: cmd, done: make(chan struct{})}
		cmd.Stderr = &pr.stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() {
			defer close(pr.done)
			pr.out, _ = ReadLines(stdout)
		}()
		ps[p] = pr
	}
	// Where the CPU goes, sampled from 10% to 90% of the run, while every
	// client and its connections are alive.
	var pids []int
	for _, pr := range ps {
		pids = append(pids, pr.cmd.Process.Pid)
	}
	time.Sleep(time.Duration(seconds * 0.1 * float64(time.Second)))
	cpu0 := SampleCPU(pids, nil)
	time.Sleep(time.Duration(seconds * 0.8 * float64(time.Second)))
	shares := SampleCPU(pids, nil).Since(cpu0)

	var lines []string
	for p, pr := range ps {
		<-pr.done
		if err := pr.cmd.Wait(); err != nil {
			t.Fatalf("process %d: %v: %s", p, err, pr.stderr.String())
		}
		lines = append(lines, pr.out...)
	}
	elapsed := time.Since(start)

	out, err := Check(ctx, st, procs, mix, lines)
	if err != nil {
		t.Fatal(err)
	}
	if out.Lost != 0 || out.Duplicated != 0 || len(out.Problems) > 0 {
		t.Errorf("%d lost, %d duplicated: %s", out.Lost, out.Duplicated, strings.Join(out.Problems, "; "))
	}
	return loadResult{Outcome: out, opsPerSec: float64(out.Ops) / elapsed.Seconds(), mutsPerSec: float64(out.Mutations) / elapsed.Seconds(), cpu: shares}
}
