package w5

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/satchel-dev/satchel/internal/loadtest"
	"github.com/satchel-dev/satchel/internal/testenv"
)

// clientRole makes the test binary one of W5's client processes.
const clientRole = "SATCHEL_W5_TEST_CLIENT"

func TestMain(m *testing.M) {
	if args := os.Getenv(clientRole); args != "" {
		var p int
		var seconds float64
		var mix string
		_, err := fmt.Sscanf(args, "%d %g %s", &p, &seconds, &mix)
		if err == nil {
			err = loadtest.RunClient(context.Background(), os.Getenv(ClientEnv), p, time.Duration(seconds*float64(time.Second)), mix, os.Stdout)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestRunThroughTheProxy runs every phase briefly with 1 and 2 processes
// behind a 4 ms round trip: every acknowledged operation is found, and a
// hot append, which waits on the server at least once, takes at least the
// round trip, so the processes did go through the proxy.
func TestRunThroughTheProxy(t *testing.T) {
	url := testenv.PostgresURL(t)
	const rtt = 4 * time.Millisecond
	var rs []Result
	err := Run(t.Context(), Options{
		PG: url, Processes: []int{1, 2}, RTT: rtt, Duration: time.Second,
		Client: func(p int, d time.Duration, mix string) *exec.Cmd {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d %g %s", clientRole, p, d.Seconds(), mix))
			return cmd
		},
	}, func(r Result) { rs = append(rs, r) })
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != len(Phases)*2 {
		t.Fatalf("%d results, want %d", len(rs), len(Phases)*2)
	}
	for i, r := range rs {
		if r.Phase != Phases[i/2] || r.Processes != 1+i%2 || r.System != "satchel-postgres" || r.Workload != "W5" || r.RTTus != rtt.Microseconds() {
			t.Errorf("result %d: %+v", i, r)
		}
		if r.OpsPerSec <= 0 || r.Lost != 0 || r.Duplicated != 0 {
			t.Errorf("%s × %d: %.0f ops/s, %d lost, %d duplicated", r.Phase, r.Processes, r.OpsPerSec, r.Lost, r.Duplicated)
		}
		if r.Phase == loadtest.Hot && r.P50us < float64(rtt.Microseconds()) {
			t.Errorf("hot × %d: p50 %.0f µs, under the %v round trip", r.Processes, r.P50us, rtt)
		}
	}
}

func TestProxiedURL(t *testing.T) {
	got, err := proxied("postgres://u:pw@db.example:6000/test?sslmode=disable", "127.0.0.1:9", "s1", "app")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got, "postgres://u:pw@127.0.0.1:9/test?") || !strings.Contains(got, "search_path=s1") ||
		!strings.Contains(got, "application_name=app") || !strings.Contains(got, "sslmode=disable") {
		t.Errorf("proxied URL %q", got)
	}
	if addr, _ := serverAddr("postgres://db.example/test"); addr != "db.example:5432" {
		t.Errorf("server address %q, want the default port", addr)
	}
	for _, bad := range []string{"postgres:///test?host=/run/postgresql", "postgres://a:1,b:2/test", "::"} {
		if _, err := proxied(bad, "127.0.0.1:9", "s", "a"); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzProxiedURL(f *testing.F) {
	for _, s := range []string{"postgres://u@127.0.0.1:5432/test?sslmode=disable", "postgres:///x?host=/tmp", "%", "postgres://[::1]:5/d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, pg string) {
		got, err := proxied(pg, "127.0.0.1:9", "s", "a")
		if err != nil {
			return
		}
		// Whatever it was given, a URL it returns points at the proxy.
		if !strings.Contains(got, "@127.0.0.1:9/") && !strings.Contains(got, "//127.0.0.1:9") {
			t.Fatalf("%q became %q, not at the proxy", pg, got)
		}
	})
}
