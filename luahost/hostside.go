package luahost

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"

	"github.com/satchel-dev/satchel"
)

// hostSide carries out a run's calls on the store with the caller's
// identity: the workspaces of the run and of its fanout arms (by handle),
// the collections, the untrusted envelope, and the Go errors the calls
// returned (to give the run's error its kind). It lives in the process
// that holds the store; a run's Lua states, in a child process or not,
// reach it only through do.
type hostSide struct {
	ctx context.Context
	cfg *Config
	env *satchel.Run

	mu      sync.Mutex
	ws      map[uint64]*satchel.Workspace
	next    uint64
	fanouts map[uint64]*fanoutSide
	cols    map[string]*satchel.Collection
	errs    map[string]error
}

// fanoutSide is a fanout the Lua side has open: its arms' workspaces are
// in use until release is closed; done is closed once Workspace.Fanout
// has returned, with err.
type fanoutSide struct {
	release chan struct{}
	once    sync.Once
	done    chan struct{}
	handles []uint64
	err     error
}

func newHostSide(ctx context.Context, cfg *Config, ws *satchel.Workspace, env *satchel.Run) *hostSide {
	return &hostSide{ctx: ctx, cfg: cfg, env: env, ws: map[uint64]*satchel.Workspace{1: ws}, next: 1,
		fanouts: map[uint64]*fanoutSide{}, cols: map[string]*satchel.Collection{}, errs: map[string]error{}}
}

// rootHandle is the handle of the run's own workspace.
const rootHandle = 1

// do carries out one call of the Lua side.
func (h *hostSide) do(ctx context.Context, f *frame) (*frame, error) {
	res, err := h.call(ctx, f)
	if err != nil {
		msg := err.Error()
		h.mu.Lock()
		if len(h.errs) < 64 {
			h.errs[msg] = err
		}
		h.mu.Unlock()
		return nil, err
	}
	if res == nil {
		res = &frame{}
	}
	return res, nil
}

// fanning says whether a fanout is open: its arms call at once.
func (h *hostSide) fanning() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.fanouts) > 0
}

// kindOf returns the Go error a Lua error message came from, if any.
func (h *hostSide) kindOf(msg string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	for m, err := range h.errs {
		if strings.HasSuffix(msg, m) {
			return err
		}
	}
	return nil
}

// close releases the fanouts still open (their Lua side is gone) and
// waits for them.
func (h *hostSide) close() {
	h.mu.Lock()
	open := make([]*fanoutSide, 0, len(h.fanouts))
	for _, fo := range h.fanouts {
		open = append(open, fo)
	}
	h.mu.Unlock()
	for _, fo := range open {
		fo.once.Do(func() { close(fo.release) })
		<-fo.done
	}
}

func (h *hostSide) workspace(handle uint64) (*satchel.Workspace, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ws, ok := h.ws[handle]
	if !ok {
		return nil, errors.New("luahost: unknown workspace handle")
	}
	return ws, nil
}

func keyOf(f *frame, s, n int) []satchel.WriteOption {
	if f.num(n) == 0 {
		return nil
	}
	return []satchel.WriteOption{satchel.IdempotencyKey(f.str(s))}
}

