package mcpserver

import (
	"context"
	crand "crypto/rand"
	"encoding/json"
	"errors"
	"net/http"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/satchel-dev/satchel"
)

// Sessions on any replica (decision 0134): a session's id is signed
// (sessionid.go) once its initialize is answered; a request naming a
// session this process does not hold rebuilds it from the id; every
// request of a session reads the session's shared record first, for a
// switch_thread or a DELETE made through another replica.

// seal signs hs's id from its initialize (answer is the initialize's
// response) and makes the session findable by it.
func (h *streamable) seal(r *http.Request, hs *httpSession, answer []byte) error {
	c, _ := r.Context().Value(callerCtxKey{}).(caller)
	var neg struct {
		Result struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
	}
	_ = json.Unmarshal(answer, &neg)
	se := h.s.sessionOf(hs.ss)
	id := c.id
	if se != nil {
		id = se.identity()
		id.Thread = se.start
	}
	cl := &sessionClaims{
		Credential: id.Credential, Scope: id.Scope, Agent: id.Agent, Thread: id.Thread, Bound: id.ThreadBound,
		Tokenless: c.tokenless, Nonce: crand.Text(),
		State: &mcp.ServerSessionState{
			InitializeParams:          hs.ss.InitializeParams(),
			InitializedParams:         &mcp.InitializedParams{},
			NegotiatedProtocolVersion: neg.Result.ProtocolVersion,
		},
	}
	sid, err := h.keys.sign(r.Context(), cl)
	if err != nil {
		return err
	}
	label := sessionLabel(sid)
	if se != nil {
		se.label = label
		se.onSwitch = h.recordSwitch(label)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.sessions, hs.id)
	hs.id, hs.label = sid, label
	hs.conn.rename(sid)
	h.sessions[sid] = hs
	return nil
}

// recordSwitch returns the session's onSwitch: the thread goes into the
// session's shared record, which every replica reads.
func (h *streamable) recordSwitch(label string) func(context.Context, string) error {
	return func(ctx context.Context, thread string) error {
		return h.s.writeSessionState(ctx, label, sessionState{Thread: thread})
	}
}

// revive rebuilds, from its signed id, a session opened by another
// process on the same store (or by this one before its idle timeout), or
// writes why not: 404 for an id no key of the store signed or a session
// ended by DELETE, 403 for another caller's.
func (h *streamable) revive(w http.ResponseWriter, r *http.Request, sid string) *httpSession {
	ctx := r.Context()
	cl, err := h.keys.verify(ctx, sid)
	if errors.Is(err, errUnknownSession) {
		http.Error(w, "session not found", http.StatusNotFound)
		return nil
	}
	if err != nil {
		h.s.log.Error("checking a session id", "error", err.Error(), "request_id", r.Header.Get(RequestIDHeader))
		http.Error(w, "cannot check the session now", http.StatusServiceUnavailable)
		return nil
	}
	c, _ := r.Context().Value(callerCtxKey{}).(caller)
	if cl.Tokenless != c.tokenless || !c.tokenless && c.id.Credential != cl.Credential {
		http.Error(w, "session user mismatch", http.StatusForbidden)
		return nil
	}
	label := sessionLabel(sid)
	st, err := h.s.readSessionState(ctx, label)
	if err != nil {
		h.s.log.Error("reading a session's state", "error", err.Error(), "session", label)
		http.Error(w, "cannot check the session now", http.StatusServiceUnavailable)
		return nil
	}
	if st.Ended {
		http.Error(w, "session not found", http.StatusNotFound)
		return nil
	}
	srv := h.s.httpServer(r)
	if srv == nil {
		http.Error(w, "no server available", http.StatusBadRequest)
		return nil
	}
	// A resumed session counts against this process's bounds as a new
	// one does (counted here while it opens; bind's hold once open).
	if code, why := h.s.guards.take(cl.Credential); code != 0 {
		h.s.log.Info("session refused", "request_id", r.Header.Get(RequestIDHeader), "credential", cl.Credential, "reason", why)
		if code == http.StatusServiceUnavailable {
			w.Header().Set("Retry-After", "5")
		}
		http.Error(w, why, code)
		return nil
	}
	defer h.s.guards.give(cl.Credential)
	hs := &httpSession{id: sid, label: label}
	if !cl.Tokenless {
		hs.credential = cl.Credential
	}
	if err := h.connect(srv, hs, cl.State); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return nil
	}
	se, err := h.s.newSession(cl.identity())
	if err == nil {
		se.label, se.onSwitch = label, h.recordSwitch(label)
		if st.Thread != "" && st.Thread != se.start {
			err = h.s.moveSession(ctx, se, st.Thread)
		}
	}
	if err == nil {
		_, err = h.s.register(hs.ss, serverKey{agent: cl.Agent, http: true}, se)
	}
	if err != nil {
		hs.fast.close()
		hs.stopTimer()
		_ = hs.ss.Close()
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return nil
	}
	if !h.insert(hs) {
		// Rebuilt at the same time by another request: use that one.
		hs.fast.close()
		hs.stopTimer()
		_ = hs.ss.Close()
		h.mu.Lock()
		other := h.sessions[sid]
		h.mu.Unlock()
		if other == nil {
			http.Error(w, "session not found", http.StatusNotFound)
		}
		return other
	}
	hs.armIdle()
	h.s.log.Info("session resumed", "session", label, "scope", cl.Scope, "agent", cl.Agent, "credential", cl.Credential)
	return hs
}

