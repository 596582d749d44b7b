package bench

import (
	"fmt"
	"sort"
	"syscall"
	"time"
)

// Result is one phase's figures: one JSON line of `satchel bench --json`.
type Result struct {
	System    string  `json:"system"`
	Workload  string  `json:"workload"`
	Phase     string  `json:"phase"`
	Ops       int     `json:"ops"`
	Seconds   float64 `json:"seconds"`
	OpsPerSec float64 `json:"ops_per_s"`
	P50us     float64 `json:"p50_us"`
	P99us     float64 `json:"p99_us"`
	// CPUusPerOp is the process's CPU time (user and system, every
	// goroutine: the backend's, the garbage collector's) per operation,
	// in µs: what an operation costs whatever the machine's load, where
	// ops_per_s and the latencies also count the time waited for a core.
	CPUusPerOp float64 `json:"cpu_us_per_op,omitempty"`
	// N is the scale the phase ran at (W1's and W4's files, W2's
	// documents, W3's F files).
	N int `json:"n,omitempty"`

	// W3 only.
	BytesPerCheckpoint float64 `json:"bytes_per_checkpoint,omitempty"`
	StepUs             float64 `json:"step_us,omitempty"`
	ForkUs             float64 `json:"fork_us,omitempty"`
	OldReadUs          float64 `json:"old_read_us,omitempty"`
	HeadReadUs         float64 `json:"head_read_us,omitempty"`

	// RTTus is the round trip, in µs, that a proxy added between satchel
	// and PostgreSQL (W1 with --rtt).
	RTTus int64 `json:"rtt_us,omitempty"`

	// Clients is how many clients ran the phase at once (W2).
	Clients int `json:"clients,omitempty"`

	// W4 only.
	Transport   string `json:"transport,omitempty"`
	Concurrency int    `json:"concurrency,omitempty"`
}

// timer records the latency of each operation of a phase, the phase's
// time and the process's CPU time, less what the workload's own work
// between operations took (aside).
type timer struct {
	start   time.Time
	cpu     time.Duration // the process's CPU time at start
	skip    time.Duration // wall time of the work aside
	skipCPU time.Duration // CPU time of the work aside
	lat     []time.Duration
	noCPU   bool // getrusage failed: no CPU figure

	// stopped is set by stop: the phase ended at end, with the process's
	// CPU time at endCPU (work after it, such as a check, is not counted).
	stopped bool
	end     time.Time
	endCPU  time.Duration
}

func newTimer(n int) *timer {
	t := &timer{lat: make([]time.Duration, 0, n)}
	t.cpu, t.noCPU = ProcessCPU()
	t.start = time.Now()
	return t
}

// ProcessCPU returns the CPU time the process has used; failed is set
// when it cannot be read.
func ProcessCPU() (d time.Duration, failed bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, true
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), false
}

// aside runs fn, the workload's own work (generating the content to
// compare, checking an answer), and leaves its time out of the phase's:
// the figures are the operations'.
func (t *timer) aside(fn func()) {
	c0, _ := ProcessCPU()
	s := time.Now()
	fn()
	t.skip += time.Since(s)
	c1, _ := ProcessCPU()
	t.skipCPU += c1 - c0
}

// op times fn as one operation.
func (t *timer) op(fn func() error) error {
	s := time.Now()
	err := fn()
	t.lat = append(t.lat, time.Since(s))
	return err
}

// stop ends the phase now.
func (t *timer) stop() {
	t.end = time.Now()
	var failed bool
	t.endCPU, failed = ProcessCPU()
	t.noCPU = t.noCPU || failed
	t.stopped = true
}

func (t *timer) result(system, workload, phase string) Result {
	if !t.stopped {
		t.stop()
	}
	el := t.end.Sub(t.start) - t.skip
	r := Result{System: system, Workload: workload, Phase: phase, Ops: len(t.lat), Seconds: el.Seconds()}
	if el > 0 {
		r.OpsPerSec = float64(len(t.lat)) / el.Seconds()
	}
	if used := t.endCPU - t.cpu - t.skipCPU; !t.noCPU && len(t.lat) > 0 && used > 0 {
		r.CPUusPerOp = us(used) / float64(len(t.lat))
	}
	if len(t.lat) > 0 {
		sorted := append([]time.Duration(nil), t.lat...)
		sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
		r.P50us = us(sorted[len(sorted)/2])
		r.P99us = us(sorted[min(len(sorted)-1, len(sorted)*99/100)])
	}
	return r
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

// mismatch is the error of a phase whose expectation failed.
func mismatch(workload, phase, format string, args ...any) error {
	return fmt.Errorf("bench %s %s: expectation failed: %s", workload, phase, fmt.Sprintf(format, args...))
}
