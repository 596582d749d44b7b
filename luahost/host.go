package luahost

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/satchel-dev/satchel"
)

// Defaults of Config.
const (
	DefaultTimeout   = 30 * time.Second
	DefaultMaxMemory = 256 << 20
	DefaultFanoutMax = 8
	// MaxFanoutDepth is how deep fanouts nest (an arm calling fanout).
	MaxFanoutDepth = 8
)

// Config is what a run works on and how it is bounded. Zero values take
// the defaults.
type Config struct {
	// Store is the store the script's `store` and `docs` use. Required.
	Store *satchel.Store
	// Scope and Thread name the workspace (default "default" and "main").
	Scope, Thread string
	// Actor is recorded in every commit the run makes; an empty Via
	// becomes "lua:" and the script's name.
	Actor satchel.Actor

	// Project holds the collections `docs` serves (nil: none), with the
	// access of Agent (empty: an operator).
	Project *satchel.Project
	Agent   string

	// Args are the script's arguments: `args` joins them with spaces and
	// `arg` holds them as a sequence.
	Args []string
	// Input, when set, is written at the script's declared input path
	// before it runs (see ResolveInput).
	Input *string
	// Stdout receives what the script prints (nil: discarded).
	Stdout io.Writer

	// Timeout bounds the run, every fanout arm included.
	Timeout time.Duration
	// MaxMemory bounds the memory the run may take, in bytes.
	MaxMemory int64
	// FanoutMax bounds how many arms of one fanout run at once.
	FanoutMax int

	// Atomic runs the script on a fork of the thread and publishes its
	// commits onto the thread only if it succeeds, with one
	// compare-and-swap of the head.
	Atomic bool
}

// Result is what a successful run did.
type Result struct {
	// Output is the content of the declared output; Produced says whether
	// the script declared one and it exists.
	Output   string
	Produced bool
	// Commits are the commits the run made, oldest first (with Atomic,
	// those it made on its fork, then Published).
	Commits []satchel.Commit
	// Published is the commit that published an atomic run's work onto
	// the thread (nil when it made no change, or without Atomic).
	Published *satchel.Commit
}

// Error is a run that failed: the message says why, as the script
// would read it ("seed.lua:12: anchor occurs 2 times in a.md, expected
// exactly one"); Unwrap gives the refusal's kind (errors.Is with
// satchel.ErrAmbiguousAnchor) when the error came from the Go API.
type Error struct {
	Msg string
	Err error
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.Err }

// limitError is the error of a run stopped for a limit.
func limitError(format string, args ...any) error {
	return &satchel.Error{Kind: satchel.ErrLimitExceeded, Msg: fmt.Sprintf(format, args...)}
}

// run is the state one run shares between its Lua states (the main one
// and the fanout arms').
type run struct {
	ctx       context.Context
	stop      context.CancelCauseFunc
	cfg       *Config
	script    *Script
	env       *satchel.Run
	out       *output
	maxMemory int64
	memErr    error
	fanoutMax int

	errMu sync.Mutex
	errs  map[string]error // messages raised from Go errors, to their errors

	colMu sync.Mutex
	cols  map[string]*satchel.Collection
}

// armState is one Lua state of a run: the main script or a fanout arm.
type armState struct {
	r     *run
	ws    *satchel.Workspace
	depth int
}

