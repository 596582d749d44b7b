package backendtest

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/satchel-dev/satchel/backend"
)

// checkGitMapper checks backend.GitMapper, on a backend that has it: the
// entries by Seq and by Hash, the newest one, an entry replaced, tree
// objects kept once stored, and the map gone with its thread (deleted, or
// its scope purged), a thread made anew under its name starting with none.
func checkGitMapper(t *testing.T, b backend.Backend) {
	gm, ok := backend.As[backend.GitMapper](b)
	if !ok {
		t.Skip("no GitMapper")
	}
	ctx := t.Context()
	hex := func(i int) string { return fmt.Sprintf("%040x", i) }
	entry := func(seq int64) backend.GitCommit {
		return backend.GitCommit{Seq: seq, Root: 1, Hash: hex(int(seq)), Tree: hex(1000 + int(seq))}
	}

	th := newThread(t, b, "s", "gitmap")
	other := newThread(t, b, "s", "gitmap-other")
	if _, ok, err := gm.GitLast(ctx, th.ID); err != nil || ok {
		t.Fatalf("GitLast of a thread without a map: ok %v, %v; want none", ok, err)
	}
	trees := []backend.GitTree{{Hash: hex(1), Object: []byte("tree one")}, {Hash: hex(2), Object: []byte{}}}
	if err := gm.PutGitMap(ctx, th.ID, []backend.GitCommit{entry(1), entry(3), entry(2)}, trees); err != nil {
		t.Fatal(err)
	}
	if err := gm.PutGitMap(ctx, other.ID, []backend.GitCommit{entry(7)}, nil); err != nil {
		t.Fatal(err)
	}
	last, ok, err := gm.GitLast(ctx, th.ID)
	if err != nil || !ok || last != entry(3) {
		t.Errorf("GitLast: %+v, %v, %v; want %+v", last, ok, err, entry(3))
	}
	got, err := gm.GitCommits(ctx, th.ID, []int64{1, 9}, []string{hex(3), hex(7)})
	if err != nil {
		t.Fatal(err)
	}
	if want := []backend.GitCommit{entry(1), entry(3)}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("GitCommits by seq 1, 9 or hash of 3, 7: %+v; want %+v (in seq order, this thread's only)", got, want)
	}
	if got, err := gm.GitCommits(ctx, th.ID, nil, nil); err != nil || len(got) != 0 {
		t.Errorf("GitCommits of nothing: %+v, %v", got, err)
	}
	// An entry replaced; a tree stored again keeps its object.
	re := entry(3)
	re.Root, re.Hash = 2, hex(33)
	if err := gm.PutGitMap(ctx, th.ID, []backend.GitCommit{re}, []backend.GitTree{{Hash: hex(1), Object: []byte("other")}}); err != nil {
		t.Fatal(err)
	}
	if got, err := gm.GitCommits(ctx, th.ID, []int64{3}, nil); err != nil || len(got) != 1 || got[0] != re {
		t.Errorf("GitCommits after a replace: %+v, %v; want %+v", got, err, re)
	}
	ts, err := gm.GitTrees(ctx, th.ID, []string{hex(1), hex(2), hex(3)})
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 2 || !bytes.Equal(ts[hex(1)], []byte("tree one")) || ts[hex(2)] == nil && len(ts[hex(2)]) != 0 {
		t.Errorf("GitTrees: %q; want tree one and an empty tree", ts)
	}
	if _, ok := ts[hex(2)]; !ok {
		t.Errorf("GitTrees: the empty tree is missing")
	}
	if ts, err := gm.GitTrees(ctx, other.ID, []string{hex(1)}); err != nil || len(ts) != 0 {
		t.Errorf("GitTrees of another thread: %q, %v; want none", ts, err)
	}

	// Deleted with the thread; a thread of the same name starts empty.
	if err := b.DeleteThread(ctx, th.ID); err != nil {
		t.Fatal(err)
	}
	if err := gm.PutGitMap(ctx, th.ID, []backend.GitCommit{entry(4)}, trees); err != nil {
		t.Errorf("PutGitMap of a deleted thread: %v; want nothing stored, no error", err)
	}
	again := newThread(t, b, "s", "gitmap")
	for _, id := range []int64{th.ID, again.ID} {
		if _, ok, err := gm.GitLast(ctx, id); err != nil || ok {
			t.Errorf("GitLast of thread %d after the delete: ok %v, %v; want none", id, ok, err)
		}
		if ts, err := gm.GitTrees(ctx, id, []string{hex(1)}); err != nil || len(ts) != 0 {
			t.Errorf("GitTrees of thread %d after the delete: %q, %v; want none", id, ts, err)
		}
	}
	// Purged with the scope.
	if err := b.PurgeScope(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := gm.GitLast(ctx, other.ID); err != nil || ok {
		t.Errorf("GitLast after the scope's purge: ok %v, %v; want none", ok, err)
	}
}
