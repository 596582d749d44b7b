package satchel_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel"
)

// TestRefusalLogged: a refusal of the file rules is logged at WARN, with
// what was refused and why, through the logger SetLogger gave the store.
func TestRefusalLogged(t *testing.T) {
	ctx := context.Background()
	st, err := satchel.Open(ctx, "memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var buf bytes.Buffer // the refusals are logged by the calls refused, in this goroutine
	st.SetLogger(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn})))
	rules, err := satchel.ParseFileRules("secrets/**=none,**=read")
	if err != nil {
		t.Fatal(err)
	}
	ws, err := st.Workspace(ctx, "s", "main", satchel.WithFileRules(rules),
		satchel.WorkspaceActor(satchel.Actor{Agent: "research", Credential: "tok1"}))
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.Write(ctx, "notes/a.md", "x\n"); err == nil {
		t.Fatal("a write under read rules was not refused")
	}
	if _, err := ws.Read(ctx, "secrets/k.md"); err == nil {
		t.Fatal("a read of a hidden file was not refused")
	}
	var got []map[string]any
	for line := range strings.Lines(buf.String()) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		got = append(got, m)
	}
	want := []map[string]any{
		{"level": "WARN", "msg": "file access refused", "scope": "s", "thread": "main", "agent": "research",
			"credential": "tok1", "op": "write", "path": "notes/a.md", "reason": "read_only"},
		{"level": "WARN", "msg": "file access refused", "scope": "s", "thread": "main", "agent": "research",
			"credential": "tok1", "op": "read", "path": "secrets/k.md", "reason": "hidden"},
	}
	if len(got) != len(want) {
		t.Fatalf("logged %d lines, want %d:\n%s", len(got), len(want), buf.String())
	}
	for i, w := range want {
		for k, v := range w {
			if got[i][k] != v {
				t.Errorf("line %d: %s = %v, want %v\n%s", i, k, got[i][k], v, buf.String())
			}
		}
	}
}
