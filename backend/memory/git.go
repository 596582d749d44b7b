package memory

import (
	"context"
	"slices"

	"github.com/satchel-dev/satchel/backend"
)

// gitMap is a thread's git map (backend.GitMapper).
type gitMap struct {
	commits map[int64]backend.GitCommit
	trees   map[string][]byte
}

var _ backend.GitMapper = (*Backend)(nil)

// PutGitMap implements backend.GitMapper.
func (b *Backend) PutGitMap(ctx context.Context, thread int64, commits []backend.GitCommit, trees []backend.GitTree) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	t, ok := b.threads[thread]
	if !ok {
		return nil
	}
	if t.git.commits == nil {
		t.git.commits = map[int64]backend.GitCommit{}
		t.git.trees = map[string][]byte{}
	}
	for _, c := range commits {
		t.git.commits[c.Seq] = c
	}
	for _, tr := range trees {
		if _, ok := t.git.trees[tr.Hash]; !ok {
			t.git.trees[tr.Hash] = slices.Clone(tr.Object)
		}
	}
	return nil
}

// GitLast implements backend.GitMapper.
func (b *Backend) GitLast(ctx context.Context, thread int64) (backend.GitCommit, bool, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	var last backend.GitCommit
	found := false
	if t, ok := b.threads[thread]; ok {
		for _, c := range t.git.commits {
			if !found || c.Seq > last.Seq {
				last, found = c, true
			}
		}
	}
	return last, found, nil
}

// GitCommits implements backend.GitMapper.
func (b *Backend) GitCommits(ctx context.Context, thread int64, seqs []int64, hashes []string) ([]backend.GitCommit, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	out := []backend.GitCommit{}
	t, ok := b.threads[thread]
	if !ok {
		return out, nil
	}
	for _, c := range t.git.commits {
		if slices.Contains(seqs, c.Seq) || slices.Contains(hashes, c.Hash) {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b backend.GitCommit) int { return int(a.Seq - b.Seq) })
	return out, nil
}

// GitTrees implements backend.GitMapper.
func (b *Backend) GitTrees(ctx context.Context, thread int64, hashes []string) (map[string][]byte, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	out := map[string][]byte{}
	if t, ok := b.threads[thread]; ok {
		for _, h := range hashes {
			if o, ok := t.git.trees[h]; ok {
				out[h] = slices.Clone(o)
			}
		}
	}
	return out, nil
}
