package satchel_test

import (
	"context"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel"
)

// TestGCZeroGraceIsTheDefault: GC's zero grace is DefaultGrace, which
// keeps the storage of commits dropped a moment ago; NoGrace reclaims it.
func TestGCZeroGraceIsTheDefault(t *testing.T) {
	ctx := context.Background()
	st, err := satchel.Open(ctx, "memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ws, err := st.Workspace(ctx, "default", "main")
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("0123456789abcdef", 1<<12)
	for i := range 10 {
		if err := ws.Write(ctx, "big.txt", string(rune('a'+i))+big); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ws.SetRetention(ctx, satchel.Policy{MaxCommits: 1}); err != nil {
		t.Fatal(err)
	}
	if s, err := st.GC(ctx, "", 0); err != nil || s.PacksDeleted != 0 {
		t.Errorf("GC with grace 0 (the default, a minute): %+v, %v; want nothing reclaimed yet", s, err)
	}
	if s, err := st.GC(ctx, "", satchel.NoGrace); err != nil || s.PacksDeleted == 0 {
		t.Errorf("GC with NoGrace: %+v, %v; want the dropped commits' packs deleted", s, err)
	}
}
