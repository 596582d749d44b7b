package mcpserver

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A step of a stdio script: bytes written to the server, then how many
// lines it answers before the next step.
type step struct {
	in      string
	answers int
}

var initLine = initAt("2025-11-25")

// initAt is a client's initialize at protocol version v, and its
// initialized notification.
func initAt(v string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + v + `","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"
}

// runScript serves a new store over the SDK's stdio transport (sdk) or
// satchel's, plays steps, then closes the input: it returns every line
// written and what Run returned.
func runScript(t *testing.T, sdk bool, limit int, steps []step) ([]string, error) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var tr mcp.Transport = &IOTransport{Reader: inR, Writer: outW, MaxMessageBytes: limit}
	if sdk {
		tr = &mcp.IOTransport{Reader: inR, Writer: outW, MaxLineLength: limit}
	}
	s := newServer(t, Config{})
	done := make(chan error, 1)
	go func() { done <- s.Run(context.Background(), tr) }()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var out []string
	for _, st := range steps {
		if _, err := io.WriteString(inW, st.in); err != nil {
			break // the server stopped reading
		}
		// The calls of one step run concurrently: their answers are
		// compared in order of their bytes.
		from := len(out)
		for range st.answers {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("sdk=%v: the output ended; got %q", sdk, out)
				}
				out = append(out, l)
			case <-time.After(10 * time.Second):
				t.Fatalf("sdk=%v: no answer to %.200q; got %q", sdk, st.in, out)
			}
		}
		slices.Sort(out[from:])
	}
	_ = inW.Close()
	var err error
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("sdk=%v: Run did not return at the end of input", sdk)
	}
	_ = outW.Close()
	for l := range lines {
		out = append(out, l)
	}
	return out, err
}

func rpcCall(id any, method string, params any) string {
	m := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		m["params"] = params
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func toolCall(id any, tool string, args map[string]any) string {
	return rpcCall(id, "tools/call", map[string]any{"name": tool, "arguments": args})
}

// TestIOTransportAsSDK plays the same scripts to the SDK's stdio transport
// and to satchel's: the bytes written back must be the same.
func TestIOTransportAsSDK(t *testing.T) {
	big := strings.Repeat("0123456789abcdef\n", 1<<16) // 1 MiB: longer than the read buffer
	html := "<a href=\"x\">&amp;</a>\t\u00e9\u2028 \\ end"
	pretty, _ := json.MarshalIndent(map[string]any{"jsonrpc": "2.0", "id": 40, "method": "tools/call",
		"params": map[string]any{"name": "write_file", "arguments": map[string]any{"path": "p.md", "content": "a\nb {[\"\\\"}}"}}}, "", "  ")
	prettyBig, _ := json.MarshalIndent(map[string]any{"jsonrpc": "2.0", "id": 41, "method": "tools/call",
		"params": map[string]any{"name": "write_file", "arguments": map[string]any{"path": "q.md", "content": big[:200000]}}}, "", "  ")
	scripts := map[string][]step{
		"calls": {
			{initLine, 1},
			{rpcCall(2, "tools/list", nil) + "\n", 1},
			{toolCall(3, "write_file", map[string]any{"path": "a.md", "content": html}) + "\n", 1},
			{toolCall(4, "read_file", map[string]any{"path": "a.md"}) + "\n", 1},
			{toolCall(5, "read_file", map[string]any{"path": "a.md", "numbered": false}) + "\r\n", 1},
			{rpcCall("abc", "ping", nil) + "\n", 1},
			{rpcCall(0, "ping", nil) + "\n", 1},
			{rpcCall(-7, "ping", nil) + "\n", 1},
			{rpcCall(8.0, "ping", map[string]any{}) + "\n", 1},
			{toolCall(9, "no_such_tool", nil) + "\n", 1},
			{rpcCall(10, "tools/call", "not an object") + "\n", 1},
			{rpcCall(11, "no/such/method", nil) + "\n", 1},
			{toolCall(12, "write_file", map[string]any{"path": "big.md", "content": big}) + "\n", 1},
			{toolCall(13, "read_file", map[string]any{"path": "big.md", "start_line": 65535}) + "\n", 1},
			{"\n  \n\t" + rpcCall(14, "ping", nil) + "\n", 1},
			{rpcCall(15, "ping", nil) + "\n" + rpcCall(16, "ping", nil) + "\n", 2},
			{rpcCall(17, "ping", nil)[:20], 0},
			{rpcCall(17, "ping", nil)[20:] + "\n", 1},
			{string(pretty) + "\n", 1},
			{string(prettyBig) + "\n", 1},
			{rpcCall(18, "ping", nil) + "\r" + rpcCall(19, "ping", nil) + "\n", 2},
			{`{"jsonrpc":"2.0","id":20,"method":"ping","params":{"_meta":{"x":"\u00e9\ud83d\ude00"}}}` + "\n", 1},
			{rpcCall(21, "ping", nil), 1}, // the last, without a line end
		},
		"batches": { // accepted up to 2025-03-26 (TestIOTransportBatchesByVersion)
			{initAt("2025-03-26"), 1},
			{"[" + toolCall(2, "write_file", map[string]any{"path": "b.md", "content": html}) + "," + rpcCall(3, "ping", nil) + "]\n", 1},
			{"[" + toolCall("x", "read_file", map[string]any{"path": "b.md"}) + "]\n", 1},
			{"[\n" + rpcCall(4, "ping", nil) + ",\n" + rpcCall(5, "tools/list", nil) + "\n]\n", 1},
			{"[" + rpcCall(6, "ping", nil) + "," + toolCall(7, "glob", map[string]any{"pattern": "**"}) + "," + rpcCall(8, "nope", nil) + "]\n", 1},
			{rpcCall(9, "ping", nil) + "\n", 1},
			// The SDK waits for an answer to a batch's notification too:
			// the batch is never answered.
			{"[" + rpcCall(10, "ping", nil) + `,{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}]` + "\n", 0},
			{rpcCall(11, "ping", nil) + "\n", 1},
		},
	}
	for name, steps := range scripts {
		t.Run(name, func(t *testing.T) {
			want, werr := runScript(t, true, 0, steps)
			got, gerr := runScript(t, false, 0, steps)
			if (werr == nil) != (gerr == nil) {
				t.Errorf("Run: %v; the SDK's transport: %v", gerr, werr)
			}
			if len(got) != len(want) {
				t.Fatalf("%d lines written, the SDK's transport %d:\n%.3000q\n%.3000q", len(got), len(want), got, want)
			}
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("line %d:\n%.2000s\nthe SDK's transport:\n%.2000s", i, got[i], want[i])
				}
			}
		})
	}
}

// TestIOTransportBatchesByVersion: a batch is answered as the SDK's own
// stdio transport answers it, unwrapped, at every protocol version the SDK
// knows (and before any): accepted before 2025-06-18, refused from then on,
// which ends the connection.
func TestIOTransportBatchesByVersion(t *testing.T) {
	batch := "[" + rpcCall(2, "ping", nil) + "," + rpcCall(3, "ping", nil) + "]\n"
	versions := append([]string{"", "2024-10-07"}, mcp.SupportedProtocolVersions()...)
	for _, v := range versions {
		t.Run("version="+v, func(t *testing.T) {
			// The version the server answers: an unknown or too new one
			// is answered with the newest the initialize handshake has.
			negotiated := v
			if !slices.Contains(mcp.SupportedProtocolVersions(), v) || v >= "2026" {
				negotiated = "2025-11-25"
			}
			accepted := v == "" || negotiated < "2025-06-18"
			answers := 0
			if accepted {
				answers = 1
			}
			steps := []step{{batch, answers}}
			if v != "" {
				steps = []step{{initAt(v), 1}, {batch, answers}}
			}
			want, werr := runScript(t, true, 0, steps)
			if n := len(steps) - 1 + answers; len(want) != n {
				t.Fatalf("the SDK's transport wrote %d lines, want %d (batch accepted: %v): %.2000q", len(want), n, accepted, want)
			}
			if !accepted {
				// The SDK's transport ends the session without a word;
				// satchel's answers the batch with an error and goes on
				// (TestIOTransportSurvivesBadInput).
				want = append(want, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"JSON-RPC batching is not supported in 2025-06-18 and later (request version: `+negotiated+`)"}}`)
				werr = nil
				steps[len(steps)-1].answers = 1
			}
			got, gerr := runScript(t, false, 0, steps)
			if (werr == nil) != (gerr == nil) {
				t.Errorf("Run: %v; the SDK's transport: %v", gerr, werr)
			}
			if !slices.Equal(got, want) {
				t.Errorf("written:\n%.3000q\nthe SDK's transport:\n%.3000q", got, want)
			}
		})
	}
}

