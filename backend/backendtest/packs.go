package backendtest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel/backend"
)

// checkPacksReader checks backend.PacksReader, on a backend that has it:
// every pack read once whatever the order and repetition of the IDs asked
// for, missing and collected packs in neither result, and the bound on
// bytes read at once, which always lets a caller make progress.
func checkPacksReader(t *testing.T, b backend.Backend) {
	pr, ok := backend.As[backend.PacksReader](b)
	if !ok {
		t.Skip("no PacksReader")
	}
	ctx := t.Context()
	th := newThread(t, b, "s", "packs")
	// Packs of several sizes, one of them empty, and a big one.
	sizes := []int{100, 0, 3000, 10, 2 << 20, 700, 1}
	want := map[int64]string{}
	var ids []int64
	for i, n := range sizes {
		p := strings.Repeat(fmt.Sprintf("%c", 'a'+i), n)
		c := mustAppend(t, b, backend.NewCommit{Thread: th.ID, Seq: int64(i + 1), Root: []byte("r"), Meta: []byte("{}"), Pack: []byte(p)})
		want[c.ID] = p
		ids = append(ids, c.ID)
	}
	// A dropped pack is still read until it is collected; a collected one
	// is missing.
	other := newThread(t, b, "s", "dropped")
	dropped := commits(t, b, other.ID, 3)
	drop(t, b, other.ID, 1, 2)
	if err := b.DeletePacks(ctx, []int64{dropped[0].ID}); err != nil {
		t.Fatalf("DeletePacks: %v", err)
	}
	want[dropped[1].ID] = pack(t, b, dropped[1].ID)
	ids = append(ids, dropped[1].ID)
	missing := []int64{dropped[0].ID, 1 << 40, -1}

	const all = 1 << 40 // a bound no call reaches
	read := func(what string, ask []int64, maxBytes int64) (map[int64]string, []int64) {
		t.Helper()
		asked := slices.Clone(ask)
		got, rest, err := pr.Packs(ctx, ask, maxBytes)
		if err != nil {
			t.Fatalf("%s: Packs: %v", what, err)
		}
		if !slices.Equal(ask, asked) {
			t.Errorf("%s: Packs changed the IDs it was given", what)
		}
		for id := range got {
			if !slices.Contains(ask, id) {
				t.Errorf("%s: Packs returned pack %d, which was not asked for", what, id)
			}
		}
		seen := map[int64]bool{}
		for _, id := range rest {
			switch {
			case seen[id]:
				t.Errorf("%s: rest names %d twice", what, id)
			case !slices.Contains(ask, id):
				t.Errorf("%s: rest names %d, which was not asked for", what, id)
			case slices.Contains(missing, id):
				t.Errorf("%s: rest names %d, which has no pack", what, id)
			}
			if _, ok := got[id]; ok {
				t.Errorf("%s: pack %d is both read and in rest", what, id)
			}
			seen[id] = true
		}
		return got, rest
	}
	same := func(what string, got, want map[int64]string) {
		t.Helper()
		if maps.Equal(got, want) {
			return
		}
		for id, w := range want {
			if g, ok := got[id]; !ok {
				t.Errorf("%s: pack %d not read", what, id)
			} else if g != w {
				t.Errorf("%s: pack %d read as %d bytes, want %d", what, id, len(g), len(w))
			}
		}
		for id := range got {
			if _, ok := want[id]; !ok {
				t.Errorf("%s: pack %d read, which has no pack", what, id)
			}
		}
	}

	t.Run("Each", func(t *testing.T) {
		got, rest := read("all at once", ids, all)
		same("all at once", got, want)
		if len(rest) != 0 {
			t.Errorf("all at once: rest = %v under a bound no call reaches", rest)
		}
	})

	t.Run("MissingAndCollected", func(t *testing.T) {
		ask := append(slices.Clone(missing), ids[0])
		got, rest := read("missing", ask, all)
		same("missing", got, map[int64]string{ids[0]: want[ids[0]]})
		if len(rest) != 0 {
			t.Errorf("missing: rest = %v", rest)
		}
		got, rest = read("only missing", missing, all)
		if len(got) != 0 || len(rest) != 0 {
			t.Errorf("only missing: read %d packs, rest %v; want none", len(got), rest)
		}
		got, rest = read("none", nil, all)
		if len(got) != 0 || len(rest) != 0 {
			t.Errorf("none asked: read %d packs, rest %v", len(got), rest)
		}
	})

	t.Run("Duplicates", func(t *testing.T) {
		ask := append(append(slices.Clone(ids), ids...), ids[2], ids[2], missing[1], missing[1])
		got, rest := read("duplicates", ask, all)
		same("duplicates", got, want)
		if len(rest) != 0 {
			t.Errorf("duplicates: rest = %v", rest)
		}
	})

	t.Run("OrderIndependent", func(t *testing.T) {
		rev := slices.Clone(ids)
		slices.Reverse(rev)
		got, _ := read("reversed", rev, all)
		same("reversed", got, want)
		mixed := []int64{ids[3], missing[1], ids[0], ids[6], ids[1], ids[5], ids[2], ids[7], ids[4]}
		got, _ = read("shuffled", mixed, all)
		same("shuffled", got, want)
	})

	t.Run("Bound", func(t *testing.T) {
		for _, maxBytes := range []int64{1, 1000, 1 << 20} {
			what := fmt.Sprintf("maxBytes %d", maxBytes)
			ask := append(slices.Clone(ids), missing...)
			acc := map[int64]string{}
			for calls := 0; len(ask) > 0; calls++ {
				if calls > len(ids) {
					t.Fatalf("%s: no end after %d calls (rest %v)", what, calls, ask)
				}
				got, rest := read(what, ask, maxBytes)
				if len(got) == 0 {
					t.Fatalf("%s: a call asking for %v read nothing", what, ask)
				}
				total := int64(0)
				for id, p := range got {
					total += int64(len(p))
					if _, ok := acc[id]; ok {
						t.Errorf("%s: pack %d read twice", what, id)
					}
					acc[id] = p
				}
				if total > maxBytes && len(got) > 1 {
					t.Errorf("%s: one call read %d packs of %d bytes in all", what, len(got), total)
				}
				ask = rest
			}
			same(what, acc, want)
		}
	})
}
