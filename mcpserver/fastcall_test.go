package mcpserver

import (
	"bytes"
	"context"
	stdjson "encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/encoding/json"

	"github.com/satchel-dev/satchel"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkResponse is the SDK's wire form of the response to id with result r.
func sdkResponse(t *testing.T, id int32, r *mcp.CallToolResult) []byte {
	raw, err := sdkMarshal(r)
	if err != nil {
		t.Fatal(err)
	}
	data, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: mustID(t, float64(id)), Result: raw})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// FuzzEncodeToolResponse: the fast path writes a tool's answer byte for
// byte as the SDK does, whatever its text and structured content.
func FuzzEncodeToolResponse(f *testing.F) {
	f.Add(int32(1), "plain text", "", false, false)
	f.Add(int32(0), "<a href=\"x\">&amp;</a>\t\u00e9\u2028\u2029 \\ end\x00\x1f", "k<", true, true)
	f.Add(int32(-7), "bad utf-8 \xff\xfe and \"quotes\"\n", "path", false, true)
	f.Add(int32(1<<31-1), "", "", true, false)
	f.Add(int32(3), "line 1\r\nline 2\b\f\x7f\u00e9\u2029x\xe2\x80", "\xe2\x80\xa8", false, true)
	f.Fuzz(func(t *testing.T, id int32, text, key string, isError, withStructured bool) {
		r := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}, &mcp.TextContent{Text: key + text}}, IsError: isError}
		if withStructured {
			r.StructuredContent = map[string]any{key: text, "n": len(text), "list": []string{text, key}}
		}
		got := encodeToolResponse(mustID(t, float64(id)), r)
		if want := sdkResponse(t, id, r); !bytes.Equal(got, want) {
			t.Fatalf("fast path:\n%q\nSDK:\n%q", got, want)
		}
	})
}

// FuzzReadResultJSON: read_file's structured content is written as
// encoding/json writes a ReadResult, alone and inside the whole answer.
func FuzzReadResultJSON(f *testing.F) {
	f.Add("line 1\nline 2 <b>&\u2028", false, 0, "", false, "", int64(0))
	f.Add("", true, 41, "[truncated at 100 characters: read on from line 41]\t\xff", false, "", int64(0))
	f.Add("", false, -3, "", true, "image/png", int64(1<<40))
	f.Fuzz(func(t *testing.T, text string, truncated bool, next int, notice string, binary bool, typ string, size int64) {
		r := satchel.ReadResult{Text: text, Truncated: truncated, NextLine: next, Notice: notice, Binary: binary, Type: typ, Size: size, Data: text}
		want, err := stdjson.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendReadResult(nil, r); !bytes.Equal(got, want) {
			t.Fatalf("appendReadResult:\n%s\nencoding/json:\n%s", got, want)
		}
		res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: r}
		if got, want := encodeToolResponse(mustID(t, 5.0), res), sdkResponse(t, 5, res); !bytes.Equal(got, want) {
			t.Fatalf("fast path:\n%s\nSDK:\n%s", got, want)
		}
	})
}

// TestReadResultFields: appendReadResult writes every field ReadResult
// has; a new field fails here until it does.
func TestReadResultFields(t *testing.T) {
	want := []string{"Text text", "Truncated truncated,omitempty", "NextLine next_line,omitempty", "NextChar next_char,omitempty", "Notice notice,omitempty",
		"Binary binary,omitempty", "Type type,omitempty", "Size size,omitempty", "Data -"}
	var got []string
	rt := reflect.TypeFor[satchel.ReadResult]()
	for i := range rt.NumField() {
		f := rt.Field(i)
		got = append(got, f.Name+" "+f.Tag.Get("json"))
	}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("ReadResult's fields changed: update appendReadResult (fastcall.go) and this list\ngot  %q\nwant %q", got, want)
	}
}

// TestEncodeToolResponseDeclines: what the encoder does not write as the
// SDK would, it leaves to the SDK's encoding.
func TestEncodeToolResponseDeclines(t *testing.T) {
	text := &mcp.TextContent{Text: "x"}
	cases := map[string]struct {
		id jsonrpc.ID
		r  *mcp.CallToolResult
	}{
		"string id":   {mustID(t, "a"), &mcp.CallToolResult{Content: []mcp.Content{text}}},
		"meta":        {mustID(t, 1.0), &mcp.CallToolResult{Meta: mcp.Meta{"k": 1}, Content: []mcp.Content{text}}},
		"image":       {mustID(t, 1.0), &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: []byte{1}, MIMEType: "image/png"}}}},
		"annotations": {mustID(t, 1.0), &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "x", Annotations: &mcp.Annotations{Priority: 1}}}}},
	}
	for name, c := range cases {
		if got := encodeToolResponse(c.id, c.r); got != nil {
			t.Errorf("%s: encoded %q", name, got)
		}
	}
	if got := encodeToolResponse(mustID(t, 2.0), &mcp.CallToolResult{Content: []mcp.Content{}}); !bytes.Equal(got, sdkResponse(t, 2, &mcp.CallToolResult{Content: []mcp.Content{}})) {
		t.Errorf("no content: %q", got)
	}
}

