// Package shell runs POSIX shell and bash scripts over a workspace's files
// (docs/shell.md): mvdan.cc/sh/v3 parses and interprets the script, with
// its open, stat, read-directory and exec handlers bound to the files of
// one commit under an in-memory overlay of what the run writes, and every
// command is written in Go here. No host file, process, environment
// variable or network is reachable from a script.
//
// A run is bounded in time, in output, in the bytes it may hold (the
// overlay and what a command buffers), in commands run and in call depth
// (docs/decisions/0145-shell-in-process.md). Its changes come back as a
// list for the caller to commit at once.
package shell

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// Defaults of Options.
const (
	DefaultTimeout     = 30 * time.Second
	DefaultMaxOutput   = 1 << 20
	DefaultMaxMemory   = 256 << 20
	DefaultMaxCommands = 1_000_000
	// MaxDepth bounds the Go stack a run may use, in frames: a recursive
	// function ends with an error before it can exhaust the stack.
	MaxDepth = 40_000
	// MaxPipelines bounds the goroutines a run may add to the process's,
	// each a pipeline stage holding two file descriptors.
	MaxPipelines = 1_000
)

// Options configure a run. Zero values take the defaults.
type Options struct {
	// Stdin is the script's standard input (none when nil).
	Stdin io.Reader
	// Timeout bounds the run's time (DefaultTimeout).
	Timeout time.Duration
	// MaxOutput bounds the standard output and error captured, together;
	// a run that writes more is stopped (DefaultMaxOutput).
	MaxOutput int64
	// MaxMemory bounds the bytes the run's pending writes hold, and those
	// any one command buffers (DefaultMaxMemory).
	MaxMemory int64
	// MaxCommands bounds the commands run, builtins and functions
	// included (DefaultMaxCommands).
	MaxCommands int64
	// MaxFileBytes bounds one file's size (64 MiB when 0).
	MaxFileBytes int64
	// CheckPath validates a path the run writes or deletes (nil: any).
	CheckPath func(path string) error
	// Now is the clock `date` shows (time.Now when zero).
	Now time.Time
	// MaxDepth bounds the Go stack frames of the run (MaxDepth when 0).
	MaxDepth int
}

// Result is what a run did.
type Result struct {
	Stdout string `json:"stdout"`
	Stderr string `json:"stderr"`
	// Exit is the script's exit status.
	Exit int `json:"exit_status"`
	// Changes are the files the run changed, sorted by path.
	Changes []Change `json:"-"`
}

// A LimitError ends a run that went past one of its bounds; nothing of
// the run is kept.
type LimitError struct{ Msg string }

func (e *LimitError) Error() string { return e.Msg }

// limits are a run's bounds and the way a command stops the run.
type limits struct {
	memory, fileBytes, output, commands int64
	validPath                           func(string) error

	depth  int
	ran    atomic.Int64
	cancel context.CancelCauseFunc
}

func (l *limits) fail(err error) error {
	l.cancel(err)
	return err
}

func (l *limits) checkPath(p string) error {
	if l.validPath == nil {
		return nil
	}
	return l.validPath(p)
}

func sizeText(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return strconv.FormatInt(n>>30, 10) + " GiB"
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// ParseError is a script that does not parse.
type ParseError struct{ Msg string }

func (e *ParseError) Error() string { return e.Msg }

// Parse parses script as bash and refuses what a run cannot do (process
// substitution, which needs a host FIFO).
func Parse(script string) (*syntax.File, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(script), "")
	if err != nil {
		return nil, &ParseError{Msg: "sh: " + err.Error()}
	}
	var bad error
	syntax.Walk(f, func(n syntax.Node) bool {
		if bad != nil {
			return false
		}
		switch n := n.(type) {
		case *syntax.ProcSubst:
			bad = &ParseError{Msg: fmt.Sprintf("sh: %s: process substitution is not supported", n.Pos())}
		case *syntax.CoprocClause:
			bad = &ParseError{Msg: fmt.Sprintf("sh: %s: coproc is not supported", n.Pos())}
		}
		return true
	})
	if bad != nil {
		return nil, bad
	}
	return f, nil
}

