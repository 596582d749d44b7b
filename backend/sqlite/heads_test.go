package sqlite

import (
	"errors"
	"testing"

	"github.com/satchel-dev/satchel/backend"
)

// TestHeadCacheSeesOtherWriters: the heads an Append remembers are not
// trusted once another connection (another process) has committed, nor
// after another write of the same backend (a deleted thread).
func TestHeadCacheSeesOtherWriters(t *testing.T) {
	ctx := t.Context()
	a := openTest(t, options{})
	defer a.Close()
	b, err := Open(ctx, a.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	th, err := a.CreateThread(ctx, "s", "t")
	if err != nil {
		t.Fatal(err)
	}
	appendOne := func(be *Backend, seq int64) error {
		res, err := be.Append(ctx, []backend.NewCommit{{Thread: th.ID, Seq: seq, Root: []byte{byte(seq)}}})
		if err != nil {
			return err
		}
		return res[0].Err
	}
	if err := appendOne(a, 1); err != nil {
		t.Fatal(err)
	}
	if err := appendOne(b, 2); err != nil {
		t.Fatal(err)
	}
	// a remembers seq 1 as the head; b moved it to 2.
	if err := appendOne(a, 2); !errors.Is(err, backend.ErrStale) {
		t.Fatalf("a's append at seq 2 after b's: %v, want ErrStale", err)
	}
	if err := appendOne(a, 3); err != nil {
		t.Fatalf("a's append at seq 3: %v", err)
	}
	if err := a.DeleteThread(ctx, th.ID); err != nil {
		t.Fatal(err)
	}
	if err := appendOne(a, 4); !errors.Is(err, backend.ErrNoThread) {
		t.Fatalf("append to a deleted thread: %v, want ErrNoThread", err)
	}
}
