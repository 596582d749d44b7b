package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/testenv"
)

// TestReplicasBehindHAProxy runs three `satchel serve --http` replicas on
// one PostgreSQL database behind Debian's haproxy, in round-robin with no
// stickiness (the configuration docs/operations.md gives): a session of
// 300 calls at 2025-11-25 and another at 2026-07-28 are answered in full,
// every replica serves a share of them (by its /metrics), and every write
// is in the store once.
func TestReplicasBehindHAProxy(t *testing.T) {
	pg := testenv.PostgresURL(t)
	haproxy, err := exec.LookPath("haproxy")
	if err != nil {
		testenv.Skip(t, "haproxy is not installed (apt-get install haproxy)")
	}
	bin := buildBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	scope := fmt.Sprintf("replicas%d", time.Now().UnixNano())
	out, err := exec.CommandContext(ctx, bin, "--db", pg, "token", "create", "--agent", "writer", "--scope", scope).Output()
	if err != nil {
		t.Fatalf("token create: %v", err)
	}
	secret := strings.TrimSpace(string(out))

	var replicas []string // host:port
	for i := range 3 {
		replicas = append(replicas, startReplica(t, ctx, bin, pg, i))
	}
	front := freePort(t)
	cfg := filepath.Join(t.TempDir(), "haproxy.cfg")
	var servers strings.Builder
	for i, r := range replicas {
		fmt.Fprintf(&servers, "    server r%d %s check\n", i, r)
	}
	conf := fmt.Sprintf(`global
    maxconn 256

defaults
    mode http
    timeout connect 5s
    timeout client 60s
    timeout server 60s

frontend mcp
    bind %s
    default_backend satchel

backend satchel
    balance roundrobin
    option http-server-close
    option httpchk
    http-check send meth GET uri /healthz ver HTTP/1.1 hdr Host localhost
%s`, front, servers.String())
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	hp := exec.CommandContext(ctx, haproxy, "-db", "-f", cfg)
	hp.Stderr = io.Discard
	if err := hp.Start(); err != nil {
		t.Fatalf("haproxy: %v", err)
	}
	t.Cleanup(func() { _ = hp.Process.Kill(); _ = hp.Wait() })
	waitServing(t, ctx, "http://"+front+"/healthz")

	before := make([]float64, len(replicas))
	for i, r := range replicas {
		before[i] = toolCalls(t, r)
	}
	const calls = 300
	const switched = 6 // appends after a switch_thread, at 2025-11-25
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		dir := strings.ReplaceAll(version, "-", "")
		tr := &mcp.StreamableClientTransport{
			Endpoint:   "http://" + front + "/mcp",
			HTTPClient: &http.Client{Transport: bearerTransport(secret)},
			MaxRetries: -1,
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "haproxy-test", Version: "1"}, nil).Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatalf("connecting at %s: %v", version, err)
		}
		if got := cs.InitializeResult().ProtocolVersion; got != version {
			t.Fatalf("negotiated %s, want %s", got, version)
		}
		// A third writes a new file, a third reads it back, a third
		// appends a line to one log.
		for i := range calls {
			var name string
			var args map[string]any
			n := i / 3
			switch i % 3 {
			case 0:
				name, args = "write_file", map[string]any{"path": fmt.Sprintf("%s/f%03d.md", dir, n), "content": fmt.Sprintf("file %d\n", n)}
			case 1:
				name, args = "read_file", map[string]any{"path": fmt.Sprintf("%s/f%03d.md", dir, n), "numbered": false}
			default:
				name, args = "append_file", map[string]any{"path": dir + "/log.md", "content": fmt.Sprintf("line %d\n", n)}
			}
			r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
			if err != nil {
				t.Fatalf("%s call %d (%s): %v", version, i, name, err)
			}
			if r.IsError {
				t.Fatalf("%s call %d (%s): refused: %+v", version, i, name, r.Content[0])
			}
			if i%3 == 1 {
				if got := r.Content[0].(*mcp.TextContent).Text; got != fmt.Sprintf("file %d\n", n) {
					t.Fatalf("%s call %d: read %q", version, i, got)
				}
			}
		}
		if version < "2026" {
			// A switch_thread through one replica holds on the others.
			for i, c := range []struct {
				name string
				args map[string]any
			}{
				{"fork", map[string]any{"name": "alt"}},
				{"switch_thread", map[string]any{"thread": "alt"}},
			} {
				if r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.name, Arguments: c.args}); err != nil || r.IsError {
					t.Fatalf("%s (%d): %v %+v", c.name, i, err, r)
				}
			}
			for i := range switched {
				r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "append_file", Arguments: map[string]any{"path": "alt.md", "content": fmt.Sprintf("alt %d\n", i)}})
				if err != nil || r.IsError {
					t.Fatalf("append on alt %d: %v %+v", i, err, r)
				}
			}
		}
		_ = cs.Close()
	}
	total := 0.0
	for i, r := range replicas {
		d := toolCalls(t, r) - before[i]
		total += d
		if d == 0 {
			t.Errorf("replica %d (%s) served no call", i, r)
		}
		t.Logf("replica %d served %.0f calls", i, d)
	}
	if total != 2*calls+2+switched {
		t.Errorf("the replicas served %.0f calls, want %d", total, 2*calls+2+switched)
	}

	st, err := satchel.Open(ctx, pg)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ws, err := st.Workspace(ctx, scope, "main")
	if err != nil {
		t.Fatal(err)
	}
	alt, err := st.Workspace(ctx, scope, "alt")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := alt.Read(ctx, "alt.md"); err != nil || got != "alt 0\nalt 1\nalt 2\nalt 3\nalt 4\nalt 5\n" {
		t.Errorf("alt.md on the thread switched to: %q, %v", got, err)
	}
	if _, err := ws.Read(ctx, "alt.md"); err == nil {
		t.Error("alt.md reached main")
	}
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		dir := strings.ReplaceAll(version, "-", "")
		paths, err := ws.Glob(ctx, dir+"/f*.md")
		if err != nil || len(paths) != calls/3 {
			t.Errorf("%s: %d files, %v", version, len(paths), err)
		}
		log, err := ws.Read(ctx, dir+"/log.md")
		if err != nil {
			t.Fatal(err)
		}
		var want strings.Builder
		for n := range calls / 3 {
			fmt.Fprintf(&want, "line %d\n", n)
		}
		if log != want.String() {
			t.Errorf("%s: the log is not every append once, in order:\n%s", version, log)
		}
	}
}

