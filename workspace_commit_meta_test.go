package satchel

import (
	"encoding/json"
	"strings"
	"testing"
)

// marshalMeta is what a commit's metadata was before appendMeta: what it
// must still be, byte for byte.
func marshalMeta(op, summary string, a Actor, key string, own bool) string {
	if len(summary) > 200 {
		summary = summary[:200] + "…"
	}
	b, _ := json.Marshal(commitMeta{Op: op, Summary: summary, Actor: a, Key: key, Own: own})
	return string(b)
}

func checkMeta(t *testing.T, op string, ops []opNote, a Actor) {
	checkMetaKey(t, op, ops, a, "")
	checkMetaKey(t, op, ops, a, "retry-<1>&")
}

func checkMetaKey(t *testing.T, op string, ops []opNote, a Actor, key string) {
	t.Helper()
	parts := make([]string, len(ops))
	for i, o := range ops {
		parts[i] = o.op + " " + o.path
		if o.to != "" {
			parts[i] += " -> " + o.to
		}
	}
	sum := strings.Join(parts, "; ")
	// A list of many operations is the store's own when no path holds
	// "; " (commitMeta.Own).
	own := op == "batch" || op == "spill"
	for _, o := range ops {
		own = own && !strings.Contains(o.path, "; ") && !strings.Contains(o.to, "; ")
	}
	want := marshalMeta(op, sum, a, key, own)
	w := &Workspace{actor: a, key: key}
	if got := string(w.metaOps(op, ops)); got != want {
		t.Errorf("metaOps(%q, %q, %+v):\n got %s\nwant %s", op, ops, a, got, want)
	}
	want = marshalMeta(op, sum, a, key, false)
	if got := string(w.meta(op, sum)); got != want {
		t.Errorf("meta(%q, %q, %+v):\n got %s\nwant %s", op, sum, a, got, want)
	}
	var m commitMeta
	if err := json.Unmarshal(w.metaOps(op, ops), &m); err != nil {
		t.Errorf("metaOps(%q, %q, %+v) does not decode: %v", op, ops, a, err)
	}
}

func TestMeta(t *testing.T) {
	long := strings.Repeat("x", 200)
	for _, tc := range []struct {
		op  string
		ops []opNote
		a   Actor
	}{
		{"batch", nil, Actor{}},
		{"write", []opNote{{"write", "notes/a.md", ""}}, Actor{}},
		{"move", []opNote{{"move", "a", "b/c"}}, Actor{Agent: "research", Credential: "tok_1", Via: "mcp:move_file"}},
		{"move", []opNote{{"move", "a", "b/c"}}, Actor{Agent: "r", Via: "mcp:move_file", Client: "claude-<code>", ClientVersion: "1.0 \"b\""}},
		{"batch", []opNote{{"write", "a", ""}, {"append", "b", ""}, {"delete", "c", ""}}, Actor{Via: "cli:fs write"}},
		{"batch", []opNote{{"write", "a; write b", ""}, {"delete", "c", ""}}, Actor{}},
		{"spill", []opNote{{"write", "spill/a", ""}, {"move", "x", "y; z"}}, Actor{}},
		{"write", []opNote{{"write", "<a>&\"b\"\\\t\n\r\b\f\x01\x7f\u2028\u2029é日🎉", ""}}, Actor{Agent: "<script>&"}},
		{"write", []opNote{{"write", "bad \xff utf8 \xc3", ""}}, Actor{Credential: "\xe2\x80"}},
		// Summaries around the cut at 200 bytes, one cut inside "é" and
		// one inside "🎉".
		{"write", []opNote{{"write", long[:194], ""}}, Actor{}},
		{"write", []opNote{{"write", long[:195], ""}}, Actor{}},
		{"write", []opNote{{"write", long[:196], ""}}, Actor{}},
		{"write", []opNote{{"write", long[:193] + "éé", ""}}, Actor{}},
		{"write", []opNote{{"write", long[:192] + "🎉🎉", ""}}, Actor{}},
		{"batch", []opNote{{"write", long, ""}, {"edit", long, ""}}, Actor{}},
		{"move", []opNote{{"move", long, long}}, Actor{}},
	} {
		checkMeta(t, tc.op, tc.ops, tc.a)
	}
	// Every length up to past the cut.
	for n := 0; n < 260; n++ {
		checkMeta(t, "edit", []opNote{{"edit", strings.Repeat("é", n/2) + strings.Repeat("a", n%2), ""}}, Actor{})
	}
}

func FuzzMeta(f *testing.F) {
	f.Add("write", "a.md", "", "", "", "", "")
	f.Add("move", "a<b>", "c&d", "agent", "cred", "mcp:move_file", "edit x")
	f.Add("batch", strings.Repeat("é", 120), "", "\xff", "\u2028", "\x00\"\\", strings.Repeat("🎉", 60))
	f.Fuzz(func(t *testing.T, op, path, to, agent, cred, via, path2 string) {
		ops := []opNote{{op, path, to}}
		if path2 != "" {
			ops = append(ops, opNote{"edit", path2, ""})
		}
		checkMeta(t, op, ops, Actor{Agent: agent, Credential: cred, Via: via})
	})
}

func BenchmarkMeta(b *testing.B) {
	w := &Workspace{actor: Actor{Agent: "research", Credential: "tok_1", Via: "mcp:write_file"}}
	ops := []opNote{{"write", "notes/d05/f00005.md", ""}}
	b.Run("appendMeta", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = w.metaOps("write", ops)
		}
	})
	b.Run("json.Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = marshalMeta("write", strings.Join([]string{ops[0].op + " " + ops[0].path}, "; "), w.actor, "", false)
		}
	})
}
