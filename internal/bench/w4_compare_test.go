package bench_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel/internal/bench"
)

// TestW4Compare compares satchel binaries on W4, for measuring a change
// to the server: with SATCHEL_W4_COMPARE set to comma-separated binaries
// (old,new), it runs W4 over stdio against each in turn, rounds times
// (SATCHEL_W4_ROUNDS, default 3), then the peer when
// SATCHEL_W4_PEER is set, and prints every phase's figures and the CPU a
// call of server and client (the same client measures every binary).
//
//	SATCHEL_W4_COMPARE=/tmp/old,/tmp/new go test ./internal/bench -run TestW4Compare -v -timeout 30m
func TestW4Compare(t *testing.T) {
	bins := os.Getenv("SATCHEL_W4_COMPARE")
	if bins == "" {
		t.Skip("set SATCHEL_W4_COMPARE to the binaries to compare")
	}
	rounds := 3
	if r, err := strconv.Atoi(os.Getenv("SATCHEL_W4_ROUNDS")); err == nil && r > 0 {
		rounds = r
	}
	for round := range rounds {
		for _, bin := range strings.Split(bins, ",") {
			o := bench.W4Options{System: bin, Satchel: bin, Transports: []string{"stdio"}, Log: testLog{t}}
			if tr := os.Getenv("SATCHEL_W4_TRANSPORTS"); tr != "" {
				o.Transports = strings.Split(tr, ",")
			}
			o.PeerFilesystem = os.Getenv("SATCHEL_W4_PEER") != "" && bin == strings.Split(bins, ",")[0]
			err := bench.RunW4(context.Background(), o, func(r bench.Result) {
				t.Logf("round %d %s %s/%d %s: %.0f calls/s p50 %.0f µs p99 %.0f µs", round, r.System, r.Transport, r.Concurrency, r.Phase, r.OpsPerSec, r.P50us, r.P99us)
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		if strings.HasPrefix(line, "bench W4:") {
			l.t.Log(line)
		}
	}
	return len(p), nil
}
