package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/satchel-dev/satchel"
)

// MetaThread is the _meta key of a request that names the caller's
// thread at a protocol revision without sessions (2026-07-28), as
// ThreadHeader does over HTTP: within the token's scope, and only the
// token's thread for a token bound to one.
const MetaThread = "dev.satchel/thread"

// callerState is what the requests of a revision without sessions share
// on this process, per caller (scope, agent and credential: the token,
// or the configured identity without one): the read ledger, one
// workspace per thread sharing it, and the envelope's run. Each request
// names its thread; nothing else carries from one request to the next.
type callerState struct {
	run *satchel.Run

	mu      sync.Mutex
	threads map[string]*satchel.Workspace // sharing one read ledger

	// subsMu orders the subscriptions of the caller's listens, which
	// Config.MaxSubscriptions bounds together (Server.subscribe).
	subsMu sync.Mutex
}

type callerStateKey struct{ scope, agent, credential string }

// perRequestSession returns the state of one request at 2026-07-28 over
// HTTP: the caller's, on the thread the request names (ThreadHeader, or
// the _meta key MetaThread; the token's or "main" otherwise).
func (s *Server) perRequestSession(id Identity, explicit bool, req mcp.Request) (*session, error) {
	if th, ok := metaThread(req); ok {
		if err := satchel.ValidThreadName(th); err != nil {
			return nil, err
		}
		switch {
		case id.ThreadBound && th != id.Thread:
			return nil, fmt.Errorf("token %s is bound to thread %q: _meta %q %q is not allowed", id.Credential, id.Thread, MetaThread, th)
		case explicit && th != id.Thread:
			return nil, fmt.Errorf("%s %q and _meta %q %q name different threads", ThreadHeader, id.Thread, MetaThread, th)
		}
		id.Thread = th
	}
	k := callerStateKey{id.Scope, id.Agent, id.Credential}
	v, ok := s.callers.Load(k)
	if !ok {
		run, err := satchel.NewRun()
		if err != nil {
			return nil, err
		}
		v, _ = s.callers.LoadOrStore(k, &callerState{run: run, threads: map[string]*satchel.Workspace{}})
	}
	cs := v.(*callerState)
	ctx, end := context.WithCancelCause(context.Background())
	se := &session{id: id, start: id.Thread, run: cs.run, ctx: ctx, end: end, perRequest: true, caller: cs, label: "caller-" + id.Agent}
	if id.Credential != "" {
		se.label = "token-" + id.Credential
	}
	if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil {
		go func() {
			_ = ss.Wait() // the request's own session ends with its answer
			end(errSessionEnded)
		}()
	}
	ws, err := cs.workspace(context.Background(), &s.cfg, id)
	if err != nil {
		end(err)
		return nil, err
	}
	se.ws = ws
	return se, nil
}

// workspace returns the caller's workspace of id.Thread, opened once. A
// read ledger keeps what it saw per thread, so one per thread is the
// caller's ledger.
func (cs *callerState) workspace(ctx context.Context, cfg *Config, id Identity) (*satchel.Workspace, error) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if ws := cs.threads[id.Thread]; ws != nil {
		return ws, nil
	}
	ws, err := cfg.Store.Workspace(ctx, id.Scope, id.Thread, cfg.workspaceOptions(id, cs.reviewKey(id), true)...)
	if err != nil {
		return nil, err
	}
	cs.threads[id.Thread] = ws
	return ws, nil
}

// reviewKey names the review of a caller without sessions: one a token
// (or an agent of an open server) in this process.
func (cs *callerState) reviewKey(id Identity) string {
	if id.Credential != "" {
		return id.Scope + "/token-" + id.Credential
	}
	return id.Scope + "/caller-" + id.Agent
}

// requestThread returns the state of one request of se that names its
// thread in _meta (MetaThread): se's caller and read ledger, on that
// thread, for this request only.
func (s *Server) requestThread(ctx context.Context, se *session, thread string) (*session, error) {
	if err := satchel.ValidThreadName(thread); err != nil {
		return nil, err
	}
	id := se.identity()
	if id.ThreadBound && thread != id.Thread {
		return nil, fmt.Errorf("this session is bound to thread %q: _meta %q %q is not allowed", id.Thread, MetaThread, thread)
	}
	ws, err := se.workspace(ctx, &s.cfg)
	if err != nil {
		return nil, err
	}
	on, err := ws.OnThread(ctx, thread)
	if errors.Is(err, satchel.ErrNotFound) {
		// A thread the first write makes, as over HTTP (a ledger of its
		// own: nothing of it was seen yet).
		on, err = s.cfg.Store.Workspace(ctx, id.Scope, thread, s.cfg.workspaceOptions(id, se.reviewKey(), true)...)
	}
	if err != nil {
		return nil, err
	}
	id.Thread = thread
	return &session{id: id, start: thread, run: se.run, label: se.label, ctx: se.ctx, ws: on, perRequest: true}, nil
}

// metaThread returns the thread a request's _meta names.
func metaThread(req mcp.Request) (string, bool) {
	th, ok := paramsMeta(req.GetParams())[MetaThread].(string)
	return th, ok
}

// paramsMeta returns the _meta of p, which may be a nil pointer (a
// request sent without params).
func paramsMeta(p mcp.Params) map[string]any {
	if p == nil {
		return nil
	}
	if v := reflect.ValueOf(p); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil
	}
	return p.GetMeta()
}

// metaClient returns the client a request's _meta names (2026-07-28
// carries it in every request instead of initialize).
func metaClient(p mcp.Params) (name, version string) {
	switch ci := paramsMeta(p)[mcp.MetaKeyClientInfo].(type) {
	case map[string]any:
		name, _ = ci["name"].(string)
		version, _ = ci["version"].(string)
	case *mcp.Implementation:
		if ci != nil {
			name, version = ci.Name, ci.Version
		}
	}
	return name, version
}