// startReplica starts `satchel serve --http` on pg and returns its
// address.
func startReplica(t *testing.T, ctx context.Context, bin, pg string, i int) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, bin, "--db", pg, "serve", "--http", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "SATCHEL_DB=")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("replica %d: %v", i, err)
	}
	t.Cleanup(func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() })
	addrRE := regexp.MustCompile(`"addr":"(127\.0\.0\.1:[0-9]+)"`)
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			if m := addrRE.FindStringSubmatch(line); m != nil && !sent {
				found <- m[1]
				sent = true
			}
			if strings.Contains(line, `"level":"ERROR"`) || strings.Contains(line, `"level":"WARN"`) {
				t.Logf("replica %d: %s", i, line)
			}
		}
	}()
	select {
	case a := <-found:
		return a
	case <-time.After(30 * time.Second):
		t.Fatalf("replica %d did not say its address", i)
	}
	return ""
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := ln.Addr().String()
	_ = ln.Close()
	return a
}

func waitServing(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	for {
		resp, err := http.Get(url)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s never answered: %v", url, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// toolCalls is the sum of satchel_mcp_tool_calls_total on a replica's
// /metrics.
func toolCalls(t *testing.T, addr string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sum := 0.0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "satchel_mcp_tool_calls_total{") {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			t.Fatal(err)
		}
		sum += v
	}
	return sum
}
