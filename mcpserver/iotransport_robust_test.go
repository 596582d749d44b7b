package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestIOTransportSurvivesBadInput: a message over the bound and a batch
// where batches are refused are each answered with an error, and the
// session goes on to answer the next request.
func TestIOTransportSurvivesBadInput(t *testing.T) {
	const limit = 8192
	big := strings.Repeat("x", 9000)
	ping := rpcCall(9, "ping", nil) + "\n"
	pong := `{"jsonrpc":"2.0","id":9,"result":{}}`
	over := func(id, size string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32600,"message":"request of ` + size + ` is over --max-request-bytes 8 KiB; write it in parts with append_file"}}`
	}
	batchRefused := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"JSON-RPC batching is not supported in 2025-06-18 and later (request version: 2025-11-25)"}}`
	batch := "[" + rpcCall(2, "ping", nil) + "," + rpcCall(3, "ping", nil) + "]\n"
	idLast := `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"write_file","arguments":{"path":"a","content":"` + big + `","id":7}},"id":"last"}`
	for _, c := range []struct {
		name  string
		steps []step
		want  []string // the lines after initialize's answer
	}{
		{name: "too large", steps: []step{{toolCall(2, "write_file", map[string]any{"path": "a", "content": big}) + "\n", 1}, {ping, 1}},
			want: []string{over("2", "8.9 KiB"), pong}},
		{name: "id last, a nested id before it", steps: []step{{idLast + "\n", 1}, {ping, 1}},
			want: []string{over(`"last"`, "8.9 KiB"), pong}},
		{name: "no id", steps: []step{{`{"jsonrpc":"2.0","method":"x","params":{"a":"` + big + `"}}` + "\n", 1}, {ping, 1}},
			want: []string{over("null", "8.8 KiB"), pong}},
		{name: "not JSON", steps: []step{{strings.Repeat("not json ", 1000) + "\n", 1}, {ping, 1}},
			want: []string{over("null", "8.8 KiB"), pong}},
		{name: "id of an object", steps: []step{{`{"jsonrpc":"2.0","id":{"a":1},"method":"x","params":{"a":"` + big + `"}}` + "\n", 1}, {ping, 1}},
			want: []string{over("null", "8.8 KiB"), pong}},
		{name: "in pieces", steps: []step{{toolCall(4, "write_file", map[string]any{"path": "a", "content": big})[:5000], 0}, {big + "\n", 1}, {ping, 1}},
			want: []string{over("4", "13.7 KiB"), pong}},
		{name: "batch", steps: []step{{batch, 1}, {ping, 1}}, want: []string{batchRefused, pong}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := runScript(t, false, limit, append([]step{{initLine, 1}}, c.steps...))
			if err != nil {
				t.Errorf("Run: %v", err)
			}
			if len(got) < 1 || strings.Join(got[1:], "\n") != strings.Join(c.want, "\n") {
				t.Errorf("written:\n%.1000q\nwant:\n%q", got, c.want)
			}
		})
	}

	// Pipelined: initialize and a batch in one write. The batch is refused
	// as the answer to initialize, not yet written, will make it.
	for _, v := range []string{"2025-06-18", "2025-11-25", "2026-07-28", "1999-01-01"} {
		got, err := runScript(t, false, 0, []step{{initAt(v) + batch, 2}, {ping, 1}})
		if err != nil {
			t.Errorf("Run: %v", err)
		}
		if len(got) != 3 || !strings.Contains(got[1], `"id":null,"error":{"code":-32600,"message":"JSON-RPC batching is not supported in 2025-06-18 and later`) || got[2] != pong {
			t.Errorf("version %s: written:\n%.3000q", v, got)
		}
	}
	// Without initialize (2026-07-28 has none), the version the batch's
	// requests name in their _meta.
	meta := map[string]any{"_meta": map[string]any{mcp.MetaKeyProtocolVersion: "2026-07-28"}}
	got, err := runScript(t, false, 0, []step{{"[" + rpcCall(2, "ping", meta) + "," + rpcCall(3, "ping", meta) + "]\n", 1}, {ping, 1}})
	want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"JSON-RPC batching is not supported in 2025-06-18 and later (request version: 2026-07-28)"}}`
	if err != nil || len(got) != 2 || got[0] != want || got[1] != pong {
		t.Errorf("a batch at 2026-07-28: %v, written:\n%.3000q", err, got)
	}

	// At a version with batches, initialize and a batch in one write: the
	// batch is answered.
	got, _ = runScript(t, false, 0, []step{{initAt("2025-03-26") + batch, 2}})
	if len(got) != 2 || !strings.HasPrefix(got[0], `[{"jsonrpc":"2.0","id":2,"result":{}}`) { // sorted
		t.Errorf("2025-03-26: written:\n%.3000q", got)
	}
}

func TestSizeText(t *testing.T) {
	for _, c := range []struct {
		n     int64
		whole bool
		want  string
	}{
		{10<<20 + 200, false, "10.0 MiB"}, {8 << 20, true, "8 MiB"}, {8 << 20, false, "8.0 MiB"},
		{1000, true, "1000 bytes"}, {1536, true, "1.5 KiB"}, {3 << 30, true, "3 GiB"},
	} {
		if got := sizeText(c.n, c.whole); got != c.want {
			t.Errorf("sizeText(%d, %v) = %q, want %q", c.n, c.whole, got, c.want)
		}
	}
}

// FuzzIDFinder: fed a JSON object in any pieces, idFinder finds its
// top-level id as a decoder does, when it is a string or a number.
func FuzzIDFinder(f *testing.F) {
	f.Add(`{"jsonrpc":"2.0","id":5,"method":"x"}`, 3)
	f.Add(`{"params":{"id":1},"id":"a\"b"}`, 7)
	f.Add(`{"id":[1],"x":"}"}`, 1)
	f.Add(`{ "id" : -1.5e3 }`, 100)
	f.Add(`["id",1]`, 2)
	f.Fuzz(func(t *testing.T, s string, cut int) {
		var id idFinder
		if cut < 0 {
			cut = -cut
		}
		cut %= len(s) + 1
		id.feed([]byte(s[:cut]))
		id.feed([]byte(s[cut:]))
		got := id.id()
		var obj map[string]json.RawMessage
		if json.Unmarshal([]byte(s), &obj) != nil || !strings.HasPrefix(strings.TrimSpace(s), "{") {
			return // no promise but not to panic
		}
		want, ok := obj["id"]
		var v any
		if ok && json.Unmarshal(want, &v) == nil {
			switch v.(type) {
			case string, float64:
			default:
				ok = false
			}
		}
		if !ok || len(want) > maxIDBytes {
			if got != nil && ok {
				t.Errorf("%q: id %s, want none", s, got)
			}
			return
		}
		var g any
		if got == nil || json.Unmarshal(got, &g) != nil || g != v {
			t.Errorf("%q: id %s, want %s", s, got, want)
		}
	})
}