// TestIOTransportRefusals: what ends the SDK's stdio connection ends
// satchel's, before anything is answered.
func TestIOTransportRefusals(t *testing.T) {
	deep := `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"a":` + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + "}}"
	notDeep := `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"a":` + strings.Repeat("[", 998) + strings.Repeat("]", 998) + `,"s":"` + strings.Repeat("[", 2000) + `"}}`
	for _, c := range []struct {
		name, line string
		answers    int
		limit      int
		init       string // initLine when empty
	}{
		{name: "not JSON", line: "not json\n"},
		{name: "version", line: `{"jsonrpc":"1.0","id":2,"method":"ping"}` + "\n"},
		{name: "case of a key", line: `{"JSONRPC":"2.0","id":2,"method":"ping"}` + "\n"},
		{name: "no id nor method", line: `{"jsonrpc":"2.0"}` + "\n"},
		{name: "id type", line: `{"jsonrpc":"2.0","id":true,"method":"ping"}` + "\n"},
		{name: "method type", line: `{"jsonrpc":"2.0","id":2,"method":5}` + "\n"},
		{name: "scalar", line: "42\n"},
		{name: "string", line: `"ping"` + "\n"},
		{name: "null", line: "null\n"},
		{name: "empty batch", line: "[]\n"},
		{name: "batch of garbage", line: "[1,2]\n"},
		{name: "duplicate ids in a batch", line: "[" + rpcCall(2, "ping", nil) + "," + rpcCall(2, "ping", nil) + "]\n", init: initAt("2025-03-26")},
		{name: "space after", line: rpcCall(2, "ping", nil) + " \n"},
		{name: "two on a line", line: rpcCall(2, "ping", nil) + rpcCall(3, "ping", nil) + "\n"},
		{name: "second after a space", line: rpcCall(2, "ping", nil) + " " + rpcCall(3, "ping", nil) + "\n"},
		{name: "bad escape", line: `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"a":"\q"}}` + "\n"},
		{name: "control character", line: "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\",\"params\":{\"a\":\"\x01\"}}\n"},
		{name: "bad literal", line: `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"a":tru}}` + "\n"},
		{name: "trailing comma", line: `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"a":1,}}` + "\n"},
		{name: "leading zero", line: `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"a":01}}` + "\n"},
		{name: "unterminated at the end", line: `{"jsonrpc":"2.0","id":2,`},
		{name: "unterminated string", line: `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"a":"x}}` + "\n" + "\n"},
		{name: "too deep", line: deep + "\n"},
		{name: "deep, not too deep", line: notDeep + "\n", answers: 1},
		{name: "large enough", line: toolCall(2, "write_file", map[string]any{"path": "a", "content": strings.Repeat("x", 7000)}) + "\n", answers: 1, limit: 8192},
	} {
		t.Run(c.name, func(t *testing.T) {
			steps := []step{{cmp.Or(c.init, initLine), 1}, {c.line, c.answers}}
			want, werr := runScript(t, true, c.limit, steps)
			got, gerr := runScript(t, false, c.limit, steps)
			if (werr == nil) != (gerr == nil) {
				t.Errorf("Run: %v; the SDK's transport: %v", gerr, werr)
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("written:\n%.1000q\nthe SDK's transport:\n%.1000q", got, want)
			}
		})
	}
}

