package mcpserver

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/vpath"
)

// DefaultMaxSubscriptions bounds the subscriptions one session holds
// (Config.MaxSubscriptions, satchel serve's --max-subscriptions).
const DefaultMaxSubscriptions = 64

// Subscriptions. A session subscribes (resources/subscribe, or
// subscriptions/listen at 2026-07-28 and later) to a resource URI:
//
//   - satchel:///PATH, a file of the session's thread (FileURI);
//   - satchel:///?glob=PATTERN, every file of the thread that PATTERN
//     matches (the glob tool's grammar; the pattern percent-encoded as a
//     query value where it must be);
//   - satchel:///?store=STORE, the documents of a store the session's
//     agent may read.
//
// It is then sent notifications/resources/updated with that URI soon
// after a commit of its thread that changes such a file, or a write to
// the store's documents, made by any process on the database (the
// store's change feed, satchel.Store.Watch). It is never told of a file
// it may not read. A session holds at most Config.MaxSubscriptions.
//
// At 2026-07-28 over HTTP there is no session: each subscriptions/listen
// request has one of its own (perRequestSession), held open by the SDK's
// handler until the client closes the request, and the notifications go
// on the request's stream. Its thread is the one the listen names
// (ThreadHeader, or _meta MetaThread). The bound is then the caller's on
// this process (scope, agent and token: callerStateKey), across its
// listens (decision 0148).
const (
	globQuery  = "glob"
	storeQuery = "store"
)

// subscription is one subscribed URI, parsed.
type subscription struct {
	uri   string
	path  string      // a file
	glob  *vpath.Glob // or a glob
	store string      // or a store's documents
}

// parseSubscription parses a subscription's URI.
func parseSubscription(uri string) (*subscription, error) {
	rest, ok := strings.CutPrefix(uri, ResourceScheme)
	if !ok {
		return nil, subscriptionError("cannot subscribe to %q: a subscription names %sPATH (a file), %s?glob=PATTERN or %s?store=STORE", uri, ResourceScheme, ResourceScheme, ResourceScheme)
	}
	if q, ok := strings.CutPrefix(rest, "?"); ok {
		v, err := url.ParseQuery(q)
		if err != nil || len(v) != 1 {
			return nil, subscriptionError("cannot subscribe to %q: the query is glob=PATTERN or store=STORE", uri)
		}
		if gs, ok := v[globQuery]; ok && len(gs) == 1 {
			g, err := vpath.Compile(gs[0])
			if err != nil {
				return nil, subscriptionError("cannot subscribe to %q: %v", uri, err)
			}
			return &subscription{uri: uri, glob: g}, nil
		}
		if ss, ok := v[storeQuery]; ok && len(ss) == 1 && ss[0] != "" {
			return &subscription{uri: uri, store: ss[0]}, nil
		}
		return nil, subscriptionError("cannot subscribe to %q: the query is glob=PATTERN or store=STORE", uri)
	}
	p, ok := uriPath(uri)
	if !ok {
		return nil, subscriptionError("cannot subscribe to %q: not a file's URI", uri)
	}
	if err := vpath.Validate(p); err != nil {
		return nil, subscriptionError("cannot subscribe to %q: %v", uri, err)
	}
	return &subscription{uri: uri, path: p}, nil
}

func subscriptionError(format string, args ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// matches returns whether e concerns sub, for a session that reads with
// readable.
func (sub *subscription) matches(e satchel.ChangeEvent, readable func(string) bool) bool {
	switch {
	case sub.store != "":
		return e.Store == sub.store
	case e.Thread == "":
		return false
	case sub.glob != nil:
		for _, p := range e.Paths {
			if sub.glob.Match(p) && readable(p) {
				return true
			}
		}
		return false
	default:
		_, found := slices.BinarySearch(e.Paths, sub.path)
		return found && readable(sub.path)
	}
}

// sessionSubs is what one session subscribed to, and the notifications
// it is due.
type sessionSubs struct {
	se  *session
	srv *mcp.Server

	mu     sync.Mutex
	subs   map[string]*subscription
	events chan satchel.ChangeEvent // from the store's feed, to the session's goroutine
	stop   context.CancelFunc       // ends the watch; nil while none runs
	// due counts, by URI, the notifications to this session that
	// ResourceUpdated is sending: the SDK sends one to every session
	// subscribed to a URI, and the URI means a file of each session's
	// own scope and thread, so the sending middleware lets through only
	// the ones due.
	due map[string]int
}

// subscribe serves resources/subscribe (and each URI of
// subscriptions/listen) for srv's sessions.
func (s *Server) subscribe(srv *mcp.Server) func(context.Context, *mcp.SubscribeRequest) error {
	return func(ctx context.Context, req *mcp.SubscribeRequest) error {
		se := sessionFrom(ctx)
		if se == nil || req.Session == nil {
			return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "subscriptions are held by a session"}
		}
		sub, err := parseSubscription(req.Params.URI)
		if err != nil {
			return err
		}
		id := se.identity()
		switch {
		case sub.path != "" && !s.readable(se, sub.path):
			return subscriptionError("cannot subscribe to %q: path %s is not readable", sub.uri, sub.path)
		case sub.store != "" && !s.storeReadable(id.Agent, sub.store):
			return subscriptionError("cannot subscribe to %q: no store %s is readable here", sub.uri, sub.store)
		}
		if se.caller != nil {
			se.caller.subsMu.Lock()
			defer se.caller.subsMu.Unlock()
		}
		v, _ := s.subs.LoadOrStore(req.Session, &sessionSubs{se: se, srv: srv, subs: map[string]*subscription{}, due: map[string]int{}})
		ss := v.(*sessionSubs)
		if _, ok := ss.uris()[sub.uri]; ok {
			return nil
		}
		max := s.cfg.MaxSubscriptions
		if se.caller != nil {
			if n := s.callerSubs(se.caller); n >= max {
				return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf(
					"too many subscriptions: this caller holds %d on this server, the most --max-subscriptions allows (%d); close one first", n, max)}
			}
		}
		ss.mu.Lock()
		defer ss.mu.Unlock()
		if len(ss.subs) >= max {
			return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf(
				"too many subscriptions: this session holds %d, the most --max-subscriptions allows (%d); unsubscribe from one first", len(ss.subs), max)}
		}
		if ss.stop == nil {
			wctx, cancel := context.WithCancel(se.ctx)
			ss.events = make(chan satchel.ChangeEvent, 256)
			events := ss.events
			if err := s.cfg.Store.Watch(wctx, id.Scope, func(e satchel.ChangeEvent) {
				select {
				case events <- e:
				default:
					s.log.Warn("change notifications dropped: the session does not keep up", "session", se.label)
				}
			}); err != nil {
				cancel()
				return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
			}
			ss.stop = cancel
			go s.deliver(wctx, ss, events)
			context.AfterFunc(se.ctx, func() { s.subs.CompareAndDelete(req.Session, ss) })
		}
		ss.subs[sub.uri] = sub
		return nil
	}
}

