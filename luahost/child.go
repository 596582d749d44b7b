package luahost

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/satchel-dev/satchel"
)

// ErrCrashed is the kind of the error of a run whose child process died
// of something other than a limit (`script crashed: ...`).
var ErrCrashed = errors.New("script crashed")

// A run executes in a child process: the program itself started again
// (os.Executable) with childEnv set, where ChildMain takes over. The
// child holds the Lua interpreter only; it reaches the store through the
// parent over its stdin and stdout (proto.go, hostSide), under the
// operating system's limits on its memory and CPU time, and the parent
// kills it at the run's time limit. A child that dies ends its run, never
// the parent (docs/decisions/0105-lua-runs-in-child-processes.md).

// childEnv is the environment variable that makes a process a child.
const childEnv = "SATCHEL_LUA_CHILD"

// memoryHeadroom is what the child's runtime may take beside the run's
// own memory limit before the operating system refuses it more.
const memoryHeadroom = 64 << 20

// pipeBytes is what the pipe from a child holds (the system's default is
// 64 KiB): the child's posted calls wait there for the parent, and a
// child that can write many before the parent reads them is woken less
// often (docs/decisions/0154-lua-frames-read-ahead.md).
const pipeBytes = 1 << 20

// killGrace is how long past its time limit the parent lets a child end
// the run itself before it kills it.
const killGrace = 500 * time.Millisecond

// ChildMain makes this process a run's child process when it was started
// as one, and then exits; otherwise it returns at once. Every program that
// runs scripts calls it first in main (and test binaries first in
// TestMain): the child is the program itself, started again.
func ChildMain() {
	if os.Getenv(childEnv) != "1" {
		return
	}
	smallStacks()
	in, out := childPipes()
	os.Exit(childProcess(in, out))
}

// childProcess is a child's life: it says hello, waits for its run, runs
// it under the limits, reports how it ended, and exits. Its store calls
// go to the parent; it exits if the parent goes.
func childProcess(in io.Reader, out io.Writer) int {
	c := newConn(in, out)
	warmUp()
	// The run's main state is made before the run comes: its functions
	// read the run's fields when called, set below.
	rh := &remoteHost{c: c, wait: map[uint64]chan *frame{}, dead: make(chan struct{})}
	r := &run{host: rh, out: func(s string) { _ = c.send(&frame{op: opPrint, s: []string{s}}) }}
	L := (&armState{r: r, ws: rootHandle}).newState()
	if err := c.send(&frame{op: opHello}); err != nil {
		return 2
	}
	start, err := c.recv()
	if err != nil || start.op != opStart || len(start.s) < 2 || len(start.n) < 3 {
		return 2
	}
	lim := limits{timeout: time.Duration(start.n[0]), maxMemory: start.n[1], fanoutMax: int(start.n[2])}
	applyLimits(lim)
	debug.SetMemoryLimit(lim.maxMemory + memoryHeadroom/2)
	done := func(o outcome) int {
		if err := c.send(&frame{op: opDone, n: []int64{o.end}, s: []string{o.msg}}); err != nil {
			return 2
		}
		return 0
	}
	sc, err := Compile(start.s[0], start.s[1])
	if err != nil {
		return done(outcome{endScript, err.Error()})
	}
	go rh.read()
	ready := newRun(sc, start.s[2:], lim, rh, r.out)
	*r = *ready
	o := r.interpretIn(context.Background(), true, L)
	if o.end != endStopped {
		// A posted call that failed ended the script where it was made,
		// whatever the script did after it.
		ctx, cancel := context.WithTimeout(context.Background(), killGrace)
		var pf *postFailure
		if err := rh.sync(ctx); errors.As(err, &pf) {
			o = outcome{endScript, pf.msg}
		}
		cancel()
	}
	return done(o)
}

// dataLimit is the data segment the operating system gives a child: its
// run's limit, half as much again for the collector to work in, and the
// runtime's own. The run's limit itself is enforced on the live heap, at
// every collection and by the watchdog (memory.go); this limit stops what
// they cannot, one allocation far past the limit.
func dataLimit(maxMemory int64) uint64 {
	return uint64(maxMemory + maxMemory/2 + memoryHeadroom)
}

