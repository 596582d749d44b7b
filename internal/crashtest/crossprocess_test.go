package crashtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/bench"
)

// The cross-process test: xProcs writer processes of xGoroutines each, on
// one database, all making the same kinds of mutations on shared threads
// of scope "x", while another process collects garbage.
const (
	xProcs      = 3
	xGoroutines = 4
	xMaxFiles   = 50 // the bound of thread "bounded"
	xGrace      = 50 * time.Millisecond
)

// xContent is version i of the file that goroutine g of process p keeps
// in thread "gc": every third version is large (several chunks).
func xContent(p, g, i int) string {
	size := 300
	if i%3 == 0 {
		size = 20_000
	}
	m := bench.NewMulberry32(uint32(p*100+g)*0x9E3779B1 + uint32(i+1))
	return genContent(m, fmt.Sprintf("p%d g%d version %d\n", p, g, i), size)
}

func xSlot(p, g, n int) string { return fmt.Sprintf("slot %d-%d: %d\n", p, g, n) }

func init() {
	roles["xwriter"] = xWriter
	roles["xgc"] = xGC
}

// xWriter is writer process p (args "p iterations"): each goroutine g, at
// each iteration i, appends a line to shared/log.txt, moves its slot of
// shared/edits.md on by one with an edit, increments shared/counter.txt
// with a compare-and-swap (IfHash), writes a new file to the bounded
// thread, and writes and appends in thread "gc". It prints one line per
// acknowledged mutation.
func xWriter(ctx context.Context, st *satchel.Store, args string, out io.Writer) error {
	var p, iters int
	if _, err := fmt.Sscanf(args, "%d %d", &p, &iters); err != nil {
		return err
	}
	var mu sync.Mutex
	say := func(format string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(out, format+"\n", a...)
	}
	shared, err := st.Workspace(ctx, "x", "shared")
	if err != nil {
		return err
	}
	bounded, err := st.Workspace(ctx, "x", "bounded")
	if err != nil {
		return err
	}
	gcws, err := st.Workspace(ctx, "x", "gc")
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	errs := make(chan error, xGoroutines)
	for g := range xGoroutines {
		wg.Go(func() {
			fail := func(what string, err error) { errs <- fmt.Errorf("p%d g%d %s: %w", p, g, what, err) }
			conflicts := 0
			for i := range iters {
				line := fmt.Sprintf("p%d g%d i%d\n", p, g, i)
				if err := shared.Append(ctx, "shared/log.txt", line); err != nil {
					fail("append", err)
					return
				}
				say("append %d %d %d", p, g, i)

				if n, err := shared.StrReplace(ctx, "shared/edits.md", xSlot(p, g, i), xSlot(p, g, i+1), false); err != nil || n != 1 {
					fail("edit", fmt.Errorf("%d replaced: %w", n, err))
					return
				}
				say("edit %d %d %d", p, g, i+1)

				for {
					c, err := shared.Read(ctx, "shared/counter.txt")
					if err != nil {
						fail("read counter", err)
						return
					}
					n, _ := strconv.Atoi(strings.TrimSpace(c))
					err = shared.Write(ctx, "shared/counter.txt", strconv.Itoa(n+1)+"\n", satchel.IfHash(satchel.Hash(c)))
					if errors.Is(err, satchel.ErrConflict) {
						conflicts++
						continue // a stale precondition is refused, never applied: read again
					}
					if err != nil {
						fail("increment", err)
						return
					}
					say("inc %d %d %d", p, g, n+1)
					break
				}

				path := fmt.Sprintf("b/p%d-g%d-%d.md", p, g, i)
				switch err := bounded.Write(ctx, path, "bounded\n"); {
				case err == nil:
					say("bound %s", path)
				case errors.Is(err, satchel.ErrLimitExceeded):
					say("refused %s", path)
				default:
					fail("bounded write", err)
					return
				}

				if err := gcws.Write(ctx, fmt.Sprintf("gc/p%d-g%d.md", p, g), xContent(p, g, i)); err != nil {
					fail("gc write", err)
					return
				}
				if err := gcws.Append(ctx, "gc/log.txt", line); err != nil {
					fail("gc append", err)
					return
				}
				say("gcw %d %d %d", p, g, i)
			}
			say("conflicts %d %d %d", p, g, conflicts)
		})
	}
	wg.Wait()
	close(errs)
	return errors.Join(slices.Collect(func(yield func(error) bool) {
		for err := range errs {
			if !yield(err) {
				return
			}
		}
	})...)
}

// xGC collects garbage in scope "x" in a loop (retention drops all but
// the last 3 commits of thread "gc"), with a grace period of xGrace, until
// it is killed.
func xGC(ctx context.Context, st *satchel.Store, args string, out io.Writer) error {
	fmt.Fprintln(out, "ready")
	for {
		s, err := st.GC(ctx, "x", xGrace)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "gc %d %d %d\n", s.Dropped, s.PacksDeleted, s.PacksRewritten)
		time.Sleep(5 * time.Millisecond)
	}
}

