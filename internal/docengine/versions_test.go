package docengine

import (
	"context"
	"testing"
	"time"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/memory"
)

// TestDocVersionRules: the rules of versions, history and expiry are
// decided above the backend, which only replaces what it is told to: a new
// key is version 1, a replacement the next version with the old one in
// the history (trimmed to the store's count), an expired document counts
// as absent (version 1 again, its history gone).
func TestDocVersionRules(t *testing.T) {
	ctx := context.Background()
	b := memory.New()
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	b.SetClock(func() time.Time { return now })
	id := backend.DocID{Store: "s", Scope: "a", Key: "k"}
	var hints versionHints
	set := func(v float64, ttl time.Duration) int64 {
		t.Helper()
		d, err := put(ctx, b, &hints, backend.DocReplace{DocID: id, Doc: map[string]any{"v": v}, TTL: ttl}, 2)
		if err != nil {
			t.Fatal(err)
		}
		return d.Version
	}
	history := func() []int64 {
		t.Helper()
		_, h, _, err := b.GetDoc(ctx, id, true)
		if err != nil {
			t.Fatal(err)
		}
		var vs []int64
		for _, d := range h {
			vs = append(vs, d.Version)
		}
		return vs
	}
	for i, want := range []int64{1, 2, 3, 4} {
		if got := set(float64(i), 0); got != want {
			t.Fatalf("set %d: version %d, want %d", i, got, want)
		}
	}
	if h := history(); len(h) != 2 || h[0] != 3 || h[1] != 2 {
		t.Fatalf("history %v, want [3 2]", h)
	}
	if got := set(5, time.Minute); got != 5 {
		t.Fatalf("version %d, want 5", got)
	}
	now = now.Add(time.Minute) // expired, exactly at its expiry
	d, _, ok, err := b.GetDoc(ctx, id, false)
	if err != nil || !ok || !d.Expired || visible(d, false) || !visible(d, true) {
		t.Fatalf("an expired document: %+v ok %v, %v", d, ok, err)
	}
	if got := set(6, 0); got != 1 {
		t.Fatalf("a set over an expired document: version %d, want 1", got)
	}
	if h := history(); len(h) != 0 {
		t.Fatalf("history %v after a set over an expired document, want none", h)
	}

	// Another process removes the key and sets it again, version 1 with
	// an expiry, which then passes: this process's hint (version 1) is
	// stale in a way the version alone does not show.
	if _, _, err := b.DeleteDoc(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := b.ReplaceDoc(ctx, backend.DocReplace{DocID: id, Doc: map[string]any{"v": 7.0}, Version: 1, TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Minute)
	if got := set(8, 0); got != 1 {
		t.Fatalf("a set over a document that expired behind a hint: version %d, want 1", got)
	}
	if h := history(); len(h) != 0 {
		t.Fatalf("history %v, want none", h)
	}
}

// TestReplacing decides a replacement from the current version.
func TestReplacing(t *testing.T) {
	for _, c := range []struct {
		cur             backend.Doc
		version, expect int64
		archive         bool
		keep            int
	}{
		{backend.Doc{}, 1, 0, false, 0},
		{backend.Doc{Version: 4}, 5, 4, true, 3},
		{backend.Doc{Version: 4, Expired: true}, 1, 4, false, 0},
	} {
		r := replacing(backend.DocReplace{}, c.cur, 3)
		if r.Version != c.version || r.Expect != c.expect || r.Archive != c.archive || r.Keep != c.keep {
			t.Errorf("over %+v: %+v", c.cur, r)
		}
	}
	if r := replacing(backend.DocReplace{}, backend.Doc{Version: 4}, 0); r.Archive || r.Keep != 0 || r.Version != 5 {
		t.Errorf("a store without history: %+v", r)
	}
}
