package satchel

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/internal/engine"
)

// What git access (package gitrepo) needs of the Go API: every file of a
// snapshot with its content, a batch that commits only on the head it was
// given, and the git commit a pushed or imported commit came from.

// GitOrigin is what a commit that came from git (a push, or satchel git
// import) keeps of its git commit, so that it is served as the same git
// commit, with the same hash.
type GitOrigin struct {
	// Hash is the git commit's hash, in hex.
	Hash string `json:"hash"`
	// Author is the git commit's author, "Name <email>".
	Author string `json:"author,omitempty"`
	// Object is the git commit object's text after its tree and parent
	// lines: the author, committer and any other header, a blank line,
	// the message.
	Object string `json:"object"`
}

// Walk calls fn for every file of the snapshot, in path order, with its
// content, until fn returns an error (which Walk returns).
func (s *Snapshot) Walk(ctx context.Context, fn func(path, content string) error) error {
	var ferr error
	err := s.snap.ScanFiles(ctx, "", "", nil, func(e *engine.Entry) (bool, error) {
		c, err := s.snap.Content(ctx, e)
		if err != nil {
			return false, err
		}
		if ferr = fn(e.Path, c); ferr != nil {
			return false, nil
		}
		return true, ctx.Err()
	})
	if err != nil {
		return err
	}
	return ferr
}

// Base returns the sequence number of the head the batch builds on (0 on
// an empty thread). A batch that must land right after a given commit (a
// compare-and-swap of the head, as a git push does) returns an error from
// its function when Base is not that commit: nothing is committed.
func (b *Batch) Base() int64 { return b.tx.BaseSeq() }

// SetGit records, in the commit the batch makes, the git commit it came
// from, and makes summary the commit's summary (a git commit's subject).
func (b *Batch) SetGit(g GitOrigin, summary string) {
	b.git, b.gitSummary = &g, summary
}

// gitMeta is the batch's metadata with its git origin (SetGit).
func (b *Batch) gitMeta(op string) []byte {
	m := commitMeta{Op: op, Summary: b.gitSummary, Actor: b.w.actor, Key: b.w.key, Git: b.git}
	out, _ := json.Marshal(m)
	return out
}

// GitMapEntry is one entry of a thread's stored git map: the git commit
// satchel commit Seq maps to (hashes in hex), and Root, the thread's
// oldest retained commit when it was mapped (backend.GitCommit).
type GitMapEntry struct {
	Seq, Root  int64
	Hash, Tree string
}

// HasGitMap reports whether the store's backend keeps git maps
// (backend.GitMapper); without it the methods below find nothing and
// store nothing.
func (s *Store) HasGitMap() bool {
	_, ok := backend.As[backend.GitMapper](s.b)
	return ok
}

// gitMapper returns the backend's git map and the thread's ID; ok is
// false without the capability or the thread.
func (w *Workspace) gitMapper(ctx context.Context) (backend.GitMapper, int64, bool, error) {
	gm, ok := backend.As[backend.GitMapper](w.s.b)
	if !ok {
		return nil, 0, false, nil
	}
	id, ok, err := w.threadID(ctx, false)
	return gm, id, ok && err == nil, err
}

// GitMapLast returns the stored entry of the thread's newest mapped
// commit; ok is false when there is none.
func (w *Workspace) GitMapLast(ctx context.Context) (GitMapEntry, bool, error) {
	gm, id, ok, err := w.gitMapper(ctx)
	if !ok {
		return GitMapEntry{}, false, err
	}
	c, ok, err := gm.GitLast(ctx, id)
	return GitMapEntry(c), ok, err
}

// GitMapEntries returns the stored entries of the thread whose Seq is
// one of seqs or whose Hash is one of hashes, in Seq order.
func (w *Workspace) GitMapEntries(ctx context.Context, seqs []int64, hashes []string) ([]GitMapEntry, error) {
	gm, id, ok, err := w.gitMapper(ctx)
	if !ok {
		return nil, err
	}
	cs, err := gm.GitCommits(ctx, id, seqs, hashes)
	out := make([]GitMapEntry, len(cs))
	for i, c := range cs {
		out[i] = GitMapEntry(c)
	}
	return out, err
}

// GitTrees returns the stored git tree objects of the thread among
// hashes, by hash.
func (w *Workspace) GitTrees(ctx context.Context, hashes []string) (map[string][]byte, error) {
	gm, id, ok, err := w.gitMapper(ctx)
	if !ok {
		return map[string][]byte{}, err
	}
	return gm.GitTrees(ctx, id, hashes)
}

// PutGitMap stores entries of the thread's git map and tree objects (by
// hash).
func (w *Workspace) PutGitMap(ctx context.Context, entries []GitMapEntry, trees map[string][]byte) error {
	gm, id, ok, err := w.gitMapper(ctx)
	if !ok {
		return err
	}
	cs := make([]backend.GitCommit, len(entries))
	for i, e := range entries {
		cs[i] = backend.GitCommit(e)
	}
	// In one order, so that two processes storing the same trees at once
	// take the same locks in the same order.
	ts := make([]backend.GitTree, 0, len(trees))
	for h, o := range trees {
		ts = append(ts, backend.GitTree{Hash: h, Object: o})
	}
	slices.SortFunc(ts, func(a, b backend.GitTree) int { return strings.Compare(a.Hash, b.Hash) })
	slices.SortFunc(cs, func(a, b backend.GitCommit) int { return cmp.Compare(a.Seq, b.Seq) })
	return gm.PutGitMap(ctx, id, cs, ts)
}

// OpenReview returns the open review of a workspace under review
// (ForReview) on its thread: the one its changes go to, whose thread its
// reads read. ok is false without one (its next change opens one), and
// for a workspace not under review. A review decided since is forgotten
// first, as a read forgets it.
func (w *Workspace) OpenReview(ctx context.Context) (r Review, ok bool, err error) {
	if w.rv == nil {
		return Review{}, false, nil
	}
	if _, err := w.reading(ctx); err != nil {
		return Review{}, false, err
	}
	w.rv.mu.Lock()
	defer w.rv.mu.Unlock()
	if rt := w.rv.routes[w.thread]; rt != nil {
		return rt.rev, true, nil
	}
	return Review{}, false, nil
}