// Run runs the script. A failure is an *Error (the script's error, with
// its file and line), or a limit (`script exceeded its time limit (30s)`,
// `script exceeded its memory limit (256 MiB)`), or an input or output
// refusal; with Atomic, a thread that moved during the run is
// `thread T changed during the run; nothing was published (...)`.
func (s *Script) Run(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.Store == nil {
		return nil, errors.New("luahost: Config.Store is required")
	}
	if cfg.Scope == "" {
		cfg.Scope = "default"
	}
	if cfg.Thread == "" {
		cfg.Thread = "main"
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxMemory <= 0 {
		cfg.MaxMemory = DefaultMaxMemory
	}
	if cfg.FanoutMax <= 0 {
		cfg.FanoutMax = DefaultFanoutMax
	}
	if cfg.Actor.Via == "" {
		cfg.Actor.Via = "lua:" + s.Name
	}
	if cfg.Input != nil && s.Front.Input == nil {
		return nil, errNoInput
	}
	ws, err := cfg.Store.Workspace(ctx, cfg.Scope, cfg.Thread, satchel.As(cfg.Actor))
	if err != nil {
		return nil, err
	}
	if cfg.Atomic {
		return s.runAtomic(ctx, &cfg, ws)
	}
	before, err := ws.Head(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.exec(ctx, &cfg, ws); err != nil {
		return nil, err
	}
	res := &Result{}
	if res.Commits, err = commitsSince(ctx, ws, before.Seq, cfg.Actor); err != nil {
		return nil, err
	}
	return res, s.readOutput(ctx, ws, res)
}

// exec writes the input and runs the script on ws.
func (s *Script) exec(ctx context.Context, cfg *Config, ws *satchel.Workspace) error {
	if cfg.Input != nil {
		if err := ws.Write(ctx, s.Front.Input.Path, *cfg.Input); err != nil {
			return err
		}
	}
	env, err := satchel.NewRun()
	if err != nil {
		return err
	}
	r := &run{
		cfg: cfg, script: s, env: env, out: &output{w: cfg.Stdout},
		maxMemory: cfg.MaxMemory, fanoutMax: cfg.FanoutMax,
		memErr: limitError("script exceeded its memory limit (%s)", formatBytes(cfg.MaxMemory)),
		errs:   map[string]error{}, cols: map[string]*satchel.Collection{},
	}
	cctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	tctx, cancel := context.WithTimeoutCause(cctx, cfg.Timeout,
		limitError("script exceeded its time limit (%s)", cfg.Timeout))
	defer cancel()
	r.ctx, r.stop = tctx, stop
	defer r.watchMemory()()

	a := &armState{r: r, ws: ws}
	L := a.newState()
	defer L.Close()
	a.setArgs(L)
	L.Push(L.NewFunctionFromProto(s.proto))
	if err := L.PCall(0, 0, nil); err != nil {
		return r.failure(errorObject(L, err))
	}
	return nil
}

// failure turns the error a PCall returned into the run's error: the
// limit that stopped it, the caller's cancel, or the script's error with
// the kind of the Go error it came from.
func (r *run) failure(err error) error {
	if cause := context.Cause(r.ctx); cause != nil {
		if errors.Is(cause, context.Canceled) || errors.Is(cause, context.DeadlineExceeded) {
			return fmt.Errorf("script %s was stopped: %w", r.script.Name, cause)
		}
		return cause
	}
	return r.scriptError(err)
}

// scriptError is the *Error of a Lua error.
func (r *run) scriptError(err error) *Error {
	msg := err.Error()
	var ae *lua.ApiError
	if errors.As(err, &ae) && ae.Object != nil {
		msg = ae.Object.String()
		if ae.Type == lua.ApiErrorPanic {
			msg = atLine(r.script.Name, msg, ae.StackTrace)
		}
	}
	if strings.HasSuffix(msg, "stack overflow") {
		msg += fmt.Sprintf(" (calls nest at most %d deep)", callDepth)
	}
	if strings.HasSuffix(msg, "registry overflow") {
		msg += fmt.Sprintf(" (the value stack holds at most %d values)", registryMax)
	}
	return &Error{Msg: msg, Err: r.kindOf(msg)}
}

// atLine puts before msg, a Go panic inside the interpreter or its library
// that carries no position, the script's line it happened on, the first of
// the traceback: `script.lua:3: runtime error: ...`.
func atLine(name, msg, trace string) string {
	if strings.HasPrefix(msg, name+":") {
		return msg
	}
	for _, l := range strings.Split(trace, "\n") {
		l = strings.TrimPrefix(l, "\t")
		rest, ok := strings.CutPrefix(l, name+":")
		if !ok {
			continue
		}
		n, _, ok := strings.Cut(rest, ":")
		if ok && n != "" && strings.Trim(n, "0123456789") == "" {
			return name + ":" + n + ": " + msg
		}
	}
	return msg
}

// raise raises err as a Lua error at the calling line, remembering its
// kind for the run's error.
func (r *run) raise(L *lua.LState, err error) {
	if cause := context.Cause(r.ctx); cause != nil {
		err = cause // the call failed because the run was stopped
	}
	msg := err.Error()
	r.errMu.Lock()
	if len(r.errs) < 64 {
		r.errs[msg] = err
	}
	r.errMu.Unlock()
	L.RaiseError("%s", msg)
}

// raiseIf raises err when it is not nil.
func (r *run) raiseIf(L *lua.LState, err error) {
	if err != nil {
		r.raise(L, err)
	}
}

// kindOf returns the Go error a Lua error message came from, if any.
func (r *run) kindOf(msg string) error {
	r.errMu.Lock()
	defer r.errMu.Unlock()
	for m, err := range r.errs {
		if strings.HasSuffix(msg, m) {
			return err
		}
	}
	return nil
}

// checkSize stops the run when one value would take more than its whole
// memory limit.
func (r *run) checkSize(L *lua.LState, n int64) {
	if n > r.maxMemory {
		r.stop(r.memErr)
		L.RaiseError("%s", r.memErr.Error())
	}
}

// setArgs sets `args` (the arguments joined by spaces) and `arg` (them as
// a sequence).
func (a *armState) setArgs(L *lua.LState) {
	t := L.CreateTable(len(a.r.cfg.Args), 0)
	for i, s := range a.r.cfg.Args {
		t.RawSetInt(i+1, lua.LString(s))
	}
	L.SetGlobal("arg", t)
	L.SetGlobal("args", lua.LString(strings.Join(a.r.cfg.Args, " ")))
}

// newState is the run's sandboxed state with the globals of this arm.
func (a *armState) newState() *lua.LState {
	L := a.r.newState()
	a.bindStore(L)
	a.bindDocs(L)
	L.SetGlobal("fanout", L.NewFunction(a.fanout))
	return L
}

// output is where print writes; safe for the arms' concurrent prints.
type output struct {
	mu sync.Mutex
	w  io.Writer
}

func (o *output) write(s string) {
	if o.w == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	_, _ = io.WriteString(o.w, s)
}

// readOutput reads the declared output into res.
func (s *Script) readOutput(ctx context.Context, ws *satchel.Workspace, res *Result) error {
	if s.Front.Output == nil {
		return nil
	}
	p := s.Front.Output.Path
	ok, err := ws.Exists(ctx, p)
	if err != nil {
		return err
	}
	if !ok {
		return &satchel.Error{Kind: satchel.ErrNotFound,
			Msg: fmt.Sprintf("the script declares output %q but it was not produced", p)}
	}
	if res.Output, err = ws.Read(ctx, p); err != nil {
		return err
	}
	res.Produced = true
	return nil
}

// commitsSince returns the commits after seq that actor made, oldest
// first (at most maxListed).
func commitsSince(ctx context.Context, ws *satchel.Workspace, seq int64, actor satchel.Actor) ([]satchel.Commit, error) {
	head, err := ws.Head(ctx)
	if err != nil || head.Seq <= seq {
		return []satchel.Commit{}, err
	}
	n := head.Seq - seq
	if n > maxListed {
		n = maxListed
	}
	hist, err := ws.History(ctx, 0, int(n))
	if err != nil {
		return nil, err
	}
	out := []satchel.Commit{}
	for i := len(hist) - 1; i >= 0; i-- {
		if c := hist[i]; c.Seq > seq && c.Actor == actor {
			out = append(out, c)
		}
	}
	return out, nil
}

// maxListed bounds the commits a Result lists.
const maxListed = 1000

// formatBytes writes n as people write limits: "256 MiB", "1 GiB",
// "1500 bytes".
func formatBytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// randomSuffix returns 8 random hex digits.
func randomSuffix() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
