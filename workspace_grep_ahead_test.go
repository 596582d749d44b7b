package satchel_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/memory"
	"github.com/satchel-dev/satchel/satcheltest"
)

// diskLike is a memory backend whose packs the engine reads and caches as
// it does a database's (its PartsAppender and PartsReader hidden), and
// which counts the calls that read packs.
type diskLike struct {
	backend.Backend // a *memory.Backend, its PartsAppender and PartsReader hidden
	calls           *atomic.Int64
}

// Unwrap lets backend.As find the memory backend's other capabilities.
func (b diskLike) Unwrap() backend.Backend { return b.Backend }

func (b diskLike) Pack(ctx context.Context, id int64) (string, error) {
	b.calls.Add(1)
	return b.Backend.Pack(ctx, id)
}

// manyAtOnce is diskLike that reads many packs in one call.
type manyAtOnce struct{ diskLike }

func (b manyAtOnce) Packs(ctx context.Context, ids []int64, maxBytes int64) (map[int64]string, []int64, error) {
	b.calls.Add(1)
	ids = slices.Clone(ids)
	slices.Sort(ids)
	packs := map[int64]string{}
	var rest []int64
	total := int64(0)
	for _, id := range slices.Compact(ids) {
		p, err := b.Backend.Pack(ctx, id)
		if errors.Is(err, backend.ErrNoPack) {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		if total += int64(len(p)); total > maxBytes && len(packs) > 0 {
			rest = append(rest, id)
			continue
		}
		packs[id] = p
	}
	return packs, rest, nil
}

// TestGrepReadAhead: grep over a store whose backend reads many packs at
// once finds exactly what it finds over the same backend without that
// capability (matches, truncation, binary files skipped, filters), with a
// cold cache each time, in far fewer calls to the backend.
func TestGrepReadAhead(t *testing.T) {
	ctx := context.Background()
	mem := memory.New()
	var calls atomic.Int64
	one := diskLike{Backend: satcheltest.Hide[backend.PartsReader](satcheltest.Hide[backend.PartsAppender](mem)), calls: &calls}
	many := manyAtOnce{one}
	if _, ok := backend.As[backend.PacksReader](one); ok {
		t.Fatal("the PacksReader is not hidden")
	}
	ws, err := satchel.New(one).Workspace(ctx, "acme", "main")
	if err != nil {
		t.Fatal(err)
	}
	// Files in commits of their own, some large (several chunks), some
	// binary, some rewritten.
	for i := range 400 {
		content := fmt.Sprintf("file %d\nTODO: item %d\nplain line\n", i, i%13)
		switch {
		case i%50 == 7:
			content = strings.Repeat(fmt.Sprintf("big %d TODO line\n", i), 30000)
		case i%61 == 3:
			content = "bin\x00ary TODO"
		}
		p := fmt.Sprintf("src/d%d/f%03d.txt", i%9, i)
		if i%5 == 0 {
			p = fmt.Sprintf("docs/f%03d.md", i)
		}
		if err := ws.Write(ctx, p, content); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 400; i += 17 {
		if err := ws.Write(ctx, fmt.Sprintf("src/d%d/f%03d.txt", i%9, i), "rewritten TODO\n"); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		regex, under string
		o            satchel.GrepOptions
	}{
		{"TODO", "", satchel.GrepOptions{}},
		{`item (3|11)$`, "", satchel.GrepOptions{}},
		{"TODO", "src", satchel.GrepOptions{}},
		{"TODO", "", satchel.GrepOptions{Include: "*.md"}},
		{"TODO", "src/d4", satchel.GrepOptions{Include: "f1*"}},
		{"TODO", "", satchel.GrepOptions{Limit: 37}},
		{"plain", "", satchel.GrepOptions{Accept: func(p string) bool { return strings.Contains(p, "d2") }}},
		{"nothing matches this", "", satchel.GrepOptions{}},
	}
	for _, c := range cases {
		name := fmt.Sprintf("%s in %q %+v", c.regex, c.under, c.o.Include)
		grep := func(b backend.Backend) (satchel.GrepResult, int64) {
			t.Helper()
			w, err := satchel.New(b).Workspace(ctx, "acme", "main")
			if err != nil {
				t.Fatal(err)
			}
			calls.Store(0)
			res, err := w.Grep(ctx, c.regex, c.under, c.o)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return res, calls.Load()
		}
		want, callsOne := grep(one)
		got, callsMany := grep(many)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: grep with PacksReader differs (-without +with):\n%s", name, diff)
		}
		t.Logf("%s: %d matches; %d calls to the backend without PacksReader, %d with", name, len(want.Matches), callsOne, callsMany)
		if callsOne >= 100 && callsMany*4 > callsOne {
			t.Errorf("%s: %d calls to the backend with PacksReader, %d without", name, callsMany, callsOne)
		}
	}
}
