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

	// Options are added to every workspace the run opens: file rules
	// beyond the agent's (a token's --files and --read-only, a server's
	// --read-only). The agent's own rules (its agent.json "files", from
	// Project) always apply.
	Options []satchel.WorkspaceOption
	// ReadOnlyDocs refuses docs.set and docs.remove (serve --read-only, a
	// --read-only token): documents are read, not changed, as files are.
	ReadOnlyDocs bool

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

	// Review, when not empty, makes the run's changes wait for review
	// (satchel.ForReview, with Review as the caller's key): its first
	// change forks a review thread that a person approves or rejects,
	// and Result.Notices says so. A run under review cannot be Atomic: a
	// review reaches the thread whole or not at all already.
	Review string

	// Pool, when set, gives the run a child process started ahead of it.
	Pool *Pool
	// InProcess runs the script in this process instead of a child
	// process of its own: the memory limit is then only the capped
	// functions' and a watchdog's that counts the whole process's heap,
	// and a script that exhausts memory takes the process with it. For
	// trusted scripts and measurements only.
	InProcess bool
}

// Result is what a successful run did.
type Result struct {
	// Output is the content of the declared output; Produced says whether
	// the script declared one and it exists.
	Output   string
	Produced bool
	// Commits are the commits the run made, oldest first (with Atomic,
	// those it made on its fork, each with Fork set, then Published).
	Commits []Commit
	// Published is the commit that published an atomic run's work onto
	// the thread (nil when it made no change, or without Atomic).
	Published *satchel.Commit
	// Notices are what the run's workspace had to tell (Config.Review):
	// "your changes wait for review R-XXXXXXXX", a review decided.
	Notices []string
}

// Commit is a commit a run made.
type Commit struct {
	satchel.Commit
	// Fork is set on the commits an atomic run made on its fork: the
	// fork's thread, deleted once the run published (or failed). Their
	// sequence numbers are the fork's, not the thread's: the run's work
	// reached the thread as one commit, Result.Published.
	Fork string `json:"fork,omitempty"`
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

// host is how a run's Lua states reach the store: the hostSide itself in
// the same process, or the pipe to the parent in a child process.
type host interface {
	call(ctx context.Context, f *frame) (*frame, error)
}

// localHost calls the hostSide directly (Config.InProcess).
type localHost struct{ h *hostSide }

func (l localHost) call(ctx context.Context, f *frame) (*frame, error) { return l.h.do(ctx, f) }

// run is the state one run shares between its Lua states (the main one
// and the fanout arms'), in the process that interprets the script.
type run struct {
	ctx       context.Context
	stop      context.CancelCauseFunc
	script    *Script
	args      []string
	host      host
	out       func(string)
	timeout   time.Duration
	maxMemory int64
	memErr    error
	fanoutMax int
}

// armState is one Lua state of a run: the main script or a fanout arm,
// on the workspace of handle ws.
type armState struct {
	r     *run
	ws    uint64
	depth int
	// protected counts the pcalls the state is in (mutate).
	protected int
}

// limits are the bounds of one run, as the interpreter applies them.
type limits struct {
	timeout   time.Duration
	maxMemory int64
	fanoutMax int
}

func newRun(s *Script, args []string, lim limits, h host, out func(string)) *run {
	return &run{script: s, args: args, host: h, out: out,
		timeout: lim.timeout, maxMemory: lim.maxMemory, fanoutMax: lim.fanoutMax,
		memErr: limitError("script exceeded its memory limit (%s)", formatBytes(lim.maxMemory))}
}

// How a run ended, as the interpreter reports it.
const (
	endOK      = iota // succeeded
	endScript         // the script's error
	endLimit          // a limit's error
	endStopped        // the caller's cancel
)

// outcome is how a run ended and its message.
type outcome struct {
	end int64
	msg string
}

// Run runs the script. A failure is an *Error (the script's error, with
// its file and line), or a limit (`script exceeded its time limit (30s)`,
// `script exceeded its memory limit (256 MiB)`), or a crash of the
// process that ran it (`script crashed: ...`), or an input or output
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
	opts := cfg.workspaceOptions()
	if cfg.Review != "" {
		if cfg.Atomic {
			return nil, &satchel.Error{Kind: satchel.ErrInvalidArgument, Msg: "a run whose changes wait for review cannot be atomic: a review reaches the thread whole or not at all already"}
		}
		opts = append(opts, satchel.ForReview(cfg.Review))
	}
	ws, err := cfg.Store.Workspace(ctx, cfg.Scope, cfg.Thread, opts...)
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
	notices, err := s.exec(ctx, &cfg, ws)
	if err != nil {
		return nil, err
	}
	res := &Result{Notices: append(ws.Notices(), notices...)}
	if res.Commits, err = commitsSince(ctx, ws, before.Seq, cfg.Actor); err != nil {
		return nil, err
	}
	return res, s.readOutput(ctx, ws, res)
}