// warmUp runs a script that does nothing, before the child says hello:
// the code of the compiler and of a state's libraries is then in memory
// when a run comes (a child from a Pool starts its run the sooner).
func warmUp() {
	sc, err := Compile("warm-up.lua", `local t = {string.format("%d", 1), math.floor(1.5), table.concat({"a"})} print(t)`)
	if err != nil {
		return
	}
	r := newRun(sc, nil, limits{timeout: time.Second, maxMemory: DefaultMaxMemory, fanoutMax: 1}, nil, func(string) {})
	r.interpret(context.Background(), false)
}

// remoteHost is the child's end of the pipe: calls wait for the parent's
// answer by their id; posted calls (post) do not wait.
type remoteHost struct {
	c    *conn
	mu   sync.Mutex
	next uint64
	wait map[uint64]chan *frame
	dead chan struct{}
	// failed is the message of the first posted call that failed, with
	// where the script made it; posted says calls were posted since the
	// last answer.
	failed string
	posted bool
}

// postFailure is a posted call's failure, raised at a later call: its
// message carries the line of the call that failed.
type postFailure struct{ msg string }

func (e *postFailure) Error() string { return e.msg }

// post sends a call that answers nothing without waiting for it; where is
// the script's position of the call. The parent carries calls out in
// order and, once a posted call failed, none after it: the next call
// that waits (sync) raises the failure.
func (rh *remoteHost) post(f *frame, where string) error {
	rh.mu.Lock()
	rh.next++
	f.id = rh.next
	rh.posted = true
	rh.mu.Unlock()
	f.op |= opAsync
	f.s = append(f.s, where)
	return rh.c.send(f)
}

// sync waits until every posted call is done, and returns the first
// failure among them.
func (rh *remoteHost) sync(ctx context.Context) error {
	rh.mu.Lock()
	posted := rh.posted
	rh.mu.Unlock()
	if !posted {
		return nil
	}
	_, err := rh.call(ctx, &frame{op: opSync})
	return err
}

func (rh *remoteHost) call(ctx context.Context, f *frame) (*frame, error) {
	ch := make(chan *frame, 1)
	rh.mu.Lock()
	rh.next++
	f.id = rh.next
	rh.wait[f.id] = ch
	rh.mu.Unlock()
	if err := rh.c.send(f); err != nil {
		return nil, err
	}
	var res *frame
	select {
	case res = <-ch:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	case <-rh.dead:
		return nil, errors.New("luahost: the parent process is gone")
	}
	rh.mu.Lock()
	rh.posted = false
	failed := rh.failed
	rh.mu.Unlock()
	if failed != "" {
		return nil, &postFailure{failed}
	}
	if res.op == opErr {
		return nil, errors.New(res.str(0))
	}
	return res, nil
}

// read delivers the parent's answers; the child exits when the parent
// closes the pipe.
func (rh *remoteHost) read() {
	for {
		f, err := rh.c.recv()
		if err != nil {
			close(rh.dead)
			os.Exit(3)
		}
		rh.mu.Lock()
		ch := rh.wait[f.id]
		delete(rh.wait, f.id)
		if ch == nil && f.op == opErr && rh.failed == "" { // a posted call's failure
			rh.failed = f.str(0)
		}
		rh.mu.Unlock()
		if ch != nil {
			ch <- f
		}
	}
}

// child is a child process seen from the parent.
type child struct {
	cmd    *exec.Cmd
	c      *conn
	stdin  io.Closer
	stderr *headBuffer
	killed atomic.Bool
}

// errNoChild is a child process that did not start as one.
var errNoChild = errors.New("the Lua host's child process did not start (a program that runs scripts calls luahost.ChildMain first in main)")

