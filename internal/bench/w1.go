package bench

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/satchel-dev/satchel"
)

// W1Options configure the W1 files workload.
type W1Options struct {
	System string // e.g. "satchel-sqlite"
	N      int    // files (default 10,000)
	Seed   uint32 // default 1
	// Progress, when set, is called after each operation.
	Progress func()
	// Keys gives every write and append an idempotency key of its own.
	Keys bool
}

// key returns the options of W1's operation i of a phase: an idempotency
// key when asked for.
func (o W1Options) key(phase string, i int) []satchel.WriteOption {
	if !o.Keys {
		return nil
	}
	return []satchel.WriteOption{satchel.IdempotencyKey(phase + "-" + strconv.Itoa(i))}
}

// W1Phases names the phases of W1 in the order they run.
var W1Phases = []string{"write", "read", "read-bounded", "read-numbered", "edit", "append", "glob-all", "glob-dir", "grep", "exists", "delete"}

// W1GrepTimeout bounds each search of the grep phase. It is far above
// the default grep timeout (10 s), which a whole-corpus scan of 730 MB
// (N = 100,000) on a loaded server can reach: the phase measures the
// scan, and a search that still stops is reported as the phase's failure,
// not as a wrong count.
const W1GrepTimeout = time.Hour

// W1Ops returns how many operations W1 runs at scale n (for progress bars).
func W1Ops(n int) int { return 7*n + W1Appends(n) + 20 + 1000 + 20 + 2*n }

// W1Appends returns how many appends the append phase makes at scale n:
// WORKLOADS.md's 10,000 from the default N = 10,000 up, and n below it (a
// small run stays short).
func W1Appends(n int) int { return min(10000, max(100, n)) }

