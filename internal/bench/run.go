package bench

import (
	"fmt"
	"sort"
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
	// N is the scale the phase ran at (W1's and W4's files, W2's
	// documents, W3's F files).
	N int `json:"n,omitempty"`

	// W3 only.
	BytesPerCheckpoint float64 `json:"bytes_per_checkpoint,omitempty"`
	StepUs             float64 `json:"step_us,omitempty"`
	ForkUs             float64 `json:"fork_us,omitempty"`
	OldReadUs          float64 `json:"old_read_us,omitempty"`
	HeadReadUs         float64 `json:"head_read_us,omitempty"`

	// Clients is how many clients ran the phase at once (W2).
	Clients int `json:"clients,omitempty"`

	// W4 only.
	Transport   string `json:"transport,omitempty"`
	Concurrency int    `json:"concurrency,omitempty"`
}

// timer records the latency of each operation of a phase.
type timer struct {
	start time.Time
	end   time.Time // when not zero, the end of the phase (else now)
	lat   []time.Duration
}

func newTimer(n int) *timer { return &timer{start: time.Now(), lat: make([]time.Duration, 0, n)} }

// op times fn as one operation.
func (t *timer) op(fn func() error) error {
	s := time.Now()
	err := fn()
	t.lat = append(t.lat, time.Since(s))
	return err
}

func (t *timer) result(system, workload, phase string) Result {
	end := t.end
	if end.IsZero() {
		end = time.Now()
	}
	el := end.Sub(t.start)
	r := Result{System: system, Workload: workload, Phase: phase, Ops: len(t.lat), Seconds: el.Seconds()}
	if el > 0 {
		r.OpsPerSec = float64(len(t.lat)) / el.Seconds()
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
