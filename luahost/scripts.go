package luahost

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/bounded"
)

// Scripts serves the scripts of one directory to callers that cannot wait
// for a long run, such as MCP clients, which time tool calls out long
// before a 30 s script ends: Start runs a script and waits for it up to a
// time; a run still going then goes on, and Check reports it by its id.
// Each run belongs to its caller (scope, agent and credential): no one
// else can check it.
type Scripts struct {
	dir     string
	base    Config
	list    []ScriptInfo
	skipped []string

	mu      sync.Mutex
	runs    map[string]*job
	order   []string // run ids, oldest first
	limits  ScriptsLimits
	total   int            // runs going
	running map[string]int // runs going by credential
}

// ScriptInfo is one script of the directory: its file name and what it
// declares.
type ScriptInfo struct {
	File  string      `json:"file"`
	Front Frontmatter `json:"frontmatter"`
}

// maxPrinted bounds the print output a served run keeps.
const maxPrinted = 1 << 20

// maxRuns bounds the finished runs kept for Check.
const maxRuns = 256

// OpenScripts loads the scripts (*.lua) of dir, refusing the directory if
// one does not compile. A *.lua that is not a regular file (a FIFO, which
// would block the load forever, a device, a socket) or is a link leading
// out of dir is skipped, and Skipped names it. base holds what every run
// shares (Store, Project, limits); each Start sets the caller's scope,
// thread, agent and actor.
func OpenScripts(dir string, base Config) (*Scripts, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("cannot read the scripts directory %q: %w", dir, unwrapPathError(err))
	}
	s := &Scripts{dir: dir, base: base, runs: map[string]*job{}}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".lua") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		sc, err := s.load(e.Name())
		var u *unreadable
		if errors.As(err, &u) {
			s.skipped = append(s.skipped, fmt.Sprintf("%s: skipped: %s", e.Name(), u.what))
			continue
		}
		if err != nil {
			return nil, err
		}
		s.list = append(s.list, ScriptInfo{File: e.Name(), Front: sc.Front})
	}
	sort.Slice(s.list, func(i, j int) bool { return s.list[i].File < s.list[j].File })
	return s, nil
}

// List returns the scripts found by OpenScripts, by file name.
func (s *Scripts) List() []ScriptInfo { return append([]ScriptInfo(nil), s.list...) }

// Skipped says, one line each, which *.lua entries of the directory
// OpenScripts skipped and why: "fifo.lua: skipped: a FIFO, not a regular
// file", "out.lua: skipped: a link leading out of the scripts directory".
func (s *Scripts) Skipped() []string { return append([]string(nil), s.skipped...) }

// unreadable is a script file that is not a regular file of the
// directory; what says what it is.
type unreadable struct {
	name, what string
}

func (u *unreadable) Error() string { return fmt.Sprintf("script %s is %s", u.name, u.what) }

// Is makes an unreadable script an invalid argument for errors.Is.
func (u *unreadable) Is(target error) bool { return target == satchel.ErrInvalidArgument }

// leadsOut says whether name, a symbolic link of dir, leads out of it.
func leadsOut(dir, name string) bool {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return false
	}
	target, err := filepath.EvalSymlinks(filepath.Join(dir, name))
	if err != nil {
		return false // a link to nothing: not found
	}
	rel, err := filepath.Rel(real, target)
	return err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel)
}

