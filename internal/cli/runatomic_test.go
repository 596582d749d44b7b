package cli

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/satchel-dev/satchel"
)

// TestRunScriptAtomicReport: an atomic run_script reports its publish
// commit (summary "publish run of SCRIPT (N commits)") and marks the
// commits it made on its fork as the fork's, whose sequence numbers are
// not the thread's; its changes are audited as lua:SCRIPT and the MCP
// client.
func TestRunScriptAtomicReport(t *testing.T) {
	h := newHarness(t)
	dir := t.TempDir()
	writeScript(t, dir, "summarize.lua", summarize+`store.write("out/done.md", "yes")`+"\n")
	stdin, stdout, stderr, _ := h.serving(context.Background(), "serve", "--scope", "acme", "--scripts", dir)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1.2"}, nil).Connect(context.Background(),
		&mcp.IOTransport{Reader: stdout, Writer: stdin}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr)
	}
	t.Cleanup(func() { _ = cs.Close() })
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": "a.md", "content": "a\n"}}); err != nil {
		t.Fatal(err)
	}
	r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_script",
		Arguments: map[string]any{"script": "summarize.lua", "input_text": "hello", "atomic": true}})
	if err != nil || r.IsError {
		t.Fatalf("run_script: %v %+v", err, r)
	}
	var res struct {
		Commits []struct {
			Seq     int64  `json:"seq"`
			Summary string `json:"summary"`
			Fork    string `json:"fork"`
			Via     string `json:"via"`
		} `json:"commits"`
		Published *struct {
			Seq     int64  `json:"seq"`
			Summary string `json:"summary"`
			Via     string `json:"via"`
			Client  string `json:"client"`
		} `json:"published"`
	}
	b, _ := json.Marshal(r.StructuredContent)
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if res.Published == nil || res.Published.Seq != 2 || res.Published.Summary != "publish run of summarize.lua (3 commits)" ||
		res.Published.Via != "lua:summarize.lua" || res.Published.Client != "test-client" {
		t.Errorf("published: %s", b)
	}
	if n := len(res.Commits); n != 4 || res.Commits[n-1].Seq != 2 || res.Commits[n-1].Fork != "" {
		t.Fatalf("commits: %s", b)
	}
	for _, c := range res.Commits[:3] {
		if len(c.Fork) < len("main-run-") || c.Fork[:len("main-run-")] != "main-run-" || c.Via != "lua:summarize.lua" {
			t.Errorf("a commit of the run's fork does not name it: %+v", c)
		}
	}

	page, err := h.store.Audit(context.Background(), satchel.AuditQuery{Scope: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	if e := page.Entries[0]; e.Seq != 2 || e.Via != "lua:summarize.lua" || e.Client != "test-client" || e.ClientVersion != "1.2" || e.Summary != "publish run of summarize.lua (3 commits)" {
		t.Errorf("the publish commit is audited as %+v", e)
	}
}
