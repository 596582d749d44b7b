package backendtest

import (
	"context"
	"errors"
	"testing"

	"github.com/satchel-dev/satchel/backend"
)

// checkThreadLocker checks backend.ThreadLocker, on a backend that has it:
// the head under the lock, one holder at a time, waits that end with their
// context, and nothing held after an error.
func checkThreadLocker(t *testing.T, b backend.Backend) {
	tl, ok := backend.As[backend.ThreadLocker](b)
	if !ok {
		t.Skip("no ThreadLocker")
	}
	ctx := t.Context()
	lock := func(what string, thread int64) (backend.Commit, bool, func()) {
		t.Helper()
		c, found, _, unlock, err := tl.LockThread(ctx, thread, 0)
		if err != nil {
			t.Fatalf("%s: LockThread: %v", what, err)
		}
		return c, found, unlock
	}

	t.Run("NoThread", func(t *testing.T) {
		_, _, _, unlock, err := tl.LockThread(ctx, 1<<40, 0)
		wantErr(t, "LockThread of an unknown thread", err, backend.ErrNoThread)
		if unlock != nil {
			t.Error("LockThread of an unknown thread returned an unlock")
		}
	})

	t.Run("HeadUnderLock", func(t *testing.T) {
		th := newThread(t, b, "s", "head")
		_, found, unlock := lock("empty thread", th.ID)
		unlock()
		if found {
			t.Error("LockThread of a thread without commits: found a head")
		}
		commits(t, b, th.ID, 3)
		want, _ := head(t, b, th.ID)
		c, found, unlock := lock("thread of 3 commits", th.ID)
		if !found {
			t.Error("LockThread: no head after 3 commits")
		}
		sameCommit(t, "head under the lock", c, want)
		// The holder appends; the lock changes nothing of that.
		mustAppend(t, b, nc(th.ID, 4))
		unlock()
		want, _ = head(t, b, th.ID)
		c, _, unlock = lock("again", th.ID)
		sameCommit(t, "head under the lock after an append", c, want)
		unlock()
	})

	t.Run("HeadPack", func(t *testing.T) {
		// The head's pack comes with the lock unless the head is the
		// one the caller knows.
		th := newThread(t, b, "s", "pack")
		cs := commits(t, b, th.ID, 2)
		want, err := b.Pack(ctx, cs[1].ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, known := range []int64{0, cs[0].ID} {
			c, _, pack, unlock, err := tl.LockThread(ctx, th.ID, known)
			if err != nil {
				t.Fatal(err)
			}
			unlock()
			sameCommit(t, "head under the lock", c, cs[1])
			if pack != want {
				t.Errorf("LockThread knowing commit %d: pack %q, want the head's %q", known, pack, want)
			}
		}
		_, _, pack, unlock, err := tl.LockThread(ctx, th.ID, cs[1].ID)
		if err != nil {
			t.Fatal(err)
		}
		unlock()
		if pack != "" {
			t.Errorf("LockThread knowing the head: pack %q, want none", pack)
		}
	})

	t.Run("OneHolder", func(t *testing.T) {
		// The second LockThread starts while the first holds the lock,
		// which appends commit 2 and then unlocks: the second's head
		// under the lock must be commit 2, which only a wait for the
		// unlock guarantees.
		th := newThread(t, b, "s", "one")
		commits(t, b, th.ID, 1)
		other := newThread(t, b, "s", "other")
		_, _, unlock := lock("first", th.ID)
		type got struct {
			c      backend.Commit
			unlock func()
			err    error
		}
		second := make(chan got, 1)
		go func() {
			c, _, _, unlock, err := tl.LockThread(ctx, th.ID, 0)
			second <- got{c, unlock, err}
		}()
		// Another thread's lock is not this one's.
		_, _, unlockOther := lock("another thread while the first is held", other.ID)
		unlockOther()
		want := mustAppend(t, b, nc(th.ID, 2))
		select {
		case g := <-second:
			if g.unlock != nil {
				g.unlock()
			}
			unlock()
			t.Fatalf("the second LockThread returned (head %s, error %v) while the first held the lock", fmtCommit(g.c), g.err)
		default:
		}
		unlock()
		g := <-second
		if g.err != nil {
			t.Fatalf("second LockThread: %v", g.err)
		}
		if g.c.Seq != want.Seq || g.c.ID != want.ID {
			t.Errorf("second holder's head: %s, want the first holder's commit %s", fmtCommit(g.c), fmtCommit(want))
		}
		g.unlock()
	})

	t.Run("AppendContended", func(t *testing.T) {
		// An entry appended while a LockThread holds the thread's lock
		// says so (AppendResult.Contended); without a holder it does not.
		th := newThread(t, b, "s", "contended")
		commits(t, b, th.ID, 1)
		appendOne := func(seq int64) backend.AppendResult {
			t.Helper()
			res, err := b.Append(ctx, []backend.NewCommit{nc(th.ID, seq)})
			if err != nil || res[0].Err != nil {
				t.Fatalf("Append seq %d: %v %v", seq, err, res[0].Err)
			}
			return res[0]
		}
		if appendOne(2).Contended {
			t.Error("an Append with no lock held says the thread is contended")
		}
		_, _, unlock := lock("holder", th.ID)
		if !appendOne(3).Contended {
			t.Error("an Append while another holds the thread's lock does not say the thread is contended")
		}
		unlock()
		if appendOne(4).Contended {
			t.Error("an Append after the unlock says the thread is contended")
		}
	})

	t.Run("CancelledWait", func(t *testing.T) {
		th := newThread(t, b, "s", "cancel")
		commits(t, b, th.ID, 1)
		_, _, unlock := lock("holder", th.ID)
		wctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			_, _, _, u, err := tl.LockThread(wctx, th.ID, 0)
			if err == nil {
				u()
			}
			done <- err
		}()
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("LockThread whose context was cancelled while another held the lock: %v, want context.Canceled", err)
		}
		unlock()
		// The cancelled wait holds nothing: the lock is free again.
		c, _, unlock := lock("after a cancelled wait", th.ID)
		if c.Seq != 1 {
			t.Errorf("head after a cancelled wait: %s", fmtCommit(c))
		}
		unlock()
	})
}