// load reads a script of the directory by its file name ("x" means
// "x.lua"), which never leads outside the directory. A file that is not
// a regular one is refused (opened without blocking, so a FIFO does not
// hang the load), and so is a link leading out of the directory, each
// named as such.
func (s *Scripts) load(name string) (*Script, error) {
	if !strings.HasSuffix(name, ".lua") {
		name += ".lua"
	}
	if strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") || strings.ContainsRune(name, 0) {
		return nil, &satchel.Error{Kind: satchel.ErrInvalidArgument,
			Msg: fmt.Sprintf("invalid script %q: a file name of the scripts directory, without a directory", name)}
	}
	root, err := os.OpenRoot(s.dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	if fi, err := root.Lstat(name); err == nil && fi.Mode()&fs.ModeSymlink != 0 && leadsOut(s.dir, name) {
		return nil, &unreadable{name, "a link leading out of the scripts directory"}
	}
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, &satchel.Error{Kind: satchel.ErrNotFound, Msg: fmt.Sprintf("script not found: %s", name)}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("cannot read script %s: %w", name, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, &unreadable{name, bounded.FileKind(fi.Mode()) + ", not a regular file"}
	}
	src, err := io.ReadAll(io.LimitReader(f, MaxScriptBytes+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read script %s: %w", name, err)
	}
	return Compile(name, string(src))
}

// Caller is who starts a run and owns it.
type Caller struct {
	Scope, Thread, Agent string
	Actor                satchel.Actor
	// Review makes the run's changes wait for review (Config.Review):
	// each run has a review of its own.
	Review bool
	// Options narrow the run's file access (the caller's token's rules),
	// after the agent's and the Scripts' base Options; ReadOnly (a
	// --read-only token) refuses changes of documents too.
	Options  []satchel.WorkspaceOption
	ReadOnly bool
}

func (c Caller) owner() string { return c.Scope + "\x00" + c.Agent + "\x00" + c.Actor.Credential }

// StartRequest is one run of a script of the directory.
type StartRequest struct {
	Script string
	Args   []string
	// Input is read from the caller's workspace when it names a file.
	Input  InputSource
	Atomic bool
	// Wait is how long Start waits for the run to end.
	Wait time.Duration
	// Until, when not nil, stops the run when it ends (a session's
	// context); Detach says the caller asked the run to outlive its
	// session.
	Until  context.Context
	Detach bool
}

// RunState is a run as Start and Check report it.
type RunState struct {
	ID     string `json:"run_id"`
	Script string `json:"script"`
	// State is "running", "succeeded" or "failed".
	State string `json:"state"`
	// Output is the declared output; Produced says whether there was one.
	Output   string `json:"output,omitempty"`
	Produced bool   `json:"produced,omitempty"`
	// Printed is what the script printed (its first MiB).
	Printed string `json:"printed,omitempty"`
	// Error is why a failed run failed.
	Error     string          `json:"error,omitempty"`
	Commits   []Commit        `json:"commits,omitempty"`
	Published *satchel.Commit `json:"published,omitempty"`
	// Notices are the run's workspace's (Result.Notices): a review's.
	Notices  []string  `json:"notices,omitempty"`
	Detached bool      `json:"detached,omitempty"`
	Started  time.Time `json:"started"`
	Ended    time.Time `json:"ended,omitzero"`
}

type job struct {
	owner string
	done  chan struct{}
	mu    sync.Mutex
	state RunState
	err   error
}

func (j *job) snapshot() (RunState, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.state, j.err
}

// Start runs a script for caller. The refusals that come before the run
// (an unknown script, the input's) are its error; a run that fails is a
// RunState "failed" with the error too. It waits up to req.Wait: the run
// goes on after that, independent of ctx, within its own time limit.
func (s *Scripts) Start(ctx context.Context, caller Caller, req StartRequest) (RunState, error) {
	sc, err := s.load(req.Script)
	if err != nil {
		return RunState{}, err
	}
	input, err := sc.ResolveInput(req.Input)
	if err != nil {
		return RunState{}, err
	}
	release, err := s.admit(caller.Actor.Credential)
	if err != nil {
		return RunState{}, err
	}
	cfg := s.base
	cfg.Scope, cfg.Thread, cfg.Agent, cfg.Actor = caller.Scope, caller.Thread, caller.Agent, caller.Actor
	cfg.Args, cfg.Input, cfg.Atomic = req.Args, input, req.Atomic
	cfg.Options = append(append([]satchel.WorkspaceOption(nil), s.base.Options...), caller.Options...)
	cfg.ReadOnlyDocs = s.base.ReadOnlyDocs || caller.ReadOnly
	printed := &limitedBuffer{max: maxPrinted}
	cfg.Stdout = printed
	j := &job{owner: caller.owner(), done: make(chan struct{}), state: RunState{
		ID: "run-" + randomSuffix() + randomSuffix(), Script: sc.Name, State: "running", Started: time.Now().UTC(),
		Detached: req.Detach,
	}}
	if caller.Review {
		cfg.Review = "lua:" + j.state.ID
	}
	s.add(j)
	rctx, cancel := runContext(ctx, req.Until)
	go func() {
		defer close(j.done)
		defer release()
		defer cancel(nil)
		res, err := runGuarded(rctx, sc, cfg)
		j.mu.Lock()
		defer j.mu.Unlock()
		j.state.Ended = time.Now().UTC()
		j.state.Printed = printed.String()
		if err != nil {
			j.state.State, j.state.Error, j.err = "failed", err.Error(), err
			return
		}
		j.state.State = "succeeded"
		j.state.Output, j.state.Produced = res.Output, res.Produced
		j.state.Commits, j.state.Published = res.Commits, res.Published
		j.state.Notices = res.Notices
	}()
	select {
	case <-j.done:
	case <-time.After(req.Wait):
	case <-ctx.Done():
	}
	return j.snapshot()
}

// State returns the state of a run that caller started.
func (s *Scripts) State(caller Caller, id string) (RunState, error) {
	s.mu.Lock()
	j, ok := s.runs[id]
	s.mu.Unlock()
	if !ok || j.owner != caller.owner() {
		return RunState{}, &satchel.Error{Kind: satchel.ErrNotFound, Msg: fmt.Sprintf("run not found: %s", id)}
	}
	return j.snapshot()
}

// add records j, forgetting the oldest finished runs past maxRuns.
func (s *Scripts) add(j *job) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runs[j.state.ID] = j
	s.order = append(s.order, j.state.ID)
	for i := 0; len(s.runs) > maxRuns && i < len(s.order); {
		old := s.runs[s.order[i]]
		select {
		case <-old.done:
			delete(s.runs, s.order[i])
			s.order = append(s.order[:i], s.order[i+1:]...)
		default:
			i++
		}
	}
}

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	mu  sync.Mutex
	b   bytes.Buffer
	max int
	cut bool
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if room := l.max - l.b.Len(); room < len(p) {
		l.b.Write(p[:max(room, 0)])
		l.cut = true
	} else {
		l.b.Write(p)
	}
	return len(p), nil
}

func (l *limitedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cut {
		return l.b.String() + "\n(print output cut at 1 MiB)"
	}
	return l.b.String()
}

// runGuarded runs sc, turning a panic of the host itself into the run's
// error: a served run never takes the server down.
func runGuarded(ctx context.Context, sc *Script, cfg Config) (res *Result, err error) {
	defer func() {
		if v := recover(); v != nil {
			res, err = nil, fmt.Errorf("script %s: internal error: %v", sc.Name, v)
		}
	}()
	return sc.Run(ctx, cfg)
}