// sync applies to hs what its shared record says (a switch_thread or a
// DELETE through another replica), or writes why hs is no more.
func (h *streamable) sync(w http.ResponseWriter, r *http.Request, hs *httpSession) bool {
	if hs.label == "" || !h.shared {
		return true
	}
	st, err := h.s.readSessionState(r.Context(), hs.label)
	if err != nil {
		h.s.log.Error("reading a session's state", "error", err.Error(), "session", hs.label)
		http.Error(w, "cannot check the session now", http.StatusServiceUnavailable)
		return false
	}
	if st.Ended {
		_ = hs.ss.Close()
		http.Error(w, "session not found", http.StatusNotFound)
		return false
	}
	if st.Thread == "" {
		return true
	}
	se := h.s.sessionOf(hs.ss)
	if se == nil || se.identity().Thread == st.Thread {
		return true
	}
	if err := h.s.moveSession(r.Context(), se, st.Thread); err != nil {
		http.Error(w, err.Error(), http.StatusConflict)
		return false
	}
	return true
}

// sharedStore reports whether st is reached through a database server
// (a pool of connections: PostgreSQL), which replicas share. On SQLite
// (one host's file) and memory, a process reads a session's record when
// it rebuilds the session, not at every request: one small query a call
// saved (decision 0134).
func sharedStore(st *satchel.Store) bool {
	_, ok := st.PoolStats()
	return ok
}

// sessionOf returns the state of ss, if bound.
func (s *Server) sessionOf(ss *mcp.ServerSession) *session {
	if v, ok := s.sessions.Load(ss); ok {
		return v.(*session)
	}
	return nil
}

// moveSession moves se to thread, as switch_thread did through another
// replica.
func (s *Server) moveSession(ctx context.Context, se *session, thread string) error {
	ws, err := se.workspace(ctx, &s.cfg)
	if err != nil {
		return err
	}
	to, err := ws.OnThread(ctx, thread)
	if err != nil {
		return err
	}
	se.switchTo(to)
	return nil
}

// isDiscover reports whether m is a server/discover call.
func isDiscover(m jsonrpc.Message) bool {
	req, ok := m.(*jsonrpc.Request)
	return ok && req.IsCall() && req.Method == "server/discover"
}

// NotifySession sends a notification of the server's own (method and
// params, as JSON-RPC) to an HTTP session of a revision with sessions, on
// the session's event stream (its GET) if this process holds it open. A
// session is named by its label, which every replica computes alike from
// the session's id (the "session" of the logs; sessionLabel). It reports
// whether the stream was open here: with replicas, a session's GET may be
// held by another process, which must then be the one to send (a
// subscription kept in the store lets each replica find the sessions it
// holds streams of). Requests of 2026-07-28 have no session: their
// notifications go on the stream of their subscriptions/listen, which the
// SDK's handler serves.
func (s *Server) NotifySession(ctx context.Context, label, method string, params any) (bool, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return false, err
	}
	data, err := jsonrpc.EncodeMessage(&jsonrpc.Request{Method: method, Params: raw})
	if err != nil {
		return false, err
	}
	s.httpMu.Lock()
	streams := slices.Clone(s.streams)
	s.httpMu.Unlock()
	for _, h := range streams {
		h.mu.Lock()
		var hs *httpSession
		for _, x := range h.sessions {
			if x.label == label {
				hs = x
				break
			}
		}
		h.mu.Unlock()
		if hs == nil {
			continue
		}
		hs.conn.mu.Lock()
		es := hs.conn.stream
		hs.conn.mu.Unlock()
		if es != nil && es.send(data) {
			return true, nil
		}
	}
	return false, ctx.Err()
}
