package satchel_test

import (
	"context"
	"errors"
	"testing"

	"github.com/satchel-dev/satchel"
)

// TestSharedState: shared records are written, read, listed by prefix and
// deleted; a key that is empty, too long or not printable is refused.
func TestSharedState(t *testing.T) {
	ctx := context.Background()
	st, err := satchel.Open(ctx, "memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, ok, err := st.SharedState(ctx, "k:a"); ok || err != nil {
		t.Fatalf("an unset record: %v %v", ok, err)
	}
	if err := st.PutSharedState(ctx, "k:first", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if empty, err := st.Empty(ctx); !empty || err != nil {
		t.Errorf("a database with shared state only is not empty: %v", err)
	}
	for k, v := range map[string]string{"k:a": `{"a":1}`, "k:b": `{"b":2}`, "other": `{}`} {
		if err := st.PutSharedState(ctx, k, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	if v, ok, err := st.SharedState(ctx, "k:a"); !ok || err != nil || string(v) != `{"a":1}` {
		t.Errorf("k:a = %q %v %v", v, ok, err)
	}
	m, err := st.SharedStates(ctx, "k:")
	if err != nil || len(m) != 3 || string(m["k:b"]) != `{"b":2}` {
		t.Errorf("k: = %q, %v", m, err)
	}
	if err := st.PutSharedState(ctx, "k:a", nil); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := st.SharedState(ctx, "k:a"); ok {
		t.Error("k:a is still there after its delete")
	}
	// Shared records are not tokens.
	if ts, err := st.Tokens(ctx); err != nil || len(ts) != 0 {
		t.Errorf("tokens: %v, %v", ts, err)
	}
	for _, bad := range []string{"", "a b", "é", string(make([]byte, 201))} {
		if err := st.PutSharedState(ctx, bad, []byte("{}")); !errors.Is(err, satchel.ErrInvalidArgument) {
			t.Errorf("key %q: %v", bad, err)
		}
	}
}
