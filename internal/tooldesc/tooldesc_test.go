package tooldesc

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func tool(name, desc string, props ...string) *mcp.Tool {
	p := map[string]any{}
	for _, n := range props {
		p[n] = map[string]any{"type": "string"}
	}
	return &mcp.Tool{Name: name, Description: desc, InputSchema: json.RawMessage(mustJSON(map[string]any{"type": "object", "properties": p}))}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tools []*mcp.Tool
		want  []string // substrings of the problems, in order
	}{
		{"clean", []*mcp.Tool{
			tool("read_file", "Read the file at path, from start_line.", "path", "start_line"),
			tool("edit_file", "Replace old_text in the file at path; read it with read_file first.", "path", "old_text"),
		}, nil},
		{"an argument not named", []*mcp.Tool{tool("read_file", "Read a file.", "path")}, []string{"read_file: argument path is not named"}},
		{"a name that is nothing", []*mcp.Tool{tool("read_file", "Read the file at path, up to max_lines.", "path")}, []string{"names max_lines, which is not"}},
		{"a sibling's argument", []*mcp.Tool{
			tool("grep", "Search under path for pattern; include filters files.", "pattern", "path", "include"),
			tool("glob", "Match pattern; include is not supported.", "pattern"),
		}, []string{"glob: the description names include, an argument of another tool"}},
		{"another tool's argument named as such", []*mcp.Tool{
			tool("stat_file", "Describe the file at path; give the hash as the if_hash argument of write_file, or as edit_file's if_hash.", "path"),
			tool("write_file", "Write content at path, if if_hash matches.", "path", "content", "if_hash"),
			tool("edit_file", "Edit path, if if_hash matches.", "path", "if_hash"),
		}, nil},
		{"no final period", []*mcp.Tool{tool("glob", "Match pattern", "pattern")}, []string{"does not end a sentence"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Check(tc.tools, "")
			if len(got) != len(tc.want) {
				t.Fatalf("Check = %q, want %d problems like %q", got, len(tc.want), tc.want)
			}
			for i := range got {
				if !strings.Contains(got[i], tc.want[i]) {
					t.Errorf("problem %d = %q, want it to contain %q", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func FuzzCheck(f *testing.F) {
	f.Add("Read the file at path.", "path")
	f.Add("edit_file's old_text, the if_hash argument of write_file.", "if_hash")
	f.Add("", "")
	f.Fuzz(func(t *testing.T, desc, prop string) {
		tools := []*mcp.Tool{tool("a_tool", desc, prop), tool("store__x__get", desc, prop)}
		for _, p := range Check(tools, "p_") {
			if p == "" {
				t.Error("an empty problem")
			}
		}
	})
}
