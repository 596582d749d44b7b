package engine

import (
	"context"
	"fmt"
	"testing"
)

// cachedNode reports whether the node cache holds the node at r.
func cachedNode(e *Engine, r Ref) bool {
	key, _ := nodeKey(r)
	e.nodes.mu.Lock()
	defer e.nodes.mu.Unlock()
	_, ok := e.nodes.m[key]
	return ok
}

// TestStoredDropsReplacedNodes: a commit's new nodes enter the node cache
// and the nodes of the base tree it rewrote leave it (they are read again
// from their pack when an older commit is read), unless keepReplaced
// (the baseline) keeps them; reading the old commit still gives its
// files.
func TestStoredDropsReplacedNodes(t *testing.T) {
	ctx := context.Background()
	for _, keep := range []bool{false, true} {
		t.Run(fmt.Sprintf("keepReplaced=%v", keep), func(t *testing.T) {
			e, th := newThread(t)
			e.keepReplaced = keep
			files := map[string]string{}
			for i := range 200 { // several leaves and an internal root
				files[fmt.Sprintf("d/f%03d", i)] = fmt.Sprintf("file %d\n", i)
			}
			put(t, e, th, files)
			old, _, _, err := e.Head(ctx, th)
			if err != nil {
				t.Fatal(err)
			}
			if !cachedNode(e, old.Root()) {
				t.Fatal("the first commit's root is not cached")
			}
			put(t, e, th, map[string]string{"d/f100": "changed\n"})
			head, _, _, err := e.Head(ctx, th)
			if err != nil {
				t.Fatal(err)
			}
			if !cachedNode(e, head.Root()) {
				t.Error("the new root is not cached")
			}
			if got := cachedNode(e, old.Root()); got != keep {
				t.Errorf("the replaced root cached: %v, want %v", got, keep)
			}
			ent, ok, err := old.Get(ctx, "d/f100")
			if err != nil || !ok {
				t.Fatalf("d/f100 at the old commit: %v, %v", ok, err)
			}
			if c, err := old.Content(ctx, &ent); err != nil || c != "file 100\n" {
				t.Errorf("d/f100 at the old commit = %q (%v), want its first content", c, err)
			}
		})
	}
}