// RunW1 runs the W1 workload of WORKLOADS.md on an empty workspace, checks
// each phase's expectation, and reports each phase's figures.
func RunW1(ctx context.Context, ws *satchel.Workspace, o W1Options, report func(Result)) error {
	if o.N <= 0 {
		o.N = 10000
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	n := o.N
	tick := o.Progress
	if tick == nil {
		tick = func() {}
	}
	// Contents are generated again where they are needed, outside the
	// timed operations, rather than kept: at N = 1,000,000 they are 7.3 GB.
	done := func(t *timer, phase string) { report(t.result(o.System, "W1", phase)) }

	t := newTimer(n)
	for i := 0; i < n; i++ {
		var content string
		t.aside(func() { content = W1Content(o.Seed, i) })
		if err := t.op(func() error { return ws.Write(ctx, W1Path(i), content, o.key("write", i)...) }); err != nil {
			return err
		}
		tick()
	}
	done(t, "write")
	if files, err := ws.Glob(ctx, "notes/**"); err != nil || len(files) != n {
		return mismatch("W1", "write", "%d files exist, want %d (%v)", len(files), n, err)
	}

	t = newTimer(n)
	for i := 0; i < n; i++ {
		var got string
		if err := t.op(func() (err error) { got, err = ws.Read(ctx, W1Path(i)); return }); err != nil {
			return err
		}
		var same bool
		t.aside(func() { same = got == W1Content(o.Seed, i) })
		if !same {
			return mismatch("W1", "read", "file %d differs from what was written", i)
		}
		tick()
	}
	done(t, "read")

	t = newTimer(n)
	for i := 0; i < n; i++ {
		var got string
		if err := t.op(func() (err error) { got, err = ws.Read(ctx, W1Path(i), 20, 40); return }); err != nil {
			return err
		}
		if strings.Count(got, "\n") != 20 || !strings.HasPrefix(got, "line 20 of") {
			return mismatch("W1", "read-bounded", "file %d: not 21 lines from line 20", i)
		}
		tick()
	}
	done(t, "read-bounded")

	t = newTimer(n)
	for i := 0; i < n; i++ {
		var got string
		if err := t.op(func() (err error) { got, err = ws.ReadNumbered(ctx, W1Path(i), 95, 100); return }); err != nil {
			return err
		}
		if !strings.HasPrefix(got, " 95| ") || strings.Count(got, "\n") != 5 {
			return mismatch("W1", "read-numbered", "file %d: %q", i, got[:min(len(got), 20)])
		}
		tick()
	}
	done(t, "read-numbered")

	t = newTimer(n)
	for i := 0; i < n; i++ {
		var replaced int
		err := t.op(func() (err error) {
			replaced, err = ws.StrReplace(ctx, W1Path(i), fmt.Sprintf("MARKER-%d", i), fmt.Sprintf("EDITED-%d", i), false)
			return
		})
		if err != nil {
			return err
		}
		if replaced != 1 {
			return mismatch("W1", "edit", "file %d: %d replaced", i, replaced)
		}
		tick()
	}
	done(t, "edit")

	appends := W1Appends(n)
	t = newTimer(appends)
	for j := 0; j < appends; j++ {
		if err := t.op(func() error { return ws.Append(ctx, W1AppendPath, W1AppendLine(j), o.key("append", j)...) }); err != nil {
			return err
		}
		tick()
	}
	done(t, "append")
	if info, err := ws.Stat(ctx, W1AppendPath); err != nil || info.Lines != int64(appends) {
		return mismatch("W1", "append", "log.txt has %d lines, want %d (%v)", info.Lines, appends, err)
	}

	t = newTimer(20)
	for k := 0; k < 20; k++ {
		var got []string
		if err := t.op(func() (err error) { got, err = ws.Glob(ctx, "notes/**/*.md"); return }); err != nil {
			return err
		}
		if len(got) != n {
			return mismatch("W1", "glob-all", "%d paths, want %d", len(got), n)
		}
		tick()
	}
	done(t, "glob-all")

	t = newTimer(1000)
	for k := 0; k < 1000; k++ {
		var got []string
		if err := t.op(func() (err error) { got, err = ws.Glob(ctx, "notes/d07/*.md"); return }); err != nil {
			return err
		}
		if want := (n + 92) / 100; len(got) != want {
			return mismatch("W1", "glob-dir", "%d paths, want %d", len(got), want)
		}
		tick()
	}
	done(t, "glob-dir")

	want := W1GrepExpected(n)
	sort.Strings(want) // grep answers in path order
	t = newTimer(20)
	for k := 0; k < 20; k++ {
		var r satchel.GrepResult
		if err := t.op(func() (err error) {
			r, err = ws.Grep(ctx, W1GrepPattern, "notes", satchel.GrepOptions{Limit: n, Timeout: W1GrepTimeout})
			return
		}); err != nil {
			return err
		}
		if r.Stopped != "" {
			return mismatch("W1", "grep", "the search stopped before its end after %d matches: %s", len(r.Matches), r.Stopped)
		}
		if len(r.Matches) != len(want) {
			return mismatch("W1", "grep", "%d matches, want %d", len(r.Matches), len(want))
		}
		for i, m := range r.Matches {
			if m.Path != want[i] {
				return mismatch("W1", "grep", "match %d in %s, want %s", i, m.Path, want[i])
			}
		}
		tick()
	}
	done(t, "grep")

	t = newTimer(2 * n)
	for i := 0; i < n; i++ {
		for _, p := range []string{W1Path(i), W1MissingPath(i)} {
			var ok bool
			if err := t.op(func() (err error) { ok, err = ws.Exists(ctx, p); return }); err != nil {
				return err
			}
			if ok != (p == W1Path(i)) {
				return mismatch("W1", "exists", "exists(%s) = %v", p, ok)
			}
			tick()
		}
	}
	done(t, "exists")

	t = newTimer(n)
	for i := 0; i < n; i++ {
		if err := t.op(func() error { return ws.Delete(ctx, W1Path(i)) }); err != nil {
			return err
		}
		tick()
	}
	done(t, "delete")
	if files, err := ws.Glob(ctx, "notes/**"); err != nil || len(files) != 0 {
		return mismatch("W1", "delete", "%d files left (%v)", len(files), err)
	}
	return nil
}
