package backendtest

import (
	"testing"

	"github.com/satchel-dev/satchel/backend"
)

// checkHeadPackReader checks backend.HeadPackReader, on a backend that has
// it: the head as Head returns it, with the head's pack unless the head is
// the commit known or its pack is empty.
func checkHeadPackReader(t *testing.T, b backend.Backend) {
	hp, ok := backend.As[backend.HeadPackReader](b)
	if !ok {
		t.Skip("no HeadPackReader")
	}
	ctx := t.Context()

	t.Run("NoThread", func(t *testing.T) {
		_, _, _, err := hp.HeadPack(ctx, 1<<40, 0)
		wantErr(t, "HeadPack of an unknown thread", err, backend.ErrNoThread)
	})

	t.Run("Empty", func(t *testing.T) {
		th := newThread(t, b, "s", "headpack-empty")
		_, found, pack, err := hp.HeadPack(ctx, th.ID, 0)
		if err != nil || found || pack != "" {
			t.Errorf("HeadPack of a thread without commits: found %v, pack %q, %v; want nothing", found, pack, err)
		}
	})

	t.Run("Pack", func(t *testing.T) {
		th := newThread(t, b, "s", "headpack")
		cs := commits(t, b, th.ID, 2)
		want, err := b.Pack(ctx, cs[1].ID)
		if err != nil {
			t.Fatal(err)
		}
		// Knowing nothing, or an older commit: the head's pack comes.
		for _, known := range []int64{0, cs[0].ID} {
			c, found, pack, err := hp.HeadPack(ctx, th.ID, known)
			if err != nil || !found {
				t.Fatalf("HeadPack knowing %d: found %v, %v", known, found, err)
			}
			sameCommit(t, "HeadPack's head", c, cs[1])
			if pack != want {
				t.Errorf("HeadPack knowing commit %d: pack %q, want the head's %q", known, pack, want)
			}
		}
		// Knowing the head: no pack.
		c, _, pack, err := hp.HeadPack(ctx, th.ID, cs[1].ID)
		if err != nil {
			t.Fatal(err)
		}
		sameCommit(t, "HeadPack's head knowing it", c, cs[1])
		if pack != "" {
			t.Errorf("HeadPack knowing the head: pack %q, want none", pack)
		}
		// A head whose pack is empty: no pack, whatever is known.
		e := nc(th.ID, 3)
		e.Pack = nil
		c3 := mustAppend(t, b, e)
		c, _, pack, err = hp.HeadPack(ctx, th.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		sameCommit(t, "HeadPack's head of an empty pack", c, c3)
		if pack != "" {
			t.Errorf("HeadPack of a head with an empty pack: pack %q, want none", pack)
		}
	})
}
