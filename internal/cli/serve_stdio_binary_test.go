package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/satchel-dev/satchel/internal/testenv"
)

// TestServeStdioSurvivesBadInput speaks to the built binary's satchel
// serve over its standard input and output: a request over
// --max-request-bytes, a batch at a protocol version without batches,
// and the same batch written at once with the initialize request are
// each answered with an error, and the next request is answered.
func TestServeStdioSurvivesBadInput(t *testing.T) {
	bin := buildBinary(t)
	db := filepath.Join(t.TempDir(), "s.db")
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"
	batch := `[{"jsonrpc":"2.0","id":5,"method":"ping"},{"jsonrpc":"2.0","id":6,"method":"ping"}]` + "\n"
	batchRefused := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"JSON-RPC batching is not supported in 2025-06-18 and later (request version: 2025-11-25)"}}`
	write := func(id, content string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"big.txt","content":"` + content + `"}}}` + "\n"
	}

	s := startServe(t, bin, db)
	s.send(init)
	s.expect(`"id":1,"result":{`)
	s.send(write("2", strings.Repeat("x", 10<<20)))
	s.expectLine(`{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"request of 10.0 MiB is over --max-request-bytes 8 MiB; write it in parts with append_file"}}`)
	s.send(write("3", "small"))
	s.expect(`"id":3,"result":{"content":[{"type":"text","text":"wrote 5 bytes to big.txt"}]`)
	// The id cannot be read: it comes after more than fits in memory.
	s.send(`{"jsonrpc":"2.0","method":"x","params":{"a":"` + strings.Repeat("y", 9<<20) + `"}}` + "\n")
	s.expectLine(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"request of 9.0 MiB is over --max-request-bytes 8 MiB; write it in parts with append_file"}}`)
	s.send(batch)
	s.expectLine(batchRefused)
	s.send(`{"jsonrpc":"2.0","id":7,"method":"ping"}` + "\n")
	s.expectLine(`{"jsonrpc":"2.0","id":7,"result":{}}`)
	s.close()

	// Pipelined: initialize and the batch in one write.
	s = startServe(t, bin, db)
	s.send(init + batch)
	// Two answers, in either order (JSON-RPC does not order them): the
	// initialize result, and the batch refused by the version it names.
	a, b := s.next(), s.next()
	if b == batchRefused {
		a, b = b, a
	}
	if a != batchRefused || !strings.Contains(b, `"id":1,"result":{`) {
		t.Fatalf("satchel serve answered %.300q and %.300q, want the batch refused and the initialize result", a, b)
	}
	s.send(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"big.txt"}}}` + "\n")
	s.expect(`"id":8,"result":{"content":[{"type":"text","text":"1| small`)
	s.close()
}

// TestServeStdioNotifiesOtherProcesses: a session of the built binary's
// satchel serve, subscribed to a file, is notified of a write that
// another process (satchel fs write) makes to its database: at
// 2025-11-25 through resources/subscribe, and at 2026-07-28 (no
// initialize) on the stream of subscriptions/listen, where
// --max-subscriptions refuses one too many.
func TestServeStdioNotifiesOtherProcesses(t *testing.T) {
	bin := buildBinary(t)
	t.Run("sqlite", func(t *testing.T) { notifiesOtherProcesses(t, bin, filepath.Join(t.TempDir(), "s.db"), "default") })
	t.Run("postgres", func(t *testing.T) {
		notifiesOtherProcesses(t, bin, testenv.PostgresURL(t), fmt.Sprintf("notify-%x", time.Now().UnixNano()))
	})
}

func notifiesOtherProcesses(t *testing.T, bin, db, scope string) {
	write := func(path, content string) {
		t.Helper()
		cmd := exec.Command(bin, "--db", db, "--scope", scope, "fs", "write", path)
		cmd.Env = append(os.Environ(), "SATCHEL_DB=")
		cmd.Stdin = strings.NewReader(content)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("satchel fs write: %v\n%s", err, out)
		}
	}
	write("a.md", "zero")

	s := startServe(t, bin, db, "--scope", scope)
	s.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	s.expect(`"resources":{"listChanged":true,"subscribe":true}`)
	s.send(`{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"satchel:///a.md"}}` + "\n")
	s.expectLine(`{"jsonrpc":"2.0","id":2,"result":{}}`)
	write("a.md", "one")
	s.expectLine(`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"satchel:///a.md"}}`)
	s.close()

	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	s = startServe(t, bin, db, "--scope", scope, "--max-subscriptions", "1")
	s.send(`{"jsonrpc":"2.0","id":3,"method":"subscriptions/listen","params":{` + meta + `,"notifications":{"resourceSubscriptions":["satchel:///a.md","satchel:///?glob=b/*"]}}}` + "\n")
	s.expect(`"id":3,"error":{"code":-32600,"message":"too many subscriptions: this session holds 1, the most --max-subscriptions allows (1); unsubscribe from one first"}`)
	s.send(`{"jsonrpc":"2.0","id":4,"method":"subscriptions/listen","params":{` + meta + `,"notifications":{"resourceSubscriptions":["satchel:///?glob=b/*"]}}}` + "\n")
	s.expect(`"method":"notifications/subscriptions/acknowledged"`)
	write("b/1.md", "one")
	s.expect(`"method":"notifications/resources/updated","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":4},"uri":"satchel:///?glob=b/*"}`)
	s.close()
}

// served is a satchel serve process spoken to over stdio.
type served struct {
	t     *testing.T
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string
}

func startServe(t *testing.T, bin, db string, args ...string) *served {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, bin, append([]string{"--db", db, "serve"}, args...)...)
	cmd.Env = append(os.Environ(), "SATCHEL_DB=")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &served{t: t, cmd: cmd, in: in, lines: make(chan string, 16)}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		close(s.lines)
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return s
}

func (s *served) send(data string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, data); err != nil {
		s.t.Fatalf("writing to satchel serve: %v", err)
	}
}

// next returns the next line the server writes.
func (s *served) next() string {
	s.t.Helper()
	select {
	case l, ok := <-s.lines:
		if !ok {
			s.t.Fatal("satchel serve ended its output")
		}
		return l
	case <-time.After(time.Minute):
		s.t.Fatal("satchel serve wrote nothing")
	}
	return ""
}

func (s *served) expect(part string) {
	s.t.Helper()
	if l := s.next(); !strings.Contains(l, part) {
		s.t.Fatalf("satchel serve wrote %.500q, want it to contain %q", l, part)
	}
}

func (s *served) expectLine(want string) {
	s.t.Helper()
	if l := s.next(); l != want {
		s.t.Fatalf("satchel serve wrote %.500q, want %q", l, want)
	}
}

// close ends the input; the server must then exit cleanly.
func (s *served) close() {
	s.t.Helper()
	_ = s.in.Close()
	if err := s.cmd.Wait(); err != nil {
		s.t.Errorf("satchel serve: %v", err)
	}
}
