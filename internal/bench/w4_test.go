package bench_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel/internal/bench"
	"github.com/satchel-dev/satchel/internal/cli"
)

// The test binary doubles as the satchel binary W4 starts: with
// SATCHEL_W4_TEST_BINARY set, it runs the command line instead of the
// tests (as `satchel serve ...`).
func TestMain(m *testing.M) {
	if os.Getenv("SATCHEL_W4_TEST_BINARY") != "" {
		os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// TestW4 runs W4 small over stdio and HTTP, one and four calls in
// flight: each phase checked, one result a phase with its transport and
// concurrency.
func TestW4(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers")
	}
	t.Setenv("SATCHEL_W4_TEST_BINARY", "1")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var rs []bench.Result
	var log strings.Builder
	o := bench.W4Options{System: "satchel-sqlite", N: 30, Satchel: exe, Concurrency: []int{1, 4}, Log: &log}
	calls := 0
	o.Progress = func() { calls++ }
	if err := bench.RunW4(context.Background(), o, func(r bench.Result) { rs = append(rs, r) }); err != nil {
		t.Fatalf("RunW4: %v\n%s", err, log.String())
	}
	if want := bench.W4Ops(30, o); calls != want {
		t.Errorf("%d calls made, W4Ops says %d", calls, want)
	}
	var got []string
	for _, r := range rs {
		got = append(got, r.Transport+"/"+strconv.Itoa(r.Concurrency)+"/"+r.Phase)
		if r.System != "satchel-sqlite" || r.Workload != "W4" || r.OpsPerSec <= 0 || r.P50us <= 0 || r.P99us < r.P50us {
			t.Errorf("result %+v", r)
		}
		want := 30
		if r.Phase == "glob-dir" {
			want = bench.W4GlobCalls
		}
		if r.Ops != want {
			t.Errorf("%s: %d ops, want %d", r.Phase, r.Ops, want)
		}
	}
	want := []string{
		"stdio/1/write", "stdio/1/read-bounded", "stdio/1/edit", "stdio/1/glob-dir",
		"http/1/write", "http/1/read-bounded", "http/1/edit", "http/1/glob-dir",
		"stdio/4/write", "stdio/4/read-bounded", "stdio/4/edit", "stdio/4/glob-dir",
		"http/4/write", "http/4/read-bounded", "http/4/edit", "http/4/glob-dir",
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("results:\n%s\nwant\n%s", strings.Join(got, " "), strings.Join(want, " "))
	}
	if !strings.Contains(log.String(), "the server used") {
		t.Errorf("no CPU figure in the log:\n%s", log.String())
	}
}

func TestW4Refusals(t *testing.T) {
	for _, o := range []bench.W4Options{
		{N: 1, Satchel: "/nonexistent", Transports: []string{"carrier-pigeon"}},
		{N: 1, Satchel: "/nonexistent", Concurrency: []int{0}},
	} {
		if err := bench.RunW4(context.Background(), o, func(bench.Result) {}); err == nil {
			t.Errorf("RunW4(%+v) ran", o)
		}
	}
}

// TestW4Targets: ratios against the peer of the same run when it ran,
// else against its reference figures; the tail at 16 in flight.
func TestW4Targets(t *testing.T) {
	w, ok := bench.Lookup("w4")
	if !ok {
		t.Fatal("W4 is not registered")
	}
	rs := []bench.Result{
		{System: "satchel-sqlite", Workload: "W4", Phase: "write", Transport: "stdio", Concurrency: 1, OpsPerSec: 2100},
		{System: bench.W4PeerSystem, Workload: "W4", Phase: "write", Transport: "stdio", Concurrency: 1, OpsPerSec: 1000},
		{System: "satchel-sqlite", Workload: "W4", Phase: "read-bounded", Transport: "http", Concurrency: 16, OpsPerSec: 6000, P50us: 100, P99us: 600},
	}
	var lines []string
	for _, v := range w.Targets(rs) {
		lines = append(lines, v.String())
	}
	want := []string{
		"satchel-sqlite W4 write over stdio, 1 in flight: 2100 calls/s = 2.10× server-filesystem in this run (1000) (target ≥ 2.0×): met",
		"satchel-sqlite W4 read-bounded over http, 16 in flight: 6000 calls/s = 1.85× server-filesystem's reference figure (3246) (target ≥ 2.0×): MISSED",
		"satchel-sqlite W4 read-bounded over http, 16 in flight, p99/p50: 600/100 µs = 6.0× (target ≤ 5×): MISSED",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("verdicts:\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}