// exec writes the input and runs the script on ws: in a child process
// (execChild), or in this one with Config.InProcess. The run has a read
// ledger of its own (satchel.TrackReads), shared by its fanout arms: a
// change to a file the run has not seen as it is now is refused. The
// input the host writes, and the output the script declares (its own,
// rewritten by each run), count as seen.
func (s *Script) exec(ctx context.Context, cfg *Config, ws *satchel.Workspace) (notices []string, err error) {
	if cfg.Input != nil {
		if err := ws.Write(ctx, s.Front.Input.Path, *cfg.Input); err != nil {
			return nil, err
		}
	}
	opts := append(cfg.workspaceOptions(), satchel.TrackReads())
	if ws.UnderReview() {
		opts = append(opts, satchel.ForReview(cfg.Review)) // the same key: the same review
	}
	ws, err = cfg.Store.Workspace(ctx, ws.Scope(), ws.Thread(), opts...)
	if err != nil {
		return nil, err
	}
	defer func() { notices = ws.Notices() }()
	return nil, s.exec1(ctx, cfg, ws)
}

func (s *Script) exec1(ctx context.Context, cfg *Config, ws *satchel.Workspace) error {
	if cfg.Input != nil {
		if _, err := ws.Read(ctx, s.Front.Input.Path); err != nil {
			return err
		}
	}
	if s.Front.Output != nil {
		if _, err := ws.Read(ctx, s.Front.Output.Path); err != nil && !errors.Is(err, satchel.ErrNotFound) && !errors.Is(err, satchel.ErrIsDirectory) {
			return err
		}
	}
	env, err := satchel.NewRun()
	if err != nil {
		return err
	}
	h := newHostSide(ctx, cfg, ws, env)
	defer h.close()
	if !cfg.InProcess {
		return s.execChild(ctx, cfg, h)
	}
	out := &output{w: cfg.Stdout}
	r := newRun(s, cfg.Args, limits{cfg.Timeout, cfg.MaxMemory, cfg.FanoutMax}, localHost{h}, out.write)
	o := r.interpret(ctx, true)
	if o.end == endStopped {
		return fmt.Errorf("script %s was stopped: %w", s.Name, context.Cause(ctx))
	}
	return s.outcomeError(o, h)
}

// outcomeError is the run's error for how it ended.
func (s *Script) outcomeError(o outcome, h *hostSide) error {
	switch o.end {
	case endOK:
		return nil
	case endLimit:
		return limitError("%s", o.msg)
	case endStopped:
		return fmt.Errorf("script %s was stopped: %s", s.Name, o.msg)
	}
	return &Error{Msg: o.msg, Err: h.kindOf(o.msg)}
}

// interpret runs the script to its end within the run's time limit, and,
// with watch, the in-process memory watchdog (memory.go).
func (r *run) interpret(ctx context.Context, watch bool) outcome {
	return r.interpretIn(ctx, watch, nil)
}

