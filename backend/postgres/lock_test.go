package postgres_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/postgres"
)

// TestLockLostConnection: a hold whose connection the server dropped
// (with its lock) unlocks without waiting for anything, and the thread's
// lock can be taken again.
func TestLockLostConnection(t *testing.T) {
	ctx := t.Context()
	b := openDocs(t)
	th, err := b.CreateThread(ctx, "s", "t")
	if err != nil {
		t.Fatal(err)
	}
	_, _, _, unlock, err := b.LockThread(ctx, th.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	n, err := b.KillLockHolder(ctx, th.ID)
	if err != nil || n != 1 {
		t.Fatalf("terminating the lock's session: %d sessions, %v", n, err)
	}
	unlock()
	for i := range postgres.LockConns + 1 { // every lock connection again
		_, _, _, unlock, err := b.LockThread(ctx, th.ID, 0)
		if err != nil {
			t.Fatalf("LockThread %d after a lost connection: %v", i, err)
		}
		unlock()
	}
}

// TestLockBusy: with every lock connection holding a lock, LockThread
// refuses at once (ErrLockBusy) instead of waiting for a connection; an
// unlock frees one.
func TestLockBusy(t *testing.T) {
	ctx := t.Context()
	b := openDocs(t)
	var unlocks []func()
	for i := range postgres.LockConns + 1 {
		th, err := b.CreateThread(ctx, "s", fmt.Sprintf("t%d", i))
		if err != nil {
			t.Fatal(err)
		}
		_, _, _, unlock, err := b.LockThread(ctx, th.ID, 0)
		if i < postgres.LockConns {
			if err != nil {
				t.Fatalf("lock %d: %v", i, err)
			}
			unlocks = append(unlocks, unlock)
			continue
		}
		if !errors.Is(err, backend.ErrLockBusy) {
			t.Errorf("lock %d with %d held: %v, want ErrLockBusy", i, postgres.LockConns, err)
			if err == nil {
				unlock()
			}
		}
		unlocks[0]()
		if _, _, _, unlock, err = b.LockThread(ctx, th.ID, 0); err != nil {
			t.Errorf("lock after an unlock: %v", err)
		} else {
			unlock()
		}
	}
	for _, u := range unlocks[1:] {
		u()
	}
}