// Run runs script over the files of base (a workspace's files at one
// commit). The error is a *ParseError, a *LimitError, or the context's;
// a script that fails has an exit status, not an error.
func Run(ctx context.Context, script string, base fs.FS, o Options) (res *Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, fmt.Errorf("sh: internal error: %v", r)
		}
	}()
	file, err := Parse(script)
	if err != nil {
		return nil, err
	}
	file.Name = "sh" // $0
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxOutput <= 0 {
		o.MaxOutput = DefaultMaxOutput
	}
	if o.MaxMemory <= 0 {
		o.MaxMemory = DefaultMaxMemory
	}
	if o.MaxCommands <= 0 {
		o.MaxCommands = DefaultMaxCommands
	}
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = 64 << 20
	}
	if o.MaxDepth <= 0 {
		o.MaxDepth = MaxDepth
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	ctx, cancelT := context.WithTimeoutCause(ctx, o.Timeout, &LimitError{Msg: fmt.Sprintf("sh: the run took longer than --timeout (%s): it was stopped", o.Timeout)})
	defer cancelT()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// A watchdog for what the byte counts cannot see (a jq or awk
	// program building a value in memory): the heap may not grow past
	// 4 × MaxMemory + 64 MiB while the run lasts.
	go watchHeap(ctx, 4*o.MaxMemory+64<<20, func(n int64) {
		cancel(&LimitError{Msg: fmt.Sprintf("sh: the run took more memory than its limit allows (%s): the run was stopped", sizeText(n))})
	})
	lim := &limits{memory: o.MaxMemory, fileBytes: o.MaxFileBytes, output: o.MaxOutput, commands: o.MaxCommands, validPath: o.CheckPath, depth: o.MaxDepth, cancel: cancel}
	out := &capture{lim: lim}
	env := &environment{v: newVFS(base, lim, o.Now), lim: lim, now: o.Now, out: out}
	stdin := o.Stdin
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	r, err := interp.New(env.runnerOptions(expand.ListEnviron(baseEnv...), stdin, out.w(&out.stdout), out.w(&out.stderr))...)
	if err != nil {
		return nil, err
	}
	env.goroutines = runtime.NumGoroutine()
	runErr := r.Run(ctx, file)
	if cause := context.Cause(ctx); cause != nil {
		var le *LimitError
		if errors.As(cause, &le) {
			return nil, le
		}
		return nil, cause
	}
	if le := (*LimitError)(nil); errors.As(runErr, &le) {
		return nil, le
	}
	res = &Result{Stdout: out.stdout.String(), Stderr: out.stderr.String()}
	if st, ok := interp.IsExitStatus(runErr); ok {
		res.Exit = int(st)
	} else if runErr != nil {
		res.Stderr += "sh: " + runErr.Error() + "\n"
		res.Exit = 2
	}
	res.Changes = env.v.changes()
	return res, nil
}

// watchHeap calls stop when the process's heap grows by more than
// limit bytes from when it starts, checking every 10 ms until ctx ends.
func watchHeap(ctx context.Context, limit int64, stop func(limit int64)) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	heap := func() int64 {
		metrics.Read(sample)
		return int64(sample[0].Value.Uint64())
	}
	base := heap()
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if heap()-base > limit {
				stop(limit)
				return
			}
		}
	}
}

// baseEnv is a run's environment: nothing of the host's.
var baseEnv = []string{"HOME=/", "PATH=/bin", "PWD=/", "UID=0", "EUID=0", "GID=0", "USER=satchel", "SHELL=/bin/sh", "LANG=C.UTF-8", "TMPDIR=/tmp"}

// runnerOptions bind an interpreter to the run's files and commands.
func (e *environment) runnerOptions(env expand.Environ, stdin io.Reader, stdout, stderr io.Writer) []interp.RunnerOption {
	return []interp.RunnerOption{
		interp.Env(env),
		interp.Dir("/"), // the host's root, only stat'ed: every path is the workspace's
		interp.StdIO(stdin, stdout, stderr),
		interp.OpenHandler(e.open),
		interp.StatHandler(e.statHandler),
		interp.ReadDirHandler2(e.readDirHandler),
		interp.AccessHandler(e.access),
		interp.CallHandler(e.call),
		interp.ExecHandler(e.exec),
	}
}

// capture holds a run's stdout and stderr, up to the output limit
// together; past it, the run is stopped.
type capture struct {
	mu             sync.Mutex
	stdout, stderr bytes.Buffer
	lim            *limits
}

type captureWriter struct {
	c   *capture
	buf *bytes.Buffer
}

func (c *capture) w(b *bytes.Buffer) io.Writer { return &captureWriter{c: c, buf: b} }

func (w *captureWriter) Write(p []byte) (int, error) {
	c := w.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if int64(c.stdout.Len()+c.stderr.Len()+len(p)) > c.lim.output {
		return 0, c.lim.fail(&LimitError{Msg: fmt.Sprintf("sh: the output is over --max-output (%s): the run was stopped", sizeText(c.lim.output))})
	}
	return w.buf.Write(p)
}

// environment binds the interpreter's handlers to the run's files.
type environment struct {
	v   *vfs
	lim *limits
	now time.Time
	out *capture
	// goroutines is the process's count when the run started.
	goroutines int
}

// pcPool holds the buffers the stack depth is measured with.
var pcPool = sync.Pool{New: func() any { b := make([]uintptr, MaxDepth); return &b }}

