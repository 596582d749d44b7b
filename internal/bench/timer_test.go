package bench

import (
	"testing"
	"time"
)

// TestTimerAside: the work run aside (the workload's own: generating
// content, comparing answers) is left out of the phase's time and CPU
// time, and the CPU per operation is reported.
func TestTimerAside(t *testing.T) {
	tm := newTimer(1)
	var wall, cpu time.Duration
	tm.aside(func() {
		s := time.Now()
		c0, _ := ProcessCPU()
		for c, _ := ProcessCPU(); c-c0 < 20*time.Millisecond; c, _ = ProcessCPU() {
		}
		c1, _ := ProcessCPU()
		wall, cpu = time.Since(s), c1-c0
	})
	if tm.skip < wall || tm.skipCPU < cpu {
		t.Errorf("aside counted %v wall and %v CPU, want at least the %v and %v its work took", tm.skip, tm.skipCPU, wall, cpu)
	}
	if err := tm.op(func() error {
		for c0, _ := ProcessCPU(); ; {
			if c, _ := ProcessCPU(); c-c0 >= time.Millisecond {
				return nil
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	r := tm.result("s", "W1", "read")
	if r.CPUusPerOp < 1000 {
		t.Errorf("CPU per operation %.0f µs, want at least the 1,000 µs the operation burned", r.CPUusPerOp)
	}
	if r.Seconds*1e6 > us(time.Since(tm.start)-wall) {
		t.Errorf("the phase took %.0f µs, more than its time less the work aside", r.Seconds*1e6)
	}
}
