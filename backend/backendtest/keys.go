package backendtest

import (
	"testing"
	"time"

	"github.com/satchel-dev/satchel/backend"
)

// checkKeys: a key claimed by an append is refused to a second append
// (of another commit thread too) from the same caller's thread, which
// stores nothing; its record names the commit; keys are per scope and per
// caller's thread (a key claimed on one thread does not exist for
// another); an expired key can be claimed again.
func checkKeys(t *testing.T, b backend.Backend) {
	ks, ok := backend.As[backend.Keys](b)
	if !ok {
		t.Skip("the backend does not implement backend.Keys")
	}
	ctx := t.Context()
	a := newThread(t, b, "s", "a")
	o := newThread(t, b, "s", "o")
	p := newThread(t, b, "s", "p")
	other := newThread(t, b, "t", "a")
	claim := func(scope, thread string) *backend.KeyClaim {
		return &backend.KeyClaim{Scope: scope, Thread: thread, Key: "k", Hash: []byte("h"), Result: []byte("r"), TTL: time.Hour}
	}
	c := mustAppend(t, b, backend.NewCommit{Thread: a.ID, Seq: 1, Root: []byte("r"), Meta: []byte("m"), Key: claim("s", "a")})
	res, err := b.Append(ctx, []backend.NewCommit{
		{Thread: o.ID, Seq: 1, Root: []byte("r"), Meta: []byte("m"), Key: claim("s", "a")},
		{Thread: other.ID, Seq: 1, Root: []byte("r"), Meta: []byte("m"), Key: claim("t", "a")},
		{Thread: p.ID, Seq: 1, Root: []byte("r"), Meta: []byte("m"), Key: claim("s", "p")},
	})
	if err != nil {
		t.Fatalf("Append: %v", err)
	}
	wantErr(t, "a second claim of a live key", res[0].Err, backend.ErrKeyUsed)
	if res[1].Err != nil {
		t.Errorf("the same key in another scope: %v", res[1].Err)
	}
	if res[2].Err != nil {
		t.Errorf("the same key on another thread of the scope: %v", res[2].Err)
	}
	if _, ok, err := b.Head(ctx, o.ID); err != nil || ok {
		t.Errorf("the refused append stored a commit (%v, %v)", ok, err)
	}
	r, ok, err := ks.KeyRecord(ctx, "s", "a", "k")
	if err != nil || !ok || r.Thread != a.ID || r.Seq != c.Seq || string(r.Hash) != "h" || string(r.Result) != "r" {
		t.Errorf("KeyRecord: %+v, %v, %v; want thread %d seq %d", r, ok, err, a.ID, c.Seq)
	}
	if r, ok, err := ks.KeyRecord(ctx, "s", "p", "k"); err != nil || !ok || r.Thread != p.ID {
		t.Errorf("KeyRecord of the key claimed on thread p: %+v, %v, %v; want thread %d", r, ok, err, p.ID)
	}
	if _, ok, _ := ks.KeyRecord(ctx, "u", "a", "k"); ok {
		t.Error("KeyRecord found a key in a scope that never claimed it")
	}
	for _, th := range []string{"", "main", "o"} {
		if _, ok, _ := ks.KeyRecord(ctx, "s", th, "k"); ok {
			t.Errorf("KeyRecord found a key on thread %q, which never claimed it", th)
		}
	}
	wantErr(t, "ClaimKey of a live key", ks.ClaimKey(ctx, *claim("s", "a"), 0, 0), backend.ErrKeyUsed)
	if err := ks.ClaimKey(ctx, *claim("s", "main"), 0, 0); err != nil {
		t.Errorf("ClaimKey of the key on another thread: %v", err)
	}
	// A document change claims its key in its thread too.
	if _, ok := b.(backend.Documents); ok {
		_, _, err := ks.DeleteDocAs(ctx, backend.DocID{Store: "st", Scope: "s", Key: "d"}, backend.DocChange{Op: "remove", Scope: "s", Meta: []byte("{}"), Key: claim("s", "docs")})
		if err != nil {
			t.Errorf("DeleteDocAs claiming the key on thread docs: %v", err)
		}
		_, _, err = ks.DeleteDocAs(ctx, backend.DocID{Store: "st", Scope: "s", Key: "d"}, backend.DocChange{Op: "remove", Scope: "s", Meta: []byte("{}"), Key: claim("s", "docs")})
		wantErr(t, "DeleteDocAs claiming a live key", err, backend.ErrKeyUsed)
	}
	short := backend.KeyClaim{Scope: "s", Key: "short", Hash: []byte("h"), TTL: time.Microsecond}
	if err := ks.ClaimKey(ctx, short, 0, 1); err != nil {
		t.Fatalf("ClaimKey: %v", err)
	}
	// Wait (for a condition, not a time) until the backend's clock has
	// passed the short key's expiry.
	for _, ok, _ := ks.KeyRecord(ctx, "s", "", "short"); ok; _, ok, _ = ks.KeyRecord(ctx, "s", "", "short") {
	}
	if err := ks.ClaimKey(ctx, short, 0, 2); err != nil {
		t.Errorf("ClaimKey of an expired key: %v", err)
	}
}
