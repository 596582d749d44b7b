package satchel

import (
	"context"
	"encoding/json"

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
