package satchel

import (
	"encoding/json"
	"testing"
	"time"
)

// FuzzArchivedMeta: a commit's metadata is an archive entry exactly when
// its op is "archive", whatever the op, summary and actor hold.
func FuzzArchivedMeta(f *testing.F) {
	f.Add("archive", "archive main", "", "cli:threads archive")
	f.Add("unarchive", "unarchive main", "bot", "")
	f.Add("archived", `"op":"archive"`, "", "")
	f.Add("write", `{"op":"archive"}`, `"op":"archive"`, "mcp:write_file")
	f.Add("arch\"ive", "", "", "")
	f.Fuzz(func(t *testing.T, op, sum, agent, via string) {
		m := appendMeta(nil, op, []byte(sum), Actor{Agent: agent, Via: via}, agent)
		if got, want := archivedMeta(m), op == opArchive; got != want {
			t.Errorf("archivedMeta(%s) = %v for op %q", m, got, op)
		}
	})
}

// FuzzDefaultFor: the default a thread takes is the newest one set at or
// before its creation, for any list of settings in order and any time.
func FuzzDefaultFor(f *testing.F) {
	f.Add([]byte(`[{"since":"2026-01-01T00:00:00Z","policy":{"max_commits":2}}]`), int64(0))
	f.Add([]byte(`[{"since":"2026-01-01T00:00:00Z","policy":{}},{"since":"2026-02-01T00:00:00Z","policy":{"max_commits":3}}]`), int64(40*24*3600))
	f.Add([]byte(`[]`), int64(-5))
	f.Add([]byte(`{`), int64(1))
	f.Fuzz(func(t *testing.T, stored []byte, offset int64) {
		var l []defaultPolicy
		if json.Unmarshal(stored, &l) != nil {
			return
		}
		at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(offset) * time.Second)
		got := defaultFor(l, at)
		want := Policy{}
		for _, d := range l {
			if !d.Since.After(at) {
				want = d.Policy // the list is in order: the last one at or before wins
			}
		}
		sorted := true
		for i := 1; i < len(l); i++ {
			sorted = sorted && !l[i].Since.Before(l[i-1].Since)
		}
		if sorted && got != want {
			t.Errorf("defaultFor(%s, %s) = %+v, want %+v", stored, at, got, want)
		}
	})
}
