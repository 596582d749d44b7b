// Command stdiobridge serves streamable HTTP MCP on an address and relays
// each HTTP session to a new process of the command it is given, over
// that process's standard input and output. It lets a suite that can
// only reach a server by URL (the official MCP conformance suite) test a
// stdio server: the messages pass through unchanged, decoded and encoded
// by the MCP SDK's own transports on both sides.
//
//	stdiobridge -listen 127.0.0.1:0 -- satchel serve --db x.db
//
// It prints the address it listens on, as "listening on http://ADDR/mcp",
// and runs until it is interrupted. Requests of protocol 2026-07-28 and
// later, which have no session, share one process (stateless.go).
package main

import (
	"context"
	"crypto/rand"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to serve HTTP on")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: stdiobridge [-listen ADDR] -- COMMAND [ARG...]")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	b := &bridge{ctx: ctx, argv: flag.Args(), sessions: map[string]*session{}}
	fmt.Printf("listening on http://%s/mcp\n", ln.Addr())
	srv := &http.Server{Handler: http.HandlerFunc(b.serve)}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
		log.Fatal(err)
	}
	b.closeAll()
}

// A bridge maps HTTP sessions to their processes.
type bridge struct {
	ctx  context.Context
	argv []string

	mu       sync.Mutex
	sessions map[string]*session
	free     *stateless // the process of the requests without a session
}

// A session is one HTTP session and the process that serves it.
type session struct {
	http *mcp.StreamableServerTransport
	in   mcp.Connection // the HTTP side: the client's messages
	out  mcp.Connection // the process's side
	once sync.Once
}

func (s *session) close() {
	s.once.Do(func() {
		_ = s.in.Close()
		_ = s.out.Close()
	})
}

func (b *bridge) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/mcp" {
		http.NotFound(w, r)
		return
	}
	body, err := readBody(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if isStateless(r, body) {
		b.serveStateless(w, r, body)
		return
	}
	id := r.Header.Get("Mcp-Session-Id")
	if id == "" {
		if r.Method != http.MethodPost {
			http.Error(w, "a session starts with a POST", http.StatusBadRequest)
			return
		}
		s, err := b.start()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		s.http.ServeHTTP(w, r)
		return
	}
	b.mu.Lock()
	s := b.sessions[id]
	if r.Method == http.MethodDelete {
		delete(b.sessions, id)
	}
	b.mu.Unlock()
	switch {
	case s == nil:
		http.Error(w, "no such session", http.StatusNotFound)
	case r.Method == http.MethodDelete:
		s.close()
		w.WriteHeader(http.StatusNoContent)
	default:
		s.http.ServeHTTP(w, r)
	}
}

// start makes a session: its HTTP transport, its process, and the relay
// between them.
func (b *bridge) start() (*session, error) {
	id := rand.Text()
	t := &mcp.StreamableServerTransport{SessionID: id}
	in, err := t.Connect(b.ctx)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(b.argv[0], b.argv[1:]...)
	cmd.Stderr = os.Stderr
	out, err := (&mcp.CommandTransport{Command: cmd}).Connect(b.ctx)
	if err != nil {
		_ = in.Close()
		return nil, err
	}
	s := &session{http: t, in: in, out: out}
	go relay(b.ctx, s, in, out)
	go relay(b.ctx, s, out, in)
	b.mu.Lock()
	b.sessions[id] = s
	b.mu.Unlock()
	return s, nil
}

// relay copies the messages of from to to until either side ends.
func relay(ctx context.Context, s *session, from, to mcp.Connection) {
	defer s.close()
	for {
		m, err := from.Read(ctx)
		if err != nil {
			return
		}
		if err := to.Write(ctx, m); err != nil {
			return
		}
	}
}

func (b *bridge) closeAll() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for id, s := range b.sessions {
		s.close()
		delete(b.sessions, id)
	}
	if b.free != nil {
		_ = b.free.out.Close()
	}
}