func (h *hostSide) call(ctx context.Context, f *frame) (*frame, error) {
	switch f.op {
	case opUntrusted:
		return &frame{s: []string{h.env.Untrusted(f.str(0))}}, nil
	case opDocGet, opDocSet, opDocQuery, opDocList, opDocRemove:
		return h.doc(ctx, f)
	case opFanoutClose:
		return nil, h.fanoutClose(uint64(f.num(0)))
	}
	ws, err := h.workspace(f.ws)
	if err != nil {
		return nil, err
	}
	switch f.op {
	case opWrite:
		return nil, ws.Write(ctx, f.str(0), f.str(1), keyOf(f, 2, 0)...)
	case opAppend:
		return nil, ws.Append(ctx, f.str(0), f.str(1), keyOf(f, 2, 0)...)
	case opRead:
		b := satchel.Bounds{HasStart: f.num(1) != 0, Start: int(f.num(2)), HasEnd: f.num(3) != 0, End: int(f.num(4))}
		res, err := ws.ReadWith(ctx, f.str(0), satchel.ReadOptions{Bounds: b, Numbered: f.num(0) != 0})
		if err != nil {
			return nil, err
		}
		if int64(len(res.Text)) > h.cfg.MaxMemory {
			return nil, limitError("script exceeded its memory limit (%s)", formatBytes(h.cfg.MaxMemory))
		}
		return &frame{s: []string{res.Text}}, nil
	case opStrReplace:
		_, err := ws.StrReplace(ctx, f.str(0), f.str(1), f.str(2), f.num(0) != 0, keyOf(f, 3, 1)...)
		return nil, err
	case opGlob:
		paths, err := ws.Glob(ctx, f.str(0))
		return &frame{s: paths}, err
	case opExists:
		ok, err := ws.Exists(ctx, f.str(0))
		return &frame{n: []int64{boolInt(ok)}}, err
	case opDelete:
		return nil, ws.Delete(ctx, f.str(0), keyOf(f, 1, 0)...)
	case opFanoutOpen:
		return h.fanoutOpen(ws, int(f.num(0)))
	}
	return nil, errors.New("luahost: unknown operation")
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// fanoutOpen starts Workspace.Fanout with n arms whose workspaces the Lua
// side uses, by the handles returned, until fanoutClose.
func (h *hostSide) fanoutOpen(ws *satchel.Workspace, n int) (*frame, error) {
	if n < 1 || n > 1<<16 {
		return nil, errors.New("luahost: fanout of an invalid size")
	}
	fo := &fanoutSide{release: make(chan struct{}), done: make(chan struct{}), handles: make([]uint64, n)}
	ready := make(chan struct{}, n)
	arms := make([]func(context.Context, *satchel.Workspace) error, n)
	for i := range arms {
		arms[i] = func(_ context.Context, aw *satchel.Workspace) error {
			h.mu.Lock()
			h.next++
			fo.handles[i] = h.next
			h.ws[h.next] = aw
			h.mu.Unlock()
			ready <- struct{}{}
			<-fo.release
			return nil
		}
	}
	h.mu.Lock()
	h.next++
	id := h.next
	h.fanouts[id] = fo
	h.mu.Unlock()
	go func() {
		defer close(fo.done)
		fo.err = ws.Fanout(h.ctx, arms...)
	}()
	for range n {
		<-ready
	}
	out := &frame{n: make([]int64, 0, n+1)}
	out.n = append(out.n, int64(id))
	for _, hd := range fo.handles {
		out.n = append(out.n, int64(hd))
	}
	return out, nil
}

// fanoutClose ends a fanout: its arms' workspaces are dropped.
func (h *hostSide) fanoutClose(id uint64) error {
	h.mu.Lock()
	fo, ok := h.fanouts[id]
	delete(h.fanouts, id)
	h.mu.Unlock()
	if !ok {
		return errors.New("luahost: unknown fanout")
	}
	fo.once.Do(func() { close(fo.release) })
	<-fo.done
	h.mu.Lock()
	for _, hd := range fo.handles {
		delete(h.ws, hd)
	}
	h.mu.Unlock()
	return fo.err
}

var errNoProject = &satchel.Error{Kind: satchel.ErrNotFound,
	Msg: "docs: this run has no collections (give the project directory, with stores/ and agents/, with --dir)"}

// collection returns the run's handle on a store, made once.
func (h *hostSide) collection(ctx context.Context, name string) (*satchel.Collection, error) {
	cfg := h.cfg
	if cfg.Project == nil {
		return nil, errNoProject
	}
	h.mu.Lock()
	c, ok := h.cols[name]
	h.mu.Unlock()
	if ok {
		return c, nil
	}
	actor := cfg.Actor
	if actor.Agent == "" {
		actor.Agent = cfg.Agent
	}
	opts := []satchel.CollectionOption{satchel.CollectionActor(actor), satchel.CallerThread(cfg.Thread)}
	if cfg.Agent != "" {
		opts = append(opts, satchel.AsAgent(cfg.Agent))
	}
	c, err := cfg.Store.Collection(ctx, cfg.Project, cfg.Scope, name, opts...)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	h.cols[name] = c
	h.mu.Unlock()
	return c, nil
}

// docFrame lists documents as key and JSON pairs after the strings pre.
func docFrame(pre []string, docs []satchel.Document) *frame {
	f := &frame{s: append(pre, make([]string, 0, 2*len(docs))...)}
	for _, d := range docs {
		f.s = append(f.s, d.Key, string(d.JSON))
	}
	return f
}

func (h *hostSide) doc(ctx context.Context, f *frame) (*frame, error) {
	c, err := h.collection(ctx, f.str(0))
	if err != nil {
		return nil, err
	}
	switch f.op {
	case opDocGet:
		d, err := c.Get(ctx, f.str(1), f.num(0) != 0)
		if errors.Is(err, satchel.ErrNotFound) {
			return &frame{n: []int64{0}}, nil
		}
		if err != nil {
			return nil, err
		}
		out := docFrame(nil, append([]satchel.Document{d}, d.History...))
		out.n = []int64{1}
		return out, nil
	case opDocSet, opDocRemove:
		if h.cfg.ReadOnlyDocs {
			who := "this caller"
			if h.cfg.Agent != "" {
				who = "agent " + h.cfg.Agent
			}
			return nil, &satchel.Error{Kind: satchel.ErrReadOnly, Msg: "documents cannot be changed here: " + who + " may only read (--read-only)"}
		}
	}
	switch f.op {
	case opDocSet:
		key, version, err := c.Set(ctx, json.RawMessage(f.str(1)), keyOf(f, 2, 0)...)
		if err != nil {
			return nil, err
		}
		return &frame{s: []string{key}, n: []int64{int64(version)}}, nil
	case opDocQuery:
		p, err := c.Query(ctx, satchel.QueryRequest{Where: f.str(1), Sort: f.str(2), Cursor: f.str(3), Limit: int(f.num(0))})
		if err != nil {
			return nil, err
		}
		return docFrame([]string{p.NextCursor}, p.Documents), nil
	case opDocList:
		p, err := c.List(ctx, int(f.num(0)), f.str(1))
		if err != nil {
			return nil, err
		}
		return docFrame([]string{p.NextCursor}, p.Documents), nil
	case opDocRemove:
		removed, err := c.Remove(ctx, f.str(1), keyOf(f, 2, 0)...)
		return &frame{n: []int64{boolInt(removed)}}, err
	}
	return nil, errors.New("luahost: unknown operation")
}