// FuzzParseCall: the fast path reads a call's name and arguments as the
// SDK's decoder does (case-sensitive keys, the last of repeated keys), and
// takes no call whose params carry what only the SDK handles.
func FuzzParseCall(f *testing.F) {
	for _, s := range []string{
		`{"name":"read_file","arguments":{"path":"a.md"}}`,
		`{"name":"x","Name":"y","arguments":null}`,
		`{"name":"a","name":"b"}`,
		`{"name":"a","_meta":{"progressToken":1}}`,
		`{"name":"a","inputResponses":{}}`,
		`{"name":"a","requestState":"s"}`,
		`{"name":"\u0061","arguments":[1,2]} `,
		`{"name":1}`, `[]`, `"x"`, `{"name":"a"} x`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, params []byte) {
		p, ok := parseCall(params)
		var sdk struct {
			Meta           json.RawMessage `json:"_meta"`
			Name           string          `json:"name"`
			Arguments      json.RawMessage `json:"arguments"`
			InputResponses json.RawMessage `json:"inputResponses"`
			RequestState   json.RawMessage `json:"requestState"`
		}
		dec := json.NewDecoder(bytes.NewReader(params))
		dec.DontMatchCaseInsensitiveStructFields()
		err := dec.Decode(&sdk)
		if !ok {
			return
		}
		if err != nil {
			t.Fatalf("taken, the SDK refuses them: %v", err)
		}
		if sdk.Meta != nil || sdk.InputResponses != nil || sdk.RequestState != nil {
			t.Fatalf("taken with fields for the SDK: %q", params)
		}
		if p.Name != sdk.Name || !bytes.Equal(p.Arguments, sdk.Arguments) {
			t.Fatalf("read %q %q, the SDK %q %q", p.Name, p.Arguments, sdk.Name, sdk.Arguments)
		}
	})
}

// TestFastPathAnswersAsTheSDK: over streamable HTTP, a tool call the fast
// path serves is answered byte for byte as the SDK answers the same call
// (one with _meta, which goes to the SDK), refusals and unknown tools
// included. (Over stdio, TestIOTransportAsSDK compares the transports.)
func TestFastPathAnswersAsTheSDK(t *testing.T) {
	f := newHTTP(t, Config{})
	secret, _ := token(t, f.st, satchel.TokenSpec{Agent: "writer", Scope: "acme"})
	h := rawSession(t, f, secret, "2025-11-25")
	html := `<b>"x" & y</b>` + "\u2028\xff\n"
	calls := []string{
		`"name":"write_file","arguments":{"path":"a.md","content":` + mustJSON(t, html) + `}`,
		`"name":"read_file","arguments":{"path":"a.md"}`,
		`"name":"read_file","arguments":{"path":"a.md","start_line":1,"end_line":1,"numbered":false}`,
		`"name":"read_file","arguments":{"path":"missing.md"}`,
		`"name":"read_file","arguments":{"path":"../x"}`,
		`"name":"read_file","arguments":null`,
		`"name":"read_file"`,
		`"name":"glob","arguments":{"pattern":"*.md"}`,
		`"name":"list_files","arguments":{}`,
		`"name":"no_such_tool","arguments":{}`,
	}
	for i, c := range calls {
		fast := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{%s}}`, 10+i, c)
		sdk := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"_meta":{},%s}}`, 10+i, c)
		var bodies [2]string
		for k, body := range []string{sdk, fast} {
			code, b, resp := post(t, f.url+MCPPath, secret, h, body)
			if code != 200 || resp.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("%s: %d %q", body, code, b)
			}
			bodies[k] = b
		}
		if strings.HasPrefix(c, `"name":"write_file"`) {
			continue // the second write changes nothing: its answer differs
		}
		if bodies[0] != bodies[1] {
			t.Errorf("call %s:\nfast path %s\nSDK       %s", c, bodies[1], bodies[0])
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	b, err := stdjson.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestFastPathCancelled: notifications/cancelled cancels a call running on
// the fast path, as the SDK cancels its own; the call is still answered.
func TestFastPathCancelled(t *testing.T) {
	started := make(chan struct{})
	slow := func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	}
	pass := func(next mcp.MethodHandler) mcp.MethodHandler { return next }
	fc := newFastConn(newFastCalls(map[string]mcp.ToolHandler{"slow": slow}, pass))
	defer fc.close()
	id := mustID(t, 7.0)
	done := make(chan []byte)
	go func() { done <- fc.serve(id, &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "slow"}}) }()
	<-started
	fc.cancelled(&jsonrpc.Request{Method: "notifications/cancelled", Params: []byte(`{"requestId":8}`)})
	select {
	case <-done:
		t.Fatal("another call's cancellation stopped the call")
	case <-time.After(50 * time.Millisecond):
	}
	fc.cancelled(&jsonrpc.Request{Method: "notifications/cancelled", Params: []byte(`{"requestId":7,"reason":"x"}`)})
	select {
	case out := <-done:
		if !strings.Contains(string(out), `"id":7`) || !strings.Contains(string(out), "context canceled") {
			t.Errorf("answer %q", out)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled call still runs")
	}
}
