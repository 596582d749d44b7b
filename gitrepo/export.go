package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"os"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/satchel-dev/satchel"
)

// ExportResult says what Export wrote.
type ExportResult struct {
	// Refs maps each reference written to its commit's hash.
	Refs map[string]string `json:"refs"`
	// Head is the branch HEAD names ("" for an empty repository).
	Head    string `json:"head"`
	Objects int    `json:"objects"`
}

// Export writes the repository of a thread (or, with thread "", of the
// whole scope, every thread a branch) to dir, a new directory or an
// empty one: a git repository with the same hashes as served, its work
// tree checked out at HEAD.
func Export(ctx context.Context, st *satchel.Store, scope, thread, dir string) (ExportResult, error) {
	sr := newScopeRepo(st, scope)
	sr.allFull = true
	if err := sr.refresh(ctx); err != nil {
		return ExportResult{}, err
	}
	if thread != "" {
		if _, ok := sr.infos[thread]; !ok {
			return ExportResult{}, &satchel.Error{Kind: satchel.ErrNotFound, Msg: fmt.Sprintf("thread not found: %s (scope %s)", thread, scope)}
		}
	}
	repo := repoName{Scope: scope, Thread: thread}
	refs, headRef, err := sr.refs(ctx, repo)
	if err != nil {
		return ExportResult{}, err
	}
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return ExportResult{}, &satchel.Error{Kind: satchel.ErrExists, Msg: fmt.Sprintf("%s is not empty: export writes a new repository into a new or empty directory", dir)}
	}
	r, err := git.PlainInit(dir, false)
	if err != nil {
		return ExportResult{}, fmt.Errorf("making a repository in %s: %w", dir, err)
	}
	var tips []plumbing.Hash
	for _, rf := range refs {
		tips = append(tips, rf.hash)
	}
	objs := sr.objectsFor(tips, nil)
	out := ExportResult{Refs: map[string]string{}, Objects: len(objs)}
	if len(objs) > 0 {
		pw, ok := r.Storer.(storer.PackfileWriter)
		if !ok {
			return out, errors.New("the repository's storage writes no packs")
		}
		w, err := pw.PackfileWriter()
		if err != nil {
			return out, err
		}
		if _, err := packfile.NewEncoder(w, sr.objects, false).Encode(objs, 0); err != nil {
			w.Close()
			return out, err
		}
		if err := w.Close(); err != nil {
			return out, err
		}
	}
	for _, rf := range refs {
		if err := r.Storer.SetReference(plumbing.NewHashReference(plumbing.ReferenceName(rf.name), rf.hash)); err != nil {
			return out, err
		}
		out.Refs[rf.name] = rf.hash.String()
	}
	if headRef != "" {
		if err := r.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.ReferenceName(headRef))); err != nil {
			return out, err
		}
		if _, ok := out.Refs[headRef]; ok {
			out.Head = headRef
			wt, err := r.Worktree()
			if err != nil {
				return out, err
			}
			if err := wt.Reset(&git.ResetOptions{Mode: git.HardReset}); err != nil {
				return out, fmt.Errorf("checking out %s: %w", headRef, err)
			}
		}
	}
	return out, nil
}

// ImportResult says what Import made.
type ImportResult struct {
	Thread string `json:"thread"`
	// Commits counts the satchel commits made; Skipped the git commits
	// that changed no file (satchel makes no commit that changes nothing).
	Commits int `json:"commits"`
	Skipped int `json:"skipped"`
}

// Import turns the first-parent history of branch (HEAD when "") of the
// git repository at path into the commits of thread, which must not
// exist yet: each git commit one satchel commit recorded as actor, with
// the git commit (its author, committer and message) in its metadata, so
// that the thread is served with the same hashes.
func Import(ctx context.Context, st *satchel.Store, path, branch, scope, thread string, actor satchel.Actor) (ImportResult, error) {
	if err := satchel.ValidThreadName(thread); err != nil {
		return ImportResult{}, err
	}
	r, err := git.PlainOpen(path)
	if err != nil {
		return ImportResult{}, fmt.Errorf("opening repository %s: %w", path, err)
	}
	rev := "HEAD"
	if branch != "" {
		rev = "refs/heads/" + branch
	}
	tip, err := r.ResolveRevision(plumbing.Revision(rev))
	if err != nil {
		return ImportResult{}, &satchel.Error{Kind: satchel.ErrNotFound, Msg: fmt.Sprintf("%s not found in %s: %v", rev, path, err)}
	}
	if err := st.CheckThread(ctx, scope, thread); err == nil {
		return ImportResult{}, &satchel.Error{Kind: satchel.ErrExists, Msg: fmt.Sprintf("thread %s exists: import makes a new thread", thread)}
	} else if !errors.Is(err, satchel.ErrNotFound) {
		return ImportResult{}, err
	}
	var chain []*object.Commit
	for h := *tip; ; {
		c, err := object.GetCommit(r.Storer, h)
		if err != nil {
			return ImportResult{}, fmt.Errorf("commit %s: %w", h, err)
		}
		chain = append(chain, c)
		if len(c.ParentHashes) == 0 {
			break
		}
		h = c.ParentHashes[0]
	}
	ws, err := st.Workspace(ctx, scope, thread, satchel.WorkspaceActor(actor))
	if err != nil {
		return ImportResult{}, err
	}
	out := ImportResult{Thread: thread}
	prev := &object.Tree{}
	var seq int64
	for i := len(chain) - 1; i >= 0; i-- {
		c := chain[i]
		tree, err := c.Tree()
		if err != nil {
			return out, err
		}
		p, err := prepare(ctx, r.Storer, c, prev, tree, true)
		if errors.Is(err, errEmpty) {
			out.Skipped++
			continue
		}
		if err == nil {
			err = p.commit(ctx, ws, after(seq))
		}
		if err != nil {
			return out, fmt.Errorf("commit %s: %w", c.Hash, err)
		}
		out.Commits++
		seq++
		prev = tree
	}
	return out, nil
}