// interpretIn is interpret in L, the run's main state made ahead of the
// run (nil: made now).
func (r *run) interpretIn(ctx context.Context, watch bool, L *lua.LState) outcome {
	cctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	tctx, cancel := context.WithTimeoutCause(cctx, r.timeout,
		limitError("script exceeded its time limit (%s)", r.timeout))
	defer cancel()
	r.ctx, r.stop = tctx, stop
	if watch {
		defer r.watchMemory()()
	}
	a := &armState{r: r, ws: rootHandle}
	if L == nil {
		L = a.newState()
	}
	defer L.Close()
	L.SetContext(r.ctx)
	a.setArgs(L)
	L.Push(L.NewFunctionFromProto(r.script.proto))
	if err := L.PCall(0, 0, nil); err != nil {
		return r.failure(errorObject(L, err))
	}
	return outcome{}
}

// failure turns the error a PCall returned into the run's outcome: the
// limit that stopped it, the caller's cancel, or the script's error.
func (r *run) failure(err error) outcome {
	if cause := context.Cause(r.ctx); cause != nil {
		if errors.Is(cause, context.Canceled) || errors.Is(cause, context.DeadlineExceeded) {
			return outcome{endStopped, cause.Error()}
		}
		return outcome{endLimit, cause.Error()}
	}
	return outcome{endScript, r.scriptError(err)}
}

// scriptError is the message of a Lua error.
func (r *run) scriptError(err error) string {
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
	return msg
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
	var pf *postFailure
	if errors.As(err, &pf) {
		L.Error(lua.LString(pf.msg), 0) // at the line of the call that failed
	}
	L.RaiseError("%s", err.Error())
}

// raiseIf raises err when it is not nil.
func (r *run) raiseIf(L *lua.LState, err error) {
	if err != nil {
		r.raise(L, err)
	}
}

// call makes a call of the host on the arm's workspace, raising its error.
func (a *armState) call(L *lua.LState, f *frame) *frame {
	f.ws = a.ws
	res, err := a.r.host.call(a.r.ctx, f)
	if err != nil && err.Error() == a.r.memErr.Error() { // a read past the limit
		a.r.stop(a.r.memErr)
	}
	a.r.raiseIf(L, err)
	return res
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
	t := L.CreateTable(len(a.r.args), 0)
	for i, s := range a.r.args {
		t.RawSetInt(i+1, lua.LString(s))
	}
	L.SetGlobal("arg", t)
	L.SetGlobal("args", lua.LString(strings.Join(a.r.args, " ")))
}

// newState is the run's sandboxed state with the globals of this arm.
func (a *armState) newState() *lua.LState {
	L := a.r.newState()
	if _, ok := a.r.host.(*remoteHost); ok {
		L.SetGlobal("pcall", a.protect(L, L.GetGlobal("pcall")))
		L.SetGlobal("xpcall", a.protect(L, L.GetGlobal("xpcall")))
	}
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
func commitsSince(ctx context.Context, ws *satchel.Workspace, seq int64, actor satchel.Actor) ([]Commit, error) {
	head, err := ws.Head(ctx)
	if err != nil || head.Seq <= seq {
		return []Commit{}, err
	}
	n := head.Seq - seq
	if n > maxListed {
		n = maxListed
	}
	hist, err := ws.History(ctx, 0, int(n))
	if err != nil {
		return nil, err
	}
	out := []Commit{}
	for i := len(hist) - 1; i >= 0; i-- {
		if c := hist[i]; c.Seq > seq && c.Actor == actor {
			out = append(out, Commit{Commit: c})
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

// workspaceOptions are the options of every workspace a run opens: its
// actor, its agent's file rules and Options.
func (cfg *Config) workspaceOptions() []satchel.WorkspaceOption {
	opts := []satchel.WorkspaceOption{satchel.WorkspaceActor(cfg.Actor)}
	if r := cfg.Project.AgentFiles(cfg.Agent); r != nil {
		opts = append(opts, satchel.WithFileRules(r))
	}
	return append(opts, cfg.Options...)
}