// TestIOTransportConcurrentCalls: many calls in flight on one connection;
// each answer is a line of its own (the client would fail otherwise).
func TestIOTransportConcurrentCalls(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := newServer(t, Config{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, &IOTransport{Reader: inR, Writer: outW}) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t"}, nil).Connect(context.Background(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &client{t: t, cs: cs}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 20 {
				p := fmt.Sprintf("g%02d/f%02d.md", g, i)
				content := strings.Repeat(p+"\n", 50*(i+1))
				r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": p, "content": content}})
				if err != nil || r.IsError {
					t.Errorf("write %s: %v %v", p, err, r)
					return
				}
				r, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": p, "numbered": false}})
				if err != nil || r.IsError || texts(t, r)[0] != content {
					t.Errorf("read %s: %v", p, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if got := c.ok("list_files", map[string]any{}); strings.Count(got, "\n")+1 != 16*20 {
		t.Errorf("%d files listed, want %d", strings.Count(got, "\n")+1, 16*20)
	}
	_ = cs.Close()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
}

// TestIOTransportWrites: concurrent writes of messages are whole lines,
// and a response is what jsonrpc.EncodeMessage makes of it.
func TestIOTransportWrites(t *testing.T) {
	outR, outW := io.Pipe()
	conn, err := (&IOTransport{Reader: io.NopCloser(strings.NewReader("")), Writer: outW}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var msgs []jsonrpc.Message
	for i := range 64 {
		res, _ := json.Marshal(map[string]any{"n": i, "text": strings.Repeat("<&>\"\\ é\n", 1000*(i%4))})
		switch i % 4 {
		case 0:
			msgs = append(msgs, &jsonrpc.Response{ID: mustID(t, float64(i)), Result: res})
		case 1:
			msgs = append(msgs, &jsonrpc.Response{ID: mustID(t, fmt.Sprint("s<", i)), Result: res})
		case 2:
			msgs = append(msgs, &jsonrpc.Response{ID: mustID(t, float64(i)), Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "no <way>"}})
		case 3:
			msgs = append(msgs, &jsonrpc.Request{Method: "notifications/message", Params: res})
		}
	}
	want := map[string]bool{}
	for _, m := range msgs {
		b, err := jsonrpc.EncodeMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		want[string(b)] = true
	}
	var wg sync.WaitGroup
	for _, m := range msgs {
		wg.Go(func() {
			if err := conn.Write(context.Background(), m); err != nil {
				t.Error(err)
			}
		})
	}
	got := make(chan []string)
	go func() {
		var lines []string
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
		got <- lines
	}()
	wg.Wait()
	_ = conn.Close()
	lines := <-got
	if len(lines) != len(msgs) {
		t.Fatalf("%d lines, want %d", len(lines), len(msgs))
	}
	for _, l := range lines {
		if !want[l] {
			t.Errorf("line not as jsonrpc.EncodeMessage writes it: %.200s", l)
		}
		delete(want, l)
	}
}

func mustID(t *testing.T, v any) jsonrpc.ID {
	id, err := jsonrpc.MakeID(v)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestIOTransportClose: Close ends a Read that waits for input, and
// Read then reports the end.
func TestIOTransportClose(t *testing.T) {
	inR, _ := io.Pipe()
	conn, err := (&IOTransport{Reader: inR, Writer: nopWriter{}}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	read := make(chan error, 1)
	go func() {
		_, err := conn.Read(context.Background())
		read <- err
	}()
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-read:
		if err != io.EOF {
			t.Errorf("Read after Close: %v, want EOF", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Read still waits after Close")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := conn.Read(ctx); err != context.Canceled {
		t.Errorf("Read with a done context: %v", err)
	}
	if err := conn.Write(ctx, &jsonrpc.Request{Method: "x"}); err != context.Canceled {
		t.Errorf("Write with a done context: %v", err)
	}
}

type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }
func (nopWriter) Close() error                { return nil }

// TestIOTransportAnswersBeforeEOF: the end of input ends the session only
// once every call read before it is answered. The call in flight at the
// end of input is stopped by the call timeout, and its answer (that
// refusal) must still be written.
func TestIOTransportAnswersBeforeEOF(t *testing.T) {
	fc := newFakeCollections()
	s := newServer(t, Config{Collections: fc, Agent: "writer", CallTimeout: 300 * time.Millisecond})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- s.Run(context.Background(), &IOTransport{Reader: inR, Writer: outW}) }()
	lines := make(chan string, 10)
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	if _, err := io.WriteString(inW, initLine+toolCall(2, "store__slow__get", map[string]any{})+"\n"); err != nil {
		t.Fatal(err)
	}
	<-lines // initialize's answer
	<-fc.started
	_ = inW.Close()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
	_ = outW.Close()
	var got []string
	for l := range lines {
		got = append(got, l)
	}
	if len(got) != 1 || !strings.Contains(got[0], `"id":2,"result"`) || !strings.Contains(got[0], "was stopped") {
		t.Errorf("after the end of input: %q, want the slow call's answer", got)
	}
}
