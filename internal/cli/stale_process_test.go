package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/satchel-dev/satchel"
)

// TestStaleWritesTwoProcesses runs two `satchel serve` processes on one
// database, one session each: a change one session never saw is refused
// to the other, word for word, until it reads the file again. On SQLite,
// and on PostgreSQL when SATCHEL_TEST_POSTGRES is set.
func TestStaleWritesTwoProcesses(t *testing.T) {
	bin := buildBinary(t)
	dbs := map[string]string{"sqlite": filepath.Join(t.TempDir(), "stale.db")}
	if pg := os.Getenv("SATCHEL_TEST_POSTGRES"); pg != "" {
		dbs["postgres"] = pg
	}
	for name, db := range dbs {
		t.Run(name, func(t *testing.T) { staleTwoProcesses(t, bin, db) })
	}
}

func staleTwoProcesses(t *testing.T, bin, db string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	for _, a := range []string{"research", "writer"} {
		if err := os.MkdirAll(filepath.Join(dir, "agents", a), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "agents", a, "agent.json"), []byte(`{"stores": {}}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	scope := fmt.Sprintf("stale%d", time.Now().UnixNano())
	connect := func(agent string, extra ...string) *mcp.ClientSession {
		t.Helper()
		args := append([]string{"--db", db, "serve", "--dir", dir, "--scope", scope, "--agent", agent}, extra...)
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = append(os.Environ(), "SATCHEL_DB=")
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatalf("connect %s: %v", agent, err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	call := func(cs *mcp.ClientSession, name string, args map[string]any) ([]string, bool) {
		t.Helper()
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var texts []string
		for _, c := range r.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				texts = append(texts, tc.Text)
			}
		}
		return texts, r.IsError
	}
	research, writer := connect("research"), connect("writer")
	if got, isErr := call(research, "write_file", map[string]any{"path": "notes/plan.md", "content": "one\ntwo\n"}); isErr {
		t.Fatalf("write: %q", got)
	}
	// writer never read it.
	got, isErr := call(writer, "edit_file", map[string]any{"path": "notes/plan.md", "old_text": "one", "new_text": "1"})
	if want := "notes/plan.md exists and you have not read it; read it before changing it"; !isErr || got[0] != want {
		t.Errorf("edit of an unread file: %q (error %v), want %q", got, isErr, want)
	}
	if got, isErr := call(writer, "read_file", map[string]any{"path": "notes/plan.md", "start_line": 1, "end_line": 1}); isErr {
		t.Fatalf("read: %q", got)
	}
	// research changes it after writer's read.
	if got, isErr := call(research, "edit_file", map[string]any{"path": "notes/plan.md", "old_text": "two", "new_text": "2"}); isErr {
		t.Fatalf("research edits its own file: %q", got)
	}
	st, err := satchel.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ws, err := st.Workspace(ctx, scope, "main")
	if err != nil {
		t.Fatal(err)
	}
	h, err := ws.History(ctx, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("notes/plan.md changed since you last read it: commit %d by agent research (edit_file, %s); read it again before changing it",
		h[0].Seq, h[0].Time.UTC().Format(time.RFC3339))
	got, isErr = call(writer, "edit_file", map[string]any{"path": "notes/plan.md", "old_text": "one", "new_text": "1"})
	if !isErr || got[0] != want {
		t.Errorf("stale edit: %q (error %v), want %q", got, isErr, want)
	}
	// After a read again, the same edit applies.
	if got, isErr := call(writer, "read_file", map[string]any{"path": "notes/plan.md"}); isErr {
		t.Fatalf("read: %q", got)
	}
	if got, isErr := call(writer, "edit_file", map[string]any{"path": "notes/plan.md", "old_text": "one", "new_text": "1"}); isErr {
		t.Errorf("edit after reading again: %q", got)
	}
	content, _ := ws.Read(ctx, "notes/plan.md")
	if content != "1\n2\n" {
		t.Errorf("content %q", content)
	}

	// --stale-writes warn applies the change and says so in a notice.
	warner := connect("writer", "--stale-writes", "warn")
	got, isErr = call(warner, "write_file", map[string]any{"path": "notes/plan.md", "content": "mine\n"})
	if isErr || len(got) != 2 || got[0] != "wrote 5 bytes to notes/plan.md" || got[1] != "notes/plan.md exists and you have not read it; read it before changing it" {
		t.Errorf("warned write: %q (error %v)", got, isErr)
	}
	// --stale-writes off: no ledger.
	off := connect("research", "--stale-writes", "off")
	if got, isErr := call(off, "delete_file", map[string]any{"path": "notes/plan.md"}); isErr || !strings.HasPrefix(got[0], "deleted") {
		t.Errorf("delete without a ledger: %q (error %v)", got, isErr)
	}
}
