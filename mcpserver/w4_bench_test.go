package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	rtmetrics "runtime/metrics"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/bench"
)

// BenchmarkW4 splits the time of W4's calls (internal/bench/w4.go) into
// layers, on SQLite, one call at a time, all in this process:
//
//   - store: the operation through the Go API alone;
//   - handler: the server's tool handler called directly with the raw
//     arguments (decoding and validating them, the store, rendering the
//     result, metrics and the log line);
//   - mcp: the SDK's client and the server over a pipe in memory, the
//     server on satchel's stdio transport, IOTransport (JSON-RPC encoding
//     and decoding on both sides, the SDK's dispatch); mcp-sdkio is the
//     same with the server on the SDK's mcp.IOTransport;
//   - mcp-http: the server's HTTP handler (Handler) on a loopback
//     listener, the SDK's streamable client with a bearer token.
//
// What W4 measures on top is the transport between two processes (pipes
// or HTTP) and their scheduling; docs/mcp-performance.md puts the layers
// side by side.
func BenchmarkW4(b *testing.B) {
	const files = 1000
	contents := make([]string, files)
	for i := range contents {
		contents[i] = bench.W1Content(1, i)
	}
	type op struct {
		name string
		// args of call k, and the direct store operation of call k.
		args  func(k int) (tool string, args map[string]any)
		store func(ctx context.Context, ws *satchel.Workspace, k int) error
		// prepare fills the workspace (writes the files) when true.
		prepare bool
	}
	edit := func(k int) (path, old, new string) {
		i := k % files
		old, new = bench.W1Marker(i), bench.W1Edited(i)
		if (k/files)%2 == 1 {
			old, new = new, old
		}
		return bench.W1Path(i), old, new
	}
	ops := []op{
		{
			name: "write",
			args: func(k int) (string, map[string]any) {
				return "write_file", map[string]any{"path": fmt.Sprintf("w/%07d.md", k), "content": contents[k%files]}
			},
			store: func(ctx context.Context, ws *satchel.Workspace, k int) error {
				return ws.Write(ctx, fmt.Sprintf("w/%07d.md", k), contents[k%files])
			},
		},
		{
			name: "read-bounded", prepare: true,
			args: func(k int) (string, map[string]any) {
				return "read_file", map[string]any{"path": bench.W1Path(k % files), "start_line": 20, "end_line": 40, "numbered": false}
			},
			store: func(ctx context.Context, ws *satchel.Workspace, k int) error {
				_, err := ws.Read(ctx, bench.W1Path(k%files), 20, 40)
				return err
			},
		},
		{
			name: "edit", prepare: true,
			args: func(k int) (string, map[string]any) {
				p, o, n := edit(k)
				return "edit_file", map[string]any{"path": p, "old_text": o, "new_text": n}
			},
			store: func(ctx context.Context, ws *satchel.Workspace, k int) error {
				p, o, n := edit(k)
				_, err := ws.StrReplace(ctx, p, o, n, false)
				return err
			},
		},
		{
			name: "glob-dir", prepare: true,
			args: func(int) (string, map[string]any) {
				return "glob", map[string]any{"pattern": "notes/d07/*.md"}
			},
			store: func(ctx context.Context, ws *satchel.Workspace, _ int) error {
				_, err := ws.Glob(ctx, "notes/d07/*.md")
				return err
			},
		},
	}
	ctx := context.Background()
	open := func(b *testing.B, prepare bool) (*satchel.Store, *satchel.Workspace) {
		st, err := satchel.Open(ctx, filepath.Join(b.TempDir(), "w4.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = st.Close() })
		ws, err := st.Workspace(ctx, "default", "main")
		if err != nil {
			b.Fatal(err)
		}
		if prepare {
			for i := range files {
				if err := ws.Write(ctx, bench.W1Path(i), contents[i]); err != nil {
					b.Fatal(err)
				}
			}
		}
		return st, ws
	}
	for _, o := range ops {
		b.Run(o.name+"/store", func(b *testing.B) {
			_, ws := open(b, o.prepare)
			k := 0
			defer reportCosts(b)()
			for b.Loop() {
				if err := o.store(ctx, ws, k); err != nil {
					b.Fatal(err)
				}
				k++
			}
		})
		b.Run(o.name+"/handler", func(b *testing.B) {
			st, _ := open(b, o.prepare)
			s := newServer(b, Config{Store: st})
			handlers := map[string]mcp.ToolHandler{}
			for _, t := range fileTools(s.cfg) {
				handlers[t.tool.Name] = s.fileHandler(t)
			}
			se, err := s.newSession(s.fixed)
			if err != nil {
				b.Fatal(err)
			}
			se.label = "bench"
			hctx := context.WithValue(ctx, sessionKey{}, se)
			k := 0
			defer reportCosts(b)()
			for b.Loop() {
				tool, args := o.args(k)
				raw, _ := json.Marshal(args)
				r, err := handlers[tool](hctx, &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: tool, Arguments: raw}})
				if err != nil || r.IsError {
					b.Fatal(err, r)
				}
				k++
			}
		})
		b.Run(o.name+"/mcp-http", func(b *testing.B) {
			st, _ := open(b, o.prepare)
			s := newServer(b, Config{Store: st, Scope: "default"})
			secret, _, err := st.CreateToken(ctx, satchel.TokenSpec{Agent: "bench", Scope: "default"})
			if err != nil {
				b.Fatal(err)
			}
			// The server's handler on a loopback listener, as satchel serve
			// --http runs it, and the SDK's streamable client with a token.
			ts := httptest.NewServer(s.Handler())
			b.Cleanup(ts.Close)
			hc := &http.Client{Transport: headerTransport{&http.Transport{MaxIdleConnsPerHost: 8}, map[string]string{"Authorization": "Bearer " + secret}}}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx,
				&mcp.StreamableClientTransport{Endpoint: ts.URL + MCPPath, HTTPClient: hc, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = cs.Close() })
			k := 0
			defer reportCosts(b)()
			for b.Loop() {
				tool, args := o.args(k)
				r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
				if err != nil || r.IsError {
					b.Fatal(err, r)
				}
				k++
			}
		})
		for _, layer := range []string{"mcp", "mcp-sdkio"} {
			b.Run(o.name+"/"+layer, func(b *testing.B) {
				st, _ := open(b, o.prepare)
				s := newServer(b, Config{Store: st})
				sctx, cancel := context.WithCancel(ctx)
				// Client and server over a pipe, the server on the transport
				// satchel serve uses over stdio (mcp), or on the SDK's
				// (mcp-sdkio), for comparison.
				c1, c2 := net.Pipe()
				var tr mcp.Transport = &IOTransport{Reader: c2, Writer: c2}
				if layer == "mcp-sdkio" {
					tr = &mcp.IOTransport{Reader: c2, Writer: c2}
				}
				done := make(chan error, 1)
				go func() { done <- s.Run(sctx, tr) }()
				// 2025-11-25, as W4's client and agents' clients speak it
				// (the SDK's default, 2026-07-28, adds the client's identity
				// to every request).
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &mcp.IOTransport{Reader: c1, Writer: c1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = cs.Close(); cancel(); <-done })
				c := &client{t: b, cs: cs}
				k := 0
				defer reportCosts(b)()
				for b.Loop() {
					tool, args := o.args(k)
					r, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
					if err != nil || r.IsError {
						b.Fatal(err, r)
					}
					if tool == "edit_file" && !strings.HasPrefix(texts(b, r)[0], "replaced 1 occurrence") {
						b.Fatalf("edit: %v", texts(b, r))
					}
					k++
				}
			})
		}
	}
}

// reportCosts reports the CPU time and the goroutines started an
// operation, this process's (so the client's too in the layers that run
// one): each start of a goroutine may wake an idle processor, which costs
// a call a context switch on a VM. Call what it returns when the loop ends.
func reportCosts(b *testing.B) func() {
	s := []rtmetrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	rtmetrics.Read(s)
	start := s[0].Value.Uint64()
	cpu0, _ := bench.ProcessCPU()
	return func() {
		rtmetrics.Read(s)
		b.ReportMetric(float64(s[0].Value.Uint64()-start)/float64(b.N), "goroutines/op")
		cpu, _ := bench.ProcessCPU()
		b.ReportMetric(float64((cpu-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
	}
}