// call counts every command (builtins and functions too) against the
// cap, and checks the stack depth now and then.
func (e *environment) call(ctx context.Context, args []string) ([]string, error) {
	n := e.lim.ran.Add(1)
	if n > e.lim.commands {
		return nil, e.lim.fail(&LimitError{Msg: fmt.Sprintf("sh: the run was stopped after %d commands (the cap on commands run)", e.lim.commands)})
	}
	if n%64 == 0 {
		pcs := pcPool.Get().(*[]uintptr)
		deep := runtime.Callers(0, (*pcs)[:min(e.lim.depth, MaxDepth)]) == min(e.lim.depth, MaxDepth)
		pcPool.Put(pcs)
		if deep {
			return nil, e.lim.fail(&LimitError{Msg: "sh: the calls nest too deeply (a recursive function?): the run was stopped"})
		}
	}
	// Each stage of a pipeline runs in a goroutine of its own, with a
	// pipe: a function that pipes into itself would take every file
	// descriptor of the process.
	if g := runtime.NumGoroutine(); g > e.goroutines+MaxPipelines {
		return nil, e.lim.fail(&LimitError{Msg: fmt.Sprintf("sh: more than %d commands run at once (a function that pipes into itself?): the run was stopped", MaxPipelines)})
	}
	switch args[0] {
	case "type", "hash":
		// They would look commands up in the host's PATH.
		return append([]string{"satchel-" + args[0]}, args[1:]...), nil
	case "command":
		if len(args) > 1 && (args[1] == "-v" || args[1] == "-V") {
			return append([]string{"satchel-command"}, args[1:]...), nil
		}
	}
	return args, nil
}

func pathErr(op, p string, err error) error {
	return &fs.PathError{Op: op, Path: p, Err: err}
}

// devNull reads nothing and writes anywhere.
type devNull struct{}

func (devNull) Read([]byte) (int, error)          { return 0, io.EOF }
func (devNull) Write(b []byte) (int, error)       { return len(b), nil }
func (devNull) Close() error                      { return nil }
func (r *rfile) Write(b []byte) (int, error)      { return 0, errors.New("bad file descriptor") }
func (r *rfile) Close() error                     { return nil }
func (r *rfile) Read(b []byte) (int, error)       { return r.r.Read(b) }
func (w *writerNoClose) Close() error             { return nil }
func (w *writerNoClose) Read([]byte) (int, error) { return 0, io.EOF }

type rfile struct{ r io.Reader }
type writerNoClose struct{ io.Writer }

func (e *environment) open(ctx context.Context, p string, flag int, _ fs.FileMode) (io.ReadWriteCloser, error) {
	hc := interp.HandlerCtx(ctx)
	switch p {
	case "/dev/null":
		return devNull{}, nil
	case "/dev/stdout":
		return &writerNoClose{hc.Stdout}, nil
	case "/dev/stderr":
		return &writerNoClose{hc.Stderr}, nil
	case "/dev/stdin":
		return &rfile{hc.Stdin}, nil
	}
	rp := rel(hc.Dir, p)
	if flag&(1|2) == 0 { // O_RDONLY
		b, err := e.v.readFile(rp)
		if err != nil {
			return nil, pathErr("open", p, errText(err))
		}
		return &rfile{bytes.NewReader(b)}, nil
	}
	f, err := e.v.create(rp, flag&0o2000 != 0) // O_APPEND
	if err != nil {
		if isLimit(err) {
			return nil, e.lim.fail(err)
		}
		return nil, pathErr("open", p, errText(err))
	}
	return f, nil
}

func isLimit(err error) bool {
	var le *LimitError
	return errors.As(err, &le)
}

func (e *environment) statHandler(ctx context.Context, p string, _ bool) (fs.FileInfo, error) {
	hc := interp.HandlerCtx(ctx)
	if p == "/dev/null" {
		return dirInfo{name: "null"}, nil
	}
	fi, err := e.v.stat(rel(hc.Dir, p))
	if err != nil {
		return nil, pathErr("stat", p, err)
	}
	return fi, nil
}

func (e *environment) readDirHandler(ctx context.Context, p string) ([]fs.DirEntry, error) {
	hc := interp.HandlerCtx(ctx)
	ents, err := e.v.readDir(rel(hc.Dir, p))
	if err != nil {
		return nil, pathErr("readdir", p, err)
	}
	return ents, nil
}

func (e *environment) access(ctx context.Context, p string, mode interp.AccessMode) error {
	hc := interp.HandlerCtx(ctx)
	fi, err := e.v.stat(rel(hc.Dir, p))
	if err != nil {
		return pathErr("access", p, err)
	}
	if mode&interp.AccessMode(1) != 0 && !fi.IsDir() { // X_OK: no file is executable
		return pathErr("access", p, fs.ErrPermission)
	}
	return nil
}
