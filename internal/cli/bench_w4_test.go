package cli

import (
	"strings"
	"testing"
)

// TestBenchW4Usage: W4's flags are checked before anything runs, and W4
// without the sqlite backend says so instead of running.
func TestBenchW4Usage(t *testing.T) {
	h := newHarness(t)
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"bench", "--workload", "w4", "--concurrency", "0"}, "--concurrency takes positive numbers"},
		{[]string{"bench", "--workload", "w4", "--concurrency", "1,x"}, "--concurrency takes positive numbers"},
		{[]string{"bench", "--workload", "w4", "--transport", "pigeon"}, `unknown transport "pigeon"`},
	} {
		r := h.run(c.args...)
		if r.Code != 2 || !strings.Contains(r.Err, c.msg) {
			t.Errorf("satchel %s: exit %d, stderr %q; want exit 2 and %q", strings.Join(c.args, " "), r.Code, r.Err, c.msg)
		}
	}
	r := h.run("bench", "--workload", "w4", "--backend", "memory", "--json")
	if r.Code != 0 || r.Out != "" || !strings.Contains(r.Err, "W4 runs on the sqlite backend only") {
		t.Errorf("W4 on memory: %+v", r)
	}
}