// startChild starts a child process and waits for its hello.
func startChild() (*child, error) {
	exe, err := executable()
	if err != nil {
		return nil, fmt.Errorf("luahost: cannot start a child process: %w", err)
	}
	cmd := exec.Command(exe)
	cmd.Env = []string{childEnv + "=1"}
	cmd.SysProcAttr = sysProcAttr()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	widenPipe(stdout)
	ch := &child{cmd: cmd, stdin: stdin, stderr: &headBuffer{max: 16 << 10}}
	cmd.Stderr = ch.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("luahost: cannot start a child process: %w", err)
	}
	ch.c = newConn(stdout, stdin)
	hello := make(chan error, 1)
	go func() {
		f, err := ch.c.recv()
		if err == nil && f.op != opHello {
			err = errFrame
		}
		hello <- err
	}()
	select {
	case err = <-hello:
	case <-time.After(10 * time.Second):
		err = errors.New("timeout")
	}
	if err != nil {
		ch.kill()
		_ = cmd.Wait()
		return nil, errNoChild
	}
	return ch, nil
}

// kill ends the child at once.
func (ch *child) kill() {
	ch.killed.Store(true)
	_ = ch.cmd.Process.Kill()
}

// headBuffer keeps the first max bytes written to it.
type headBuffer struct {
	mu  sync.Mutex
	b   bytes.Buffer
	max int
}

func (h *headBuffer) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if room := h.max - h.b.Len(); room > 0 {
		h.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (h *headBuffer) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.b.String()
}

// execChild runs the script in a child process, serving its calls with h
// until it reports its end or dies.
func (s *Script) execChild(ctx context.Context, cfg *Config, h *hostSide) error {
	var ch *child
	var err error
	if cfg.Pool != nil {
		ch, err = cfg.Pool.get()
	} else {
		ch, err = startChild()
	}
	if err != nil {
		return err
	}
	out := &output{w: cfg.Stdout}
	start := &frame{op: opStart, s: append([]string{s.Name, s.src}, cfg.Args...),
		n: []int64{int64(cfg.Timeout), cfg.MaxMemory, int64(cfg.FanoutMax)}}
	if err = ch.c.send(start); err != nil && cfg.Pool != nil {
		// A child that died waiting in the pool: start another.
		ch.kill()
		_ = ch.cmd.Wait()
		if ch, err = startChild(); err != nil {
			return err
		}
		err = ch.c.send(start)
	}
	if err != nil {
		ch.kill()
	}
	// What the child sends is bounded by what it may hold.
	ch.c.max = max(cfg.MaxMemory, MaxScriptBytes) + 1<<20
	var timedOut atomic.Bool
	killAfter := cfg.Timeout + killGrace
	if killAfter < cfg.Timeout { // a timeout near the largest duration
		killAfter = cfg.Timeout
	}
	wall := time.AfterFunc(killAfter, func() { timedOut.Store(true); ch.kill() })
	// The store calls end with the run's time too.
	callCtx, cancelCalls := context.WithTimeout(ctx, killAfter)
	defer cancelCalls()
	defer wall.Stop()
	stopCancel := context.AfterFunc(ctx, ch.kill)
	defer stopCancel()

	var calls sync.WaitGroup
	var o *outcome
	failed := false // a posted call failed
	frames := startReadAhead(ch.c)
	defer frames.stop()
	for {
		f, err := frames.next()
		if err != nil {
			break
		}
		switch f.op {
		case opPrint:
			if !failed {
				out.write(f.str(0))
			}
			continue
		case opDone:
			o = &outcome{f.num(0), f.str(0)}
		case opSync:
			res := &frame{op: opOK, id: f.id}
			if failed {
				res.op = opErr
			}
			_ = ch.c.send(res)
			continue
		default:
			if f.op&opAsync != 0 {
				// A posted call: answered only when it fails; after a
				// failure nothing more of the run is carried out.
				f.op &^= opAsync
				where := f.str(len(f.s) - 1)
				f.s = f.s[:max(len(f.s)-1, 0)]
				if failed {
					continue
				}
				if _, err := h.do(callCtx, f); err != nil {
					failed = true
					_ = ch.c.send(&frame{op: opErr, id: f.id, s: []string{where + " " + err.Error()}})
				}
				continue
			}
			if failed { // the child raises the failure at this call
				_ = ch.c.send(&frame{op: opErr, id: f.id})
				continue
			}
			answer := func() {
				res, err := h.do(callCtx, f)
				if err != nil {
					res = &frame{op: opErr, s: []string{err.Error()}}
				} else {
					res.op = opOK
				}
				res.id = f.id
				_ = ch.c.send(res)
			}
			if !h.fanning() { // one Lua state: its calls come one at a time
				answer()
				continue
			}
			calls.Add(1)
			go func() {
				defer calls.Done()
				answer()
			}()
			continue
		}
		break
	}
	byParent := ch.killed.Load()
	ch.kill()
	_ = ch.stdin.Close()
	h.close()
	calls.Wait()
	waitErr := ch.cmd.Wait()
	if o != nil {
		return s.outcomeError(*o, h)
	}
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("script %s was stopped: %w", s.Name, context.Cause(ctx))
	case timedOut.Load():
		return limitError("script exceeded its time limit (%s)", cfg.Timeout)
	}
	stderr := ch.stderr.String()
	if overCPU(ch.cmd.ProcessState, cfg.Timeout) {
		return limitError("script exceeded its time limit (%s)", cfg.Timeout)
	}
	if memoryDeath(stderr) || (!byParent && killedBySystem(ch.cmd.ProcessState)) {
		return limitError("script exceeded its memory limit (%s)", formatBytes(cfg.MaxMemory))
	}
	return &satchel.Error{Kind: ErrCrashed, Msg: "script crashed: " + crashLine(stderr, waitErr)}
}

