package satchel_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel"
)

// TestBlameRandom: random inserts, deletes and replacements of lines,
// each new line naming the commit that writes it; every line's blame must
// be that commit, for whole files and for ranges, through a fork.
func TestBlameRandom(t *testing.T) {
	ctx := context.Background()
	for seed := uint64(1); seed <= 5; seed++ {
		st, err := satchel.Open(ctx, "memory:")
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(seed, 1))
		ws, _ := st.Workspace(ctx, "s", "main")
		var lines []string
		n := 0
		commit := func(ws *satchel.Workspace) {
			h, _ := ws.Head(ctx)
			next := h.Seq + 1
			n++
			for i := 0; i < 1+r.IntN(4); i++ {
				switch k := r.IntN(3); {
				case k == 0 || len(lines) == 0: // insert
					at := r.IntN(len(lines) + 1)
					lines = append(lines[:at], append([]string{fmt.Sprintf("%s@%d #%d", ws.Thread(), next, n*10+i)}, lines[at:]...)...)
				case k == 1: // delete
					at := r.IntN(len(lines))
					lines = append(lines[:at], lines[at+1:]...)
				default: // replace
					lines[r.IntN(len(lines))] = fmt.Sprintf("%s@%d #%d", ws.Thread(), next, n*10+i)
				}
			}
			// Every line ends with "\n": a last line that gains one is a
			// changed line, as in a diff.
			content := strings.Join(lines, "\n")
			if len(lines) > 0 {
				content += "\n"
			}
			if err := ws.Write(ctx, "f.txt", content); err != nil {
				t.Fatal(err)
			}
		}
		for i := 0; i < 25; i++ {
			commit(ws)
		}
		fork, err := ws.Fork(ctx, "head", "fork")
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 15; i++ {
			commit(fork)
		}
		check := func(bounds ...int) {
			t.Helper()
			got, err := fork.Blame(ctx, "f.txt", "", bounds...)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range got {
				want := l.Text[:strings.IndexByte(l.Text, ' ')]
				if have := l.Thread + "@" + strconv.FormatInt(l.Commit.Seq, 10); have != want || l.Before {
					t.Fatalf("seed %d, bounds %v: line %d %q blamed on %s (before %v)", seed, bounds, l.Line, l.Text, have, l.Before)
				}
			}
		}
		check()
		if len(lines) > 3 {
			check(2, len(lines)-1)
			check(len(lines))
		}
		st.Close()
	}
}