// uris returns what ss is subscribed to, a copy.
func (ss *sessionSubs) uris() map[string]*subscription {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return maps.Clone(ss.subs)
}

// callerSubs counts the subscriptions of the listens of a caller at
// 2026-07-28 over HTTP, on this process.
func (s *Server) callerSubs(caller *callerState) int {
	n := 0
	s.subs.Range(func(_, v any) bool {
		if ss := v.(*sessionSubs); ss.se.caller == caller && ss.se.ctx.Err() == nil {
			n += len(ss.uris())
		}
		return true
	})
	return n
}

// unsubscribe serves resources/unsubscribe.
func (s *Server) unsubscribe(_ context.Context, req *mcp.UnsubscribeRequest) error {
	v, ok := s.subs.Load(req.Session)
	if !ok {
		return nil
	}
	ss := v.(*sessionSubs)
	ss.mu.Lock()
	defer ss.mu.Unlock()
	delete(ss.subs, req.Params.URI)
	if len(ss.subs) == 0 && ss.stop != nil {
		ss.stop()
		ss.stop = nil
	}
	return nil
}

// deliver sends the session the notifications of the changes its
// subscriptions match, until ctx ends.
func (s *Server) deliver(ctx context.Context, ss *sessionSubs, events <-chan satchel.ChangeEvent) {
	for {
		var e satchel.ChangeEvent
		select {
		case <-ctx.Done():
			return
		case e = <-events:
		}
		id := ss.se.identity()
		if e.Thread != "" && e.Thread != id.Thread {
			continue // another thread's files
		}
		read := func(p string) bool { return s.readable(ss.se, p) }
		ss.mu.Lock()
		var uris []string
		for uri, sub := range ss.subs {
			if sub.matches(e, read) {
				uris = append(uris, uri)
				ss.due[uri]++
			}
		}
		ss.mu.Unlock()
		slices.Sort(uris)
		for _, uri := range uris {
			if err := ss.srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
				s.log.Warn("change notification not sent", "session", ss.se.label, "err", err)
			}
			ss.mu.Lock()
			if ss.due[uri] > 0 { // not sent: the session had left
				ss.due[uri]--
			}
			ss.mu.Unlock()
		}
	}
}

// dueFilter is the sending middleware that lets a resource's update
// notification through to a session only when it is due to that session
// (sessionSubs.due).
func (s *Server) dueFilter(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "notifications/resources/updated" {
			return next(ctx, method, req)
		}
		p, _ := req.GetParams().(*mcp.ResourceUpdatedNotificationParams)
		v, ok := s.subs.Load(req.GetSession())
		if !ok || p == nil {
			return nil, nil
		}
		ss := v.(*sessionSubs)
		ss.mu.Lock()
		due := ss.due[p.URI] > 0
		if due {
			ss.due[p.URI]--
		}
		ss.mu.Unlock()
		if !due {
			return nil, nil
		}
		return next(ctx, method, req)
	}
}

// readable reports whether the session may read path: a session is
// never told of a change to a file its file rules hide.
func (s *Server) readable(se *session, path string) bool {
	ws, err := se.workspace(context.Background(), &s.cfg)
	return err == nil && ws.Access(path) != satchel.AccessNone
}

// storeReadable reports whether agent may read the documents of store:
// it is granted a read-only tool of the store.
func (s *Server) storeReadable(agent, store string) bool {
	if s.cfg.Collections == nil || agent == "" {
		return false
	}
	tools, err := s.cfg.Collections.Tools(agent)
	if err != nil {
		return false
	}
	for _, t := range tools {
		if t.ReadOnly && strings.HasPrefix(t.Name, "store__"+store+"__") {
			return true
		}
	}
	return false
}
