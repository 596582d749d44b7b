package backendtest

import (
	"testing"
	"time"

	"github.com/satchel-dev/satchel/backend"
)

// checkKeys: a key claimed by an append is refused to a second append
// (of another thread too), which stores nothing; its record names the
// commit; keys are per scope; an expired key can be claimed again.
func checkKeys(t *testing.T, b backend.Backend) {
	ks, ok := backend.As[backend.Keys](b)
	if !ok {
		t.Skip("the backend does not implement backend.Keys")
	}
	ctx := t.Context()
	a := newThread(t, b, "s", "a")
	o := newThread(t, b, "s", "o")
	other := newThread(t, b, "t", "a")
	claim := func(scope string) *backend.KeyClaim {
		return &backend.KeyClaim{Scope: scope, Key: "k", Hash: []byte("h"), Result: []byte("r"), TTL: time.Hour}
	}
	c := mustAppend(t, b, backend.NewCommit{Thread: a.ID, Seq: 1, Root: []byte("r"), Meta: []byte("m"), Key: claim("s")})
	res, err := b.Append(ctx, []backend.NewCommit{
		{Thread: o.ID, Seq: 1, Root: []byte("r"), Meta: []byte("m"), Key: claim("s")},
		{Thread: other.ID, Seq: 1, Root: []byte("r"), Meta: []byte("m"), Key: claim("t")},
	})
	if err != nil {
		t.Fatalf("Append: %v", err)
	}
	wantErr(t, "a second claim of a live key", res[0].Err, backend.ErrKeyUsed)
	if res[1].Err != nil {
		t.Errorf("the same key in another scope: %v", res[1].Err)
	}
	if _, ok, err := b.Head(ctx, o.ID); err != nil || ok {
		t.Errorf("the refused append stored a commit (%v, %v)", ok, err)
	}
	r, ok, err := ks.KeyRecord(ctx, "s", "k")
	if err != nil || !ok || r.Thread != a.ID || r.Seq != c.Seq || string(r.Hash) != "h" || string(r.Result) != "r" {
		t.Errorf("KeyRecord: %+v, %v, %v; want thread %d seq %d", r, ok, err, a.ID, c.Seq)
	}
	if _, ok, _ := ks.KeyRecord(ctx, "u", "k"); ok {
		t.Error("KeyRecord found a key in a scope that never claimed it")
	}
	wantErr(t, "ClaimKey of a live key", ks.ClaimKey(ctx, *claim("s"), 0, 0), backend.ErrKeyUsed)
	short := backend.KeyClaim{Scope: "s", Key: "short", Hash: []byte("h"), TTL: time.Microsecond}
	if err := ks.ClaimKey(ctx, short, 0, 1); err != nil {
		t.Fatalf("ClaimKey: %v", err)
	}
	// Wait (for a condition, not a time) until the backend's clock has
	// passed the short key's expiry.
	for _, ok, _ := ks.KeyRecord(ctx, "s", "short"); ok; _, ok, _ = ks.KeyRecord(ctx, "s", "short") {
	}
	if err := ks.ClaimKey(ctx, short, 0, 2); err != nil {
		t.Errorf("ClaimKey of an expired key: %v", err)
	}
}
