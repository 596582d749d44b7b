package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Requests of protocol 2026-07-28 and later have no session: they all go
// to one process, started on the first, each call under an id of the
// bridge's own (so that two clients' ids cannot meet), and each POST is
// answered with its call's response as a JSON body.

// statelessVersion is the first protocol version without sessions.
const statelessVersion = "2026-07-28"

// stateless is the process of the requests without a session.
type stateless struct {
	mu      sync.Mutex
	out     mcp.Connection
	next    int64
	waiting map[int64]chan *jsonrpc.Response
}

// isStateless reports whether r belongs to a protocol without sessions:
// its version header says so, or it is a server/discover.
func isStateless(r *http.Request, body []byte) bool {
	if v := r.Header.Get("Mcp-Protocol-Version"); v >= statelessVersion {
		return true
	}
	var m struct {
		Method string `json:"method"`
	}
	return r.Header.Get("Mcp-Session-Id") == "" && json.Unmarshal(body, &m) == nil && m.Method == "server/discover"
}

// conn returns the stateless process's connection, starting it once.
func (b *bridge) conn() (*stateless, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.free != nil {
		return b.free, nil
	}
	cmd := exec.Command(b.argv[0], b.argv[1:]...)
	cmd.Stderr = os.Stderr
	out, err := (&mcp.CommandTransport{Command: cmd}).Connect(b.ctx)
	if err != nil {
		return nil, err
	}
	st := &stateless{out: out, waiting: map[int64]chan *jsonrpc.Response{}}
	go func() {
		for {
			m, err := out.Read(b.ctx)
			if err != nil {
				return
			}
			resp, ok := m.(*jsonrpc.Response)
			if !ok {
				continue // the process's own notifications have no stream here
			}
			n, _ := resp.ID.Raw().(int64)
			st.mu.Lock()
			ch := st.waiting[n]
			delete(st.waiting, n)
			st.mu.Unlock()
			if ch != nil {
				ch <- resp
			}
		}
	}()
	b.free = st
	return st, nil
}

// serveStateless relays one POST of a protocol without sessions.
func (b *bridge) serveStateless(w http.ResponseWriter, r *http.Request, body []byte) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	m, err := jsonrpc.DecodeMessage(bytes.TrimSpace(body))
	if err != nil {
		http.Error(w, "malformed payload: "+err.Error(), http.StatusBadRequest)
		return
	}
	st, err := b.conn()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	req, ok := m.(*jsonrpc.Request)
	if !ok || !req.IsCall() {
		if err := st.out.Write(r.Context(), m); err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	orig := req.ID
	ch := make(chan *jsonrpc.Response, 1)
	st.mu.Lock()
	st.next++
	n := st.next
	st.waiting[n] = ch
	st.mu.Unlock()
	req.ID, _ = jsonrpc.MakeID(float64(n)) // MakeID takes JSON's numbers; Raw gives int64
	if err := st.out.Write(r.Context(), req); err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	select {
	case resp := <-ch:
		resp.ID = orig
		data, err := jsonrpc.EncodeMessage(resp)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(data)
	case <-r.Context().Done():
		st.mu.Lock()
		delete(st.waiting, n)
		st.mu.Unlock()
	}
}

// readBody reads a request's body and puts it back for the next reader.
func readBody(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, nil
}
