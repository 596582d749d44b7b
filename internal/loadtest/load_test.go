package loadtest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/postgres"
	"github.com/satchel-dev/satchel/internal/bench"
	"github.com/satchel-dev/satchel/internal/testenv"
)

const (
	clients = 16 // concurrent clients per process
	sharedN = 4  // shared threads
)

// Environment of the client processes.
const (
	roleEnv = "SATCHEL_LOADTEST_ROLE" // "client": be a client process
	dsnEnv  = "SATCHEL_LOADTEST_DSN"
	argsEnv = "SATCHEL_LOADTEST_ARGS" // "PROCESS SECONDS"
)

func TestMain(m *testing.M) {
	if os.Getenv(roleEnv) == "client" {
		if err := clientProcess(os.Getenv(dsnEnv), os.Getenv(argsEnv), os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// op is operation k of client j of process p: the same in the client that
// makes it and in the test that replays it.
type op struct {
	kind   string // write, edit, append (private); sappend, slot, swrite (shared); read
	path   string
	text   string
	shared int // the shared thread, for s* kinds
}

func opFor(p, j, k int, private bool) op {
	o := opFor1(p, j, k)
	if private {
		// The private mix: the same operations, each on the client's own thread.
		switch o.kind {
		case "sappend":
			o.kind = "append"
		case "swrite":
			o.kind, o.path = "write", "own.md"
		case "slot":
			o.kind, o.path, o.text = "append", "slots.txt", "slot\n"
		}
	}
	return o
}

func opFor1(p, j, k int) op {
	m := bench.NewMulberry32(uint32(p*clients+j)*0x9E3779B1 + uint32(k+1)*0x85EBCA77)
	r := m.Next() % 20
	s := int(m.Next() % sharedN)
	f := "f" + strconv.Itoa(int(m.Next()%20)) + ".md"
	switch {
	case r < 5:
		return op{kind: "write", path: f, text: content(m, fmt.Sprintf("header p%d c%d k%d\n", p, j, k), 500+int(m.Next()%3500))}
	case r < 8:
		return op{kind: "edit", path: f, text: fmt.Sprintf("edited p%d c%d k%d\n", p, j, k)}
	case r < 10:
		return op{kind: "append", path: "log.txt", text: fmt.Sprintf("p%d c%d k%d\n", p, j, k)}
	case r < 13:
		return op{kind: "sappend", path: "log.txt", text: fmt.Sprintf("p%d c%d k%d\n", p, j, k), shared: s}
	case r < 15:
		return op{kind: "slot", path: "slots.md", shared: p*clients + j}
	case r < 16:
		return op{kind: "swrite", path: fmt.Sprintf("own/p%d-c%d.md", p, j), text: content(m, fmt.Sprintf("p%d c%d k%d\n", p, j, k), 200+int(m.Next()%1000)), shared: s}
	default:
		return op{kind: "read", path: f, shared: s}
	}
}

// slotThread is the shared thread holding the slot of client id.
func slotThread(id int) int { return id % sharedN }

func slotLine(id, n int) string { return fmt.Sprintf("slot %d: %d\n", id, n) }

func content(m *bench.Mulberry32, header string, size int) string {
	var b strings.Builder
	b.WriteString(header)
	for n := 1; b.Len() < size; n++ {
		b.WriteString("line " + strconv.Itoa(n) + ": ")
		for range 50 {
			b.WriteByte("abcdefghijklmnopqrstuvwxyz"[m.Next()%26])
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i+1]
	}
	return s
}

// applyPrivate applies a private op to the model of a client's thread.
func (o op) applyPrivate(files map[string]string) {
	switch o.kind {
	case "write":
		files[o.path] = o.text
	case "edit":
		if c, ok := files[o.path]; ok {
			files[o.path] = o.text + strings.TrimPrefix(c, firstLine(c))
		}
	case "append":
		files[o.path] += o.text
	}
}

// clientProcess runs clients concurrent clients for the given seconds and
// prints "ack P J K" for each acknowledged mutation, then "stats P OPS
// MUTATIONS CONFLICT-RETRIES".
func clientProcess(dsn, args string, stdout io.Writer) error {
	var p int
	var seconds float64
	var mix string
	if _, err := fmt.Sscanf(args, "%d %g %s", &p, &seconds, &mix); err != nil {
		return err
	}
	private := mix == "private"
	ctx := context.Background()
	b, err := postgres.Open(ctx, dsn)
	if err != nil {
		return err
	}
	cb := &countingBackend{Backend: b}
	st := satchel.New(cb)
	defer st.Close()
	shared := make([]*satchel.Workspace, sharedN)
	for s := range shared {
		if shared[s], err = st.Workspace(ctx, "load", "shared-"+strconv.Itoa(s)); err != nil {
			return err
		}
	}
	out := bufio.NewWriterSize(stdout, 1<<16)
	var mu sync.Mutex
	say := func(format string, a ...any) {
		mu.Lock()
		fmt.Fprintf(out, format+"\n", a...)
		mu.Unlock()
	}
	deadline := time.Now().Add(time.Duration(seconds * float64(time.Second)))
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	counts := make([][2]int, clients)
	for j := range clients {
		wg.Go(func() {
			ws, err := st.Workspace(ctx, "load", fmt.Sprintf("p%d-c%d", p, j))
			if err != nil {
				errs <- err
				return
			}
			model := map[string]string{}
			id, slot := p*clients+j, 0
			for k := 0; time.Now().Before(deadline); k++ {
				o := opFor(p, j, k, private)
				var err error
				switch o.kind {
				case "write":
					err = ws.Write(ctx, o.path, o.text)
				case "edit":
					var c string
					c, err = ws.Read(ctx, o.path)
					if errors.Is(err, satchel.ErrNotFound) {
						err = nil
						break
					}
					if err == nil {
						_, err = ws.StrReplace(ctx, o.path, firstLine(c), o.text, false)
					}
				case "append":
					err = ws.Append(ctx, o.path, o.text)
				case "sappend":
					err = shared[o.shared].Append(ctx, o.path, o.text)
				case "slot":
					_, err = shared[slotThread(id)].StrReplace(ctx, o.path, slotLine(id, slot), slotLine(id, slot+1), false)
					if err == nil {
						slot++
					}
				case "swrite":
					err = shared[o.shared].Write(ctx, o.path, o.text)
				case "read":
					var c string
					c, err = ws.Read(ctx, o.path)
					want, ok := model[o.path]
					switch {
					case errors.Is(err, satchel.ErrNotFound) && !ok:
						err = nil
					case err == nil && c != want:
						err = fmt.Errorf("read %s: %d bytes, not the %d last written", o.path, len(c), len(want))
					}
					if err == nil {
						_, err = shared[o.shared].Read(ctx, "log.txt")
						if errors.Is(err, satchel.ErrNotFound) {
							err = nil
						}
					}
				}
				if err != nil {
					errs <- fmt.Errorf("process %d client %d op %d (%s): %w", p, j, k, o.kind, err)
					return
				}
				o.applyPrivate(model)
				counts[j][0]++
				if o.kind != "read" {
					counts[j][1]++
					say("ack %d %d %d", p, j, k)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	var ops, muts int
	for _, c := range counts {
		ops += c[0]
		muts += c[1]
	}
	say("stats %d %d %d %d %d %d %d", p, ops, muts, cb.appends.Load(), cb.commits.Load(), cb.stale.Load(), cb.appendNs.Load())
	if err := out.Flush(); err != nil {
		all = append(all, err)
	}
	return errors.Join(all...)
}

// TestLoad runs the load with 1, 2 and 4 client processes against fresh
// schemas of one PostgreSQL database and checks every acknowledged
// operation after each run.
func TestLoad(t *testing.T) {
	testenv.Long(t, "load test")
	url := testenv.PostgresURL(t)
	seconds := 60.0
	if s := os.Getenv("SATCHEL_LOADTEST_SECONDS"); s != "" {
		seconds, _ = strconv.ParseFloat(s, 64)
	}
	// The mixed load (30% of operations on 4 shared threads) with 4
	// processes for the full duration, then 1 and 2 processes for a third
	// of it; then the private mix (every operation on the client's own
	// thread), which separates the cost of conflicts on shared threads
	// from the capacity of the machine.
	for _, mix := range []string{"mixed", "private"} {
		var base float64
		for _, procs := range []int{1, 2, 4} {
			d := seconds / 3
			if procs == 4 && mix == "mixed" {
				d = seconds
			}
			r := runLoad(t, url, procs, d, mix)
			if procs == 1 {
				base = r.opsPerSec
			}
			t.Logf("%s load, %d process(es) × %d clients, %.0f s: %.0f ops/s (%.0f mutations/s), %.2f× one process; "+
				"CPU: satchel %.2f cores, PostgreSQL %.2f, rest of the machine %.2f, idle %.2f of %d; "+
				"%.1f commits per Append (group commit), %.1f%% of commits stale (retried), %.0f µs per Append",
				mix, procs, clients, d, r.opsPerSec, r.mutsPerSec, r.opsPerSec/base,
				r.cpu.satchel, r.cpu.postgres, r.cpu.other, r.cpu.idle, r.cpu.cores,
				float64(r.commits)/float64(max(1, r.appends)), 100*float64(r.stale)/float64(max(1, r.commits)), float64(r.appendTime.Microseconds())/float64(max(1, r.appends)))
		}
	}
}

type loadResult struct {
	opsPerSec, mutsPerSec float64
	cpu                   cpuShares
	// What the clients' backends saw: Append calls, the commits in them,
	// those refused as stale (another process moved the head first: the
	// engine re-applies the mutation), and the time spent in Append.
	appends, commits, stale int
	appendTime              time.Duration
}

// countingBackend counts what a client process asks of PostgreSQL.
type countingBackend struct {
	backend.Backend
	appends, commits, stale, appendNs atomic.Int64
}

func (c *countingBackend) Append(ctx context.Context, ncs []backend.NewCommit) ([]backend.AppendResult, error) {
	t0 := time.Now()
	res, err := c.Backend.Append(ctx, ncs)
	c.appendNs.Add(int64(time.Since(t0)))
	c.appends.Add(1)
	c.commits.Add(int64(len(ncs)))
	for _, r := range res {
		if errors.Is(r.Err, backend.ErrStale) {
			c.stale.Add(1)
		}
	}
	return res, err
}

func runLoad(t *testing.T, url string, procs int, seconds float64, mix string) loadResult {
	ctx := t.Context()
	schema := fmt.Sprintf("satchel_load_%d_%s_%d", os.Getpid(), mix, procs)
	b, err := postgres.OpenFresh(ctx, url, schema)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { postgres.DropSchema(context.Background(), url, schema) })
	st := satchel.New(b)
	defer st.Close()
	shared := make([]*satchel.Workspace, sharedN)
	for s := range shared {
		shared[s], _ = st.Workspace(ctx, "load", "shared-"+strconv.Itoa(s))
		var slots strings.Builder
		for id := 0; id < procs*clients; id++ {
			if slotThread(id) == s {
				slots.WriteString(slotLine(id, 0))
			}
		}
		if err := shared[s].Write(ctx, "slots.md", slots.String()); err != nil {
			t.Fatal(err)
		}
	}
	dsn := url + map[bool]string{true: "&", false: "?"}[strings.Contains(url, "?")] + "search_path=" + schema

	start := time.Now()
	type proc struct {
		cmd    *exec.Cmd
		out    []string
		stderr strings.Builder
		done   chan struct{}
	}
	ps := make([]*proc, procs)
	for p := range ps {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), roleEnv+"=client", dsnEnv+"="+dsn, argsEnv+fmt.Sprintf("=%d %g %s", p, seconds, mix))
		pr := &proc{cmd: cmd, done: make(chan struct{})}
		cmd.Stderr = &pr.stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() {
			defer close(pr.done)
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				pr.out = append(pr.out, sc.Text())
			}
		}()
		ps[p] = pr
	}
	// Where the CPU goes, sampled from 10% to 90% of the run, while every
	// client and its connections are alive.
	var pids []int
	for _, pr := range ps {
		pids = append(pids, pr.cmd.Process.Pid)
	}
	time.Sleep(time.Duration(seconds * 0.1 * float64(time.Second)))
	cpu0 := sampleCPU(pids)
	time.Sleep(time.Duration(seconds * 0.8 * float64(time.Second)))
	shares := sampleCPU(pids).since(cpu0)

	var lines []string
	for p, pr := range ps {
		<-pr.done
		if err := pr.cmd.Wait(); err != nil {
			t.Fatalf("process %d: %v: %s", p, err, pr.stderr.String())
		}
		lines = append(lines, pr.out...)
	}
	elapsed := time.Since(start)

	// Replay: the models of every private thread, the lines of every shared
	// log, the slots, the last write of each shared own file.
	private := map[string]map[string]string{}
	sharedLog := make([]map[string]int, sharedN)
	ownLast := make([]map[string]string, sharedN)
	for s := range sharedN {
		sharedLog[s], ownLast[s] = map[string]int{}, map[string]string{}
	}
	slots := map[int]int{}
	var ops, muts int
	var res loadResult
	for _, l := range lines {
		var p, j, k int
		if _, err := fmt.Sscanf(l, "ack %d %d %d", &p, &j, &k); err == nil {
			o := opFor(p, j, k, mix == "private")
			thread := fmt.Sprintf("p%d-c%d", p, j)
			if private[thread] == nil {
				private[thread] = map[string]string{}
			}
			switch o.kind {
			case "sappend":
				sharedLog[o.shared][o.text]++
			case "slot":
				slots[p*clients+j]++
			case "swrite":
				// The last acknowledged write of a client's own file wins only
				// per thread: writes of one client are sequential.
				ownLast[o.shared][o.path] = o.text
			default:
				o.applyPrivate(private[thread])
			}
			continue
		}
		var proc, n, m, a, c, stale, ns int
		if _, err := fmt.Sscanf(l, "stats %d %d %d %d %d %d %d", &proc, &n, &m, &a, &c, &stale, &ns); err == nil {
			ops += n
			muts += m
			res.appends += a
			res.commits += c
			res.stale += stale
			res.appendTime += time.Duration(ns)
			continue
		}
		t.Fatalf("bad line %q", l)
	}
	if muts != len(lines)-procs {
		t.Errorf("%d mutations counted, %d acknowledged", muts, len(lines)-procs)
	}

	// Check.
	for thread, want := range private {
		ws, _ := st.Workspace(ctx, "load", thread)
		got := map[string]string{}
		paths, err := ws.List(ctx, "", satchel.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			if got[p], err = ws.Read(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
		if !maps.Equal(got, want) {
			t.Errorf("thread %s differs from its acknowledged ops: %d files, want %d", thread, len(got), len(want))
		}
	}
	for s, ws := range shared {
		text, err := ws.Read(ctx, "log.txt")
		if err != nil && !errors.Is(err, satchel.ErrNotFound) {
			t.Fatal(err)
		}
		got := map[string]int{}
		for _, l := range strings.SplitAfter(text, "\n") {
			if l != "" {
				got[l]++
			}
		}
		if !maps.Equal(got, sharedLog[s]) {
			t.Errorf("shared-%d/log.txt: %d distinct lines, %d acknowledged appends (each must be there once)", s, len(got), len(sharedLog[s]))
		}
		slotText, err := ws.Read(ctx, "slots.md")
		if err != nil {
			t.Fatal(err)
		}
		var want strings.Builder
		for id := 0; id < procs*clients; id++ {
			if slotThread(id) == s {
				want.WriteString(slotLine(id, slots[id]))
			}
		}
		if slotText != want.String() {
			t.Errorf("shared-%d/slots.md differs from the acknowledged edits", s)
		}
	}
	// A client's own file on a shared thread is written by that client
	// only, but it may have written it on several shared threads: each
	// thread holds the last write acknowledged on it.
	for s, ws := range shared {
		for path, want := range ownLast[s] {
			got, err := ws.Read(ctx, path)
			if err != nil || got != want {
				t.Errorf("shared-%d/%s is not its last acknowledged write (%v)", s, path, err)
			}
		}
	}
	res.opsPerSec, res.mutsPerSec, res.cpu = float64(ops)/elapsed.Seconds(), float64(muts)/elapsed.Seconds(), shares
	return res
}
