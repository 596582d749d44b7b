package loadtest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/satchel-dev/satchel"
)

// Outcome is what Check found in the client processes' lines and the
// store.
type Outcome struct {
	Ops, Mutations int
	// What the clients' backends saw: Append calls, the commits in them,
	// those refused as stale (another process moved the head first: the
	// engine re-applies the mutation), and the time spent in Append.
	Appends, Commits, Stale int
	AppendTime              time.Duration
	// Conflicts counts the attempts refused with ErrConflict (the engine
	// gave up re-applying them) and tried again by the client.
	Conflicts int
	// Latencies of every operation, sorted.
	Latencies []time.Duration
	// Lost counts acknowledged operations whose effect is not in the
	// store: a shared log line missing, a slot behind its acknowledged
	// count, or a file (private, or a client's own on a shared thread)
	// that differs from the last acknowledged write. Duplicated counts
	// effects found more often than acknowledged: a log line twice, a slot
	// ahead.
	Lost, Duplicated int
	// Problems says what differs, one line each (at most a few).
	Problems []string
}

func (o *Outcome) problem(format string, a ...any) {
	if len(o.Problems) < 20 {
		o.Problems = append(o.Problems, fmt.Sprintf(format, a...))
	}
}

// Check replays the lines of the procs client processes that ran mix
// and checks every acknowledged operation against the store. An error is
// a line it cannot read or a store it cannot read; what differs is
// counted in the Outcome.
func Check(ctx context.Context, st *satchel.Store, procs int, mix string, lines []string) (Outcome, error) {
	var res Outcome
	private := map[string]map[string]string{}
	sharedLog := make([]map[string]int, Shared)
	ownLast := make([]map[string]string, Shared)
	for s := range Shared {
		sharedLog[s], ownLast[s] = map[string]int{}, map[string]string{}
	}
	slots := map[int]int{}
	acks, stats := 0, 0
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "ack "):
			var p, j, k int
			if _, err := fmt.Sscanf(l, "ack %d %d %d", &p, &j, &k); err != nil {
				return res, fmt.Errorf("loadtest: bad line %q", l)
			}
			acks++
			o := opFor(p, j, k, mix)
			thread := fmt.Sprintf("p%d-c%d", p, j)
			if private[thread] == nil {
				private[thread] = map[string]string{}
			}
			switch o.kind {
			case "sappend":
				sharedLog[o.shared][o.text]++
			case "slot":
				slots[p*Clients+j]++
			case "swrite":
				// The last acknowledged write of a client's own file wins only
				// per thread: writes of one client are sequential.
				ownLast[o.shared][o.path] = o.text
			default:
				o.applyPrivate(private[thread])
			}
		case strings.HasPrefix(l, "lat "):
			f := strings.Fields(l)
			for _, v := range f[min(3, len(f)):] {
				us, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					return res, fmt.Errorf("loadtest: bad latency %q", v)
				}
				res.Latencies = append(res.Latencies, time.Duration(us)*time.Microsecond)
			}
		case strings.HasPrefix(l, "stats "):
			var proc, n, m, a, c, stale, ns, conflicts int
			if _, err := fmt.Sscanf(l, "stats %d %d %d %d %d %d %d %d", &proc, &n, &m, &a, &c, &stale, &ns, &conflicts); err != nil {
				return res, fmt.Errorf("loadtest: bad line %q", l)
			}
			stats++
			res.Ops += n
			res.Mutations += m
			res.Appends += a
			res.Commits += c
			res.Stale += stale
			res.AppendTime += time.Duration(ns)
			res.Conflicts += conflicts
		default:
			return res, fmt.Errorf("loadtest: bad line %q", l)
		}
	}
	slices.Sort(res.Latencies)
	if stats != procs {
		res.problem("%d processes reported, want %d", stats, procs)
	}
	if res.Mutations != acks {
		res.problem("%d mutations counted, %d acknowledged", res.Mutations, acks)
	}

	for thread, want := range private {
		ws, err := st.Workspace(ctx, "load", thread)
		if err != nil {
			return res, err
		}
		got := map[string]string{}
		paths, err := ws.List(ctx, "", satchel.ListOptions{})
		if err != nil {
			return res, err
		}
		for _, p := range paths {
			if got[p], err = ws.Read(ctx, p); err != nil {
				return res, err
			}
		}
		for p, w := range want {
			if got[p] != w {
				res.Lost++
				res.problem("thread %s: %s is not its last acknowledged state", thread, p)
			}
		}
		for p := range got {
			if _, ok := want[p]; !ok {
				res.problem("thread %s: %s exists, never acknowledged", thread, p)
			}
		}
	}
	for s := range Shared {
		ws, err := st.Workspace(ctx, "load", "shared-"+strconv.Itoa(s))
		if err != nil {
			return res, err
		}
		text, err := ws.Read(ctx, "log.txt")
		if err != nil && !errors.Is(err, satchel.ErrNotFound) {
			return res, err
		}
		got := map[string]int{}
		for _, l := range strings.SplitAfter(text, "\n") {
			if l != "" {
				got[l]++
			}
		}
		for l, n := range sharedLog[s] {
			switch g := got[l]; {
			case g < n:
				res.Lost += n - g
				res.problem("shared-%d/log.txt: %q there %d times, acknowledged %d", s, l, g, n)
			case g > n:
				res.Duplicated += g - n
				res.problem("shared-%d/log.txt: %q there %d times, acknowledged %d", s, l, g, n)
			}
		}
		for l, g := range got {
			if sharedLog[s][l] == 0 {
				res.Duplicated += g
				res.problem("shared-%d/log.txt: %q there %d times, never acknowledged", s, l, g)
			}
		}
		slotText, err := ws.Read(ctx, "slots.md")
		if err != nil {
			return res, err
		}
		gotSlots := map[int]int{}
		for _, l := range strings.SplitAfter(slotText, "\n") {
			var id, n int
			if _, err := fmt.Sscanf(l, "slot %d: %d", &id, &n); err == nil {
				gotSlots[id] = n
			}
		}
		for id := 0; id < procs*Clients; id++ {
			if slotThread(id) != s {
				continue
			}
			switch g, w := gotSlots[id], slots[id]; {
			case g < w:
				res.Lost += w - g
				res.problem("shared-%d/slots.md: slot %d at %d, acknowledged %d", s, id, g, w)
			case g > w:
				res.Duplicated += g - w
				res.problem("shared-%d/slots.md: slot %d at %d, acknowledged %d", s, id, g, w)
			}
		}
		// A client's own file on a shared thread is written by that client
		// only, but it may have written it on several shared threads: each
		// thread holds the last write acknowledged on it.
		for path, want := range ownLast[s] {
			got, err := ws.Read(ctx, path)
			if err != nil || got != want {
				res.Lost++
				res.problem("shared-%d/%s is not its last acknowledged write (%v)", s, path, err)
			}
		}
	}
	return res, nil
}
