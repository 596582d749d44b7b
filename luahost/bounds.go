package luahost

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/satchel-dev/satchel"
)

// Defaults of ScriptsLimits.
const (
	DefaultMaxRuns         = 32
	DefaultMaxRunsPerToken = 4
)

// ScriptsLimits bounds the runs a Scripts has going at once: MaxRuns
// across every caller, MaxRunsPerToken per credential (zero: the
// defaults). A run past either is refused, naming the bound.
type ScriptsLimits struct {
	MaxRuns, MaxRunsPerToken int
}

// errSessionEnded is why a run of a session that ended was stopped.
var errSessionEnded = errors.New("its session ended")

// admit counts a run of owner's credential in, or refuses it past a
// bound; the function it returns counts it out.
func (s *Scripts) admit(credential string) (func(), error) {
	maxRuns, perToken := s.limits.MaxRuns, s.limits.MaxRunsPerToken
	if maxRuns <= 0 {
		maxRuns = DefaultMaxRuns
	}
	if perToken <= 0 {
		perToken = DefaultMaxRunsPerToken
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running == nil {
		s.running = map[string]int{}
	}
	if s.total >= maxRuns {
		return nil, &satchel.Error{Kind: satchel.ErrLimitExceeded, Msg: fmt.Sprintf(
			"too many script runs: the server runs at most %d at once (--max-runs); wait for a run to end", maxRuns)}
	}
	if s.running[credential] >= perToken {
		return nil, &satchel.Error{Kind: satchel.ErrLimitExceeded, Msg: fmt.Sprintf(
			"too many script runs for this token: at most %d at once (--max-runs-per-token); wait for one of its runs to end", perToken)}
	}
	s.total++
	s.running[credential]++
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.total--
		if s.running[credential]--; s.running[credential] <= 0 {
			delete(s.running, credential)
		}
	}, nil
}

// runContext is the context a run goes on with after Start returns:
// free of the call's, ended with until (a session's end) unless nil.
func runContext(ctx, until context.Context) (context.Context, context.CancelCauseFunc) {
	rctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	if until != nil {
		stop := context.AfterFunc(until, func() { cancel(errSessionEnded) })
		return rctx, func(cause error) { stop(); cancel(cause) }
	}
	return rctx, cancel
}

// SetLimits sets the bounds on the runs at once (ScriptsLimits).
func (s *Scripts) SetLimits(l ScriptsLimits) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limits = l
}

// Runs returns the caller's runs still known to Check, newest first: the
// running ones and the finished ones still kept.
func (s *Scripts) Runs(caller Caller) []RunState {
	s.mu.Lock()
	var jobs []*job
	for _, id := range s.order {
		if j := s.runs[id]; j != nil && j.owner == caller.owner() {
			jobs = append(jobs, j)
		}
	}
	s.mu.Unlock()
	out := make([]RunState, 0, len(jobs))
	for _, j := range jobs {
		st, _ := j.snapshot()
		out = append(out, st)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Started.After(out[j].Started) })
	return out
}