// TestCrossProcess runs xProcs writer processes and a garbage collector on
// one database (SQLite, and PostgreSQL when SATCHEL_TEST_POSTGRES is set),
// then checks that every acknowledged mutation is reflected exactly:
// appends all present once, edits all applied, the compare-and-swap
// counter equal to the number of increments acknowledged (a lost update
// would leave it short), the bounded thread holding exactly maxFiles
// files (every acknowledged write, no refused one), the garbage-collected
// thread readable at every retained commit, and the collector having
// deleted or rewritten storage while the writers ran.
func TestCrossProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	iters := 12
	if os.Getenv("SATCHEL_LONG_TESTS") == "1" {
		iters = 40
	}
	for _, db := range databases(t) {
		t.Run(db.name, func(t *testing.T) { crossProcess(t, db, iters) })
	}
}

func crossProcess(t *testing.T, db database, iters int) {
	ctx := t.Context()
	st, err := openStore(ctx, db.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	shared, _ := st.Workspace(ctx, "x", "shared")
	var slots strings.Builder
	for p := range xProcs {
		for g := range xGoroutines {
			slots.WriteString(xSlot(p, g, 0))
		}
	}
	must(t, shared.Write(ctx, "shared/edits.md", slots.String()))
	must(t, shared.Write(ctx, "shared/counter.txt", "0\n"))
	must(t, st.SetLimits(ctx, "x", "bounded", satchel.Limits{MaxFiles: xMaxFiles}))
	gcws, _ := st.Workspace(ctx, "x", "gc")
	must(t, gcws.Write(ctx, "gc/start.md", "start\n"))
	if _, err := gcws.SetRetention(ctx, satchel.Policy{MaxCommits: 3}); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	collector := startChild(t, "xgc", db.dsn, "")
	if l := <-collector.lines; l != "ready" {
		rest, err := collector.wait()
		t.Fatalf("collector: %q %v %v: %s", l, rest, err, collector.stderr)
	}
	writers := make([]*child, xProcs)
	for p := range writers {
		writers[p] = startChild(t, "xwriter", db.dsn, fmt.Sprintf("%d %d", p, iters))
	}
	var lines []string
	for p, c := range writers {
		rest, err := c.wait()
		if err != nil {
			t.Fatalf("writer %d: %v: %s", p, err, c.stderr)
		}
		lines = append(lines, rest...)
	}
	elapsed := time.Since(start)
	collector.cmd.Process.Signal(syscall.SIGKILL) // mid-collection, perhaps: that must be safe too
	gcLines, _ := collector.wait()
	if strings.TrimSpace(collector.stderr.String()) != "" {
		t.Errorf("collector: %s", collector.stderr)
	}
	var gcRuns, dropped, reclaimed int
	for _, l := range gcLines {
		var d, del, rw int
		if _, err := fmt.Sscanf(l, "gc %d %d %d", &d, &del, &rw); err == nil {
			gcRuns++
			dropped += d
			reclaimed += del + rw
		}
	}

	// Replay the acknowledgements.
	appends := map[string]int{}
	gcLog := map[string]int{}
	edits := map[string]int{}
	incs := map[int]int{}
	bound := map[string]bool{}
	refused := 0
	conflicts := 0
	gcLast := map[string]int{}
	for _, l := range lines {
		f := strings.Fields(l)
		switch f[0] {
		case "append":
			appends[fmt.Sprintf("p%s g%s i%s\n", f[1], f[2], f[3])]++
		case "edit":
			n, _ := strconv.Atoi(f[3])
			edits[f[1]+"-"+f[2]] = max(edits[f[1]+"-"+f[2]], n)
		case "inc":
			n, _ := strconv.Atoi(f[3])
			incs[n]++
		case "bound":
			bound[f[1]] = true
		case "refused":
			refused++
		case "gcw":
			gcLog[fmt.Sprintf("p%s g%s i%s\n", f[1], f[2], f[3])]++
			i, _ := strconv.Atoi(f[3])
			gcLast[fmt.Sprintf("gc/p%s-g%s.md", f[1], f[2])] = i
		case "conflicts":
			n, _ := strconv.Atoi(f[3])
			conflicts += n
		default:
			t.Fatalf("bad line %q", l)
		}
	}
	total := xProcs * xGoroutines * iters

	// Appends: every acknowledged line exactly once, nothing else.
	logText, err := shared.Read(ctx, "shared/log.txt")
	must(t, err)
	checkLines(t, "shared/log.txt", logText, appends, total)

	// Edits: every slot moved on by every acknowledged edit.
	editsText, err := shared.Read(ctx, "shared/edits.md")
	must(t, err)
	var wantEdits strings.Builder
	for p := range xProcs {
		for g := range xGoroutines {
			if n := edits[fmt.Sprintf("%d-%d", p, g)]; n != iters {
				t.Errorf("slot %d-%d: %d edits acknowledged, want %d", p, g, n, iters)
			}
			wantEdits.WriteString(xSlot(p, g, iters))
		}
	}
	if editsText != wantEdits.String() {
		t.Errorf("shared/edits.md:\n%s\nwant:\n%s", editsText, wantEdits.String())
	}

	// The compare-and-swap counter: each value acknowledged once, none lost.
	counter, err := shared.Read(ctx, "shared/counter.txt")
	must(t, err)
	if counter != strconv.Itoa(total)+"\n" {
		t.Errorf("counter is %q after %d acknowledged increments", counter, total)
	}
	for v := 1; v <= total; v++ {
		if incs[v] != 1 {
			t.Errorf("counter value %d acknowledged %d times, want once", v, incs[v])
		}
	}

	// Bounds: exactly maxFiles files, the acknowledged ones.
	bws, _ := st.Workspace(ctx, "x", "bounded")
	files, err := bws.List(ctx, "", satchel.ListOptions{})
	must(t, err)
	if len(files) != xMaxFiles || len(bound) != xMaxFiles || refused != total-xMaxFiles {
		t.Errorf("bounded thread: %d files, %d writes acknowledged, %d refused; want %d, %d, %d",
			len(files), len(bound), refused, xMaxFiles, xMaxFiles, total-xMaxFiles)
	}
	for _, f := range files {
		if !bound[f] {
			t.Errorf("bounded thread holds %s, whose write was not acknowledged", f)
		}
	}

	// The garbage-collected thread: every file exact, at every retained
	// commit readable, before and after one more collection.
	checkGC := func(when string) {
		for path, i := range gcLast {
			p, g := 0, 0
			fmt.Sscanf(path, "gc/p%d-g%d.md", &p, &g)
			c, err := gcws.Read(ctx, path)
			if err != nil || c != xContent(p, g, i) {
				t.Errorf("%s: %s is not version %d (%v)", when, path, i, err)
			}
		}
		gcText, err := gcws.Read(ctx, "gc/log.txt")
		must(t, err)
		checkLines(t, when+": gc/log.txt", gcText, gcLog, total)
		hist, err := gcws.History(ctx, 0, 0)
		must(t, err)
		for _, c := range hist {
			snap, err := gcws.At(ctx, strconv.FormatInt(c.Seq, 10))
			if err != nil {
				t.Errorf("%s: commit %d: %v", when, c.Seq, err)
				continue
			}
			paths, err := snap.List(ctx, "", satchel.ListOptions{})
			if err != nil {
				t.Errorf("%s: commit %d: %v", when, c.Seq, err)
			}
			for _, p := range paths {
				if _, err := snap.Read(ctx, p); err != nil {
					t.Errorf("%s: commit %d: %s: %v", when, c.Seq, p, err)
				}
			}
		}
	}
	checkGC("after the writers")
	time.Sleep(xGrace)
	s, err := st.GC(ctx, "x", xGrace)
	must(t, err)
	checkGC("after a last collection")
	if rep, err := st.Check(ctx); err != nil || len(rep.Faults) > 0 {
		t.Errorf("the storage check after the processes: %v, faults %q", err, rep.Faults)
	}

	t.Logf("%s: %d processes × %d goroutines × %d iterations in %v: %d compare-and-swap conflicts refused and retried; "+
		"collector: %d runs while writing, %d commits dropped, %d packs deleted or rewritten (then %+v)",
		db.name, xProcs, xGoroutines, iters, elapsed.Round(time.Millisecond), conflicts, gcRuns, dropped, reclaimed, s)
	if reclaimed == 0 {
		t.Errorf("the collector reclaimed nothing while the writers ran: the test did not test GC under writes")
	}
}

// checkLines checks that text is made of the lines of want, each once,
// and has n lines.
func checkLines(t *testing.T, what, text string, want map[string]int, n int) {
	t.Helper()
	got := map[string]int{}
	for _, l := range strings.SplitAfter(text, "\n") {
		if l != "" {
			got[l]++
		}
	}
	if len(want) != n {
		t.Errorf("%s: %d distinct lines acknowledged, want %d", what, len(want), n)
	}
	if !maps.Equal(got, want) {
		for l, c := range got {
			if want[l] != c {
				t.Errorf("%s: line %q present %d times, acknowledged %d", what, l, c, want[l])
			}
		}
		for l := range want {
			if got[l] == 0 {
				t.Errorf("%s: acknowledged line %q missing", what, l)
			}
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