// memoryDeath says whether a dead child's report shows that the system
// refused it memory. The runtime does not always fail cleanly then: it
// may fault in its own code (the collector's), where nothing else
// faults, the child running no code of its own outside Go.
func memoryDeath(stderr string) bool {
	for _, s := range []string{"out of memory", "cannot allocate memory", "errno=12", "pthread_create failed"} {
		if strings.Contains(stderr, s) {
			return true
		}
	}
	if !strings.HasPrefix(stderr, "SIGSEGV") && !strings.HasPrefix(stderr, "unexpected fault address") {
		return false
	}
	// The first frame of the faulting goroutine: "goroutine N ...:\nFRAME(".
	_, after, ok := strings.Cut(stderr, "\ngoroutine ")
	if !ok {
		return false
	}
	_, frame, _ := strings.Cut(after, "\n")
	return strings.HasPrefix(frame, "runtime.")
}

// crashLine is the first line of a dead child's report, or how it ended.
func crashLine(stderr string, waitErr error) string {
	for _, line := range strings.Split(stderr, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "fatal error: ") || strings.HasPrefix(line, "panic: ") {
			return line
		}
	}
	if line, _, _ := strings.Cut(strings.TrimSpace(stderr), "\n"); line != "" {
		return line
	}
	if waitErr != nil {
		return waitErr.Error()
	}
	return "the child process ended without a result"
}

// cpuSeconds is the CPU time a run may take: its time limit on every
// core, and a second.
func cpuSeconds(timeout time.Duration) uint64 {
	secs := uint64(timeout/time.Second) + 1
	return secs*uint64(runtime.NumCPU()) + 1
}

// Pool keeps child processes started ahead of the runs that will take
// them, so that a run starts without waiting for a process to start.
type Pool struct {
	ch   chan *child
	done chan struct{}
	once sync.Once
	wg   sync.WaitGroup
}

// NewPool starts a pool that keeps n children ready (at least one).
func NewPool(n int) *Pool {
	p := &Pool{ch: make(chan *child, max(n-1, 0)), done: make(chan struct{})}
	p.wg.Add(1)
	go p.fill()
	return p
}

func (p *Pool) fill() {
	defer p.wg.Done()
	for {
		c, err := startChild()
		if err != nil {
			select {
			case <-time.After(time.Second):
				continue
			case <-p.done:
				return
			}
		}
		select {
		case p.ch <- c:
		case <-p.done:
			c.kill()
			_ = c.cmd.Wait()
			return
		}
	}
}

// get returns a ready child, or starts one when none is ready.
func (p *Pool) get() (*child, error) {
	select {
	case c := <-p.ch:
		return c, nil
	default:
		return startChild()
	}
}

// Close stops the pool's children.
func (p *Pool) Close() {
	p.once.Do(func() { close(p.done) })
	p.wg.Wait()
	for {
		select {
		case c := <-p.ch:
			c.kill()
			_ = c.cmd.Wait()
		default:
			return
		}
	}
}
