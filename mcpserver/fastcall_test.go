package mcpserver

import (
	"bytes"
	"testing"

	"github.com/segmentio/encoding/json"

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
