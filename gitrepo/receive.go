package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/satchel-dev/satchel"
)

// readBounded reads r whole, refusing more than max bytes.
func readBounded(r io.Reader, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("request body over %d bytes", max)
	}
	return b, nil
}

// inflateFactor bounds what a push's objects take once inflated: that
// many times the bound on its body.
const inflateFactor = 8

// checkPackSize reads a pushed pack's object headers and refuses it when
// its objects would take more than max bytes once inflated (a small pack
// of repeated bytes inflates a thousandfold), or when an object inflates
// past its header's length, before go-git inflates any into memory. A
// delta counts its own length and the size of the object it makes.
func checkPackSize(pack []byte, max int64) error {
	s := packfile.NewScanner(bytes.NewReader(pack))
	_, n, err := s.Header()
	if err != nil {
		return err
	}
	tooBig := fmt.Errorf("the pushed objects take more than %d bytes once inflated (%d times --max-request-bytes)", max, inflateFactor)
	var total int64
	for range n {
		h, err := s.NextObjectHeader()
		if err != nil {
			return err
		}
		if total += h.Length; h.Length < 0 || total > max {
			return tooBig
		}
		w := &deltaHead{max: h.Length}
		if _, _, err := s.NextObject(w); err != nil {
			return err
		}
		if h.Type == plumbing.OFSDeltaObject || h.Type == plumbing.REFDeltaObject {
			if total += w.targetSize(); total > max {
				return tooBig
			}
		}
	}
	return nil
}

// deltaHead takes an object's inflated bytes, keeping the first ones (a
// delta's header), and refuses more than max of them.
type deltaHead struct {
	max, n int64
	head   []byte
}

func (d *deltaHead) Write(p []byte) (int, error) {
	d.n += int64(len(p))
	if d.n > d.max {
		return 0, errors.New("a pushed object inflates past its length")
	}
	if k := 20 - len(d.head); k > 0 {
		d.head = append(d.head, p[:min(k, len(p))]...)
	}
	return len(p), nil
}

// targetSize reads the size of the object a delta makes: the second of
// the two varints its data starts with.
func (d *deltaHead) targetSize() int64 {
	b := d.head
	for len(b) > 0 && b[0]&0x80 != 0 { // the base's size
		b = b[1:]
	}
	if len(b) > 0 {
		b = b[1:]
	}
	var size int64
	for shift := 0; len(b) > 0 && shift < 63; shift += 7 {
		size |= int64(b[0]&0x7f) << shift
		if b[0]&0x80 == 0 {
			break
		}
		b = b[1:]
	}
	return size
}

// errMoved is a push's refusal when the thread's head moved.
var errMoved = errors.New("non-fast-forward")

// errEmpty is the refusal of a git commit that changes no file.
var errEmpty = errors.New("changes no file: satchel makes no commit that changes nothing")

// receivePack answers POST git-receive-pack: each command updates one
// thread's branch, fast-forward only, each pushed commit on the
// first-parent chain becoming one satchel commit.
func (h *Handler) receivePack(w http.ResponseWriter, r *http.Request, repo repoName, id Identity) {
	if r.ContentLength > h.cfg.MaxRequestBytes {
		http.Error(w, fmt.Sprintf("push body of %d bytes is over the bound of %d bytes (--max-request-bytes)", r.ContentLength, h.cfg.MaxRequestBytes), http.StatusRequestEntityTooLarge)
		return
	}
	raw, err := readBounded(http.MaxBytesReader(w, r.Body, h.cfg.MaxRequestBytes), h.cfg.MaxRequestBytes)
	if err != nil {
		http.Error(w, fmt.Sprintf("push body over the bound of %d bytes (--max-request-bytes)", h.cfg.MaxRequestBytes), http.StatusRequestEntityTooLarge)
		return
	}
	req := packp.NewReferenceUpdateRequest()
	if err := req.Decode(bytes.NewReader(raw)); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ctx := r.Context()
	sr, err := h.repo(ctx, repo.Scope)
	if err != nil {
		h.fail(w, err)
		return
	}
	defer sr.mu.Unlock()
	// The threads pushed to are mapped from their oldest retained commit
	// first: a thin pack's bases are among their objects.
	for _, c := range req.Commands {
		if name, ok := strings.CutPrefix(c.Name.String(), "refs/heads/"); ok && satchel.ValidThreadName(name) == nil {
			if ws, err := h.workspace(ctx, id, repo.Scope, name, "git:push"); err == nil {
				_, _ = h.pushBase(ctx, sr, ws, name)
			}
		}
	}
	rs := packp.NewReportStatus()
	rs.UnpackStatus = "ok"
	if req.Packfile != nil {
		pack, _ := io.ReadAll(req.Packfile)
		if len(pack) > 0 {
			if err := checkPackSize(pack, inflateFactor*h.cfg.MaxRequestBytes); err != nil {
				rs.UnpackStatus = err.Error()
			} else if err := packfile.UpdateObjectStorage(sr.objects, bytes.NewReader(pack)); err != nil && !errors.Is(err, packfile.ErrEmptyPackfile) {
				rs.UnpackStatus = err.Error()
			}
		}
	}
	for _, cmd := range req.Commands {
		msg := ""
		if rs.UnpackStatus != "ok" {
			msg = "unpacker error"
		} else {
			msg = h.update(ctx, sr, repo, id, cmd)
		}
		st := &packp.CommandStatus{ReferenceName: cmd.Name, Status: "ok"}
		if msg != "" {
			st.Status = msg
		}
		rs.CommandStatuses = append(rs.CommandStatuses, st)
	}
	w.Header().Set("Content-Type", "application/x-git-receive-pack-result")
	w.Header().Set("Cache-Control", "no-cache")
	if err := rs.Encode(w); err != nil {
		h.cfg.Logger.Error("answering a push", "error", err.Error())
	}
}

// update applies one command; it returns why it was refused ("" when it
// was not).
func (h *Handler) update(ctx context.Context, sr *scopeRepo, repo repoName, id Identity, cmd *packp.Command) string {
	name := cmd.Name.String()
	thread, ok := strings.CutPrefix(name, "refs/heads/")
	if !ok {
		if strings.HasPrefix(name, "refs/tags/") {
			return "checkpoints are made in satchel: tags cannot be pushed"
		}
		return "only a thread's branch (refs/heads/THREAD) can be pushed"
	}
	if repo.Thread != "" && thread != repo.Thread {
		return fmt.Sprintf("this repository is thread %s's: push to refs/heads/%s", repo.Thread, repo.Thread)
	}
	if err := satchel.ValidThreadName(thread); err != nil {
		return err.Error()
	}
	if id.Thread != "" && thread != id.Thread {
		return fmt.Sprintf("token %s is bound to thread %q", id.Credential, id.Thread)
	}
	if cmd.New.IsZero() {
		return "a thread's branch cannot be deleted by a push (satchel threads delete)"
	}
	ws, err := h.workspace(ctx, id, repo.Scope, thread, "git:push")
	if err != nil {
		return err.Error()
	}
	pb, err := h.pushBase(ctx, sr, ws, thread)
	if err != nil {
		return errText(err)
	}
	if cmd.Old != pb.old {
		return "non-fast-forward"
	}
	chain, err := firstParents(sr.objects, cmd.New, pb.old, func(h plumbing.Hash) bool { return sr.nodes[h] != nil })
	if err != nil {
		return errText(err)
	}
	// Every pushed commit is read and checked (paths, modes, changes)
	// before the first is committed; bounds and quotas are checked as
	// each is.
	prevTree := &object.Tree{}
	if !pb.tree.IsZero() {
		if prevTree, err = treeOf(sr.objects, pb.tree); err != nil {
			return err.Error()
		}
	}
	var ready []*prepared
	for _, c := range chain {
		tree, err := c.Tree()
		if err != nil {
			return err.Error()
		}
		p, err := prepare(ctx, sr.objects, c, prevTree, tree, false)
		if err != nil {
			return errText(err)
		}
		ready = append(ready, p)
		prevTree = tree
	}
	baseSeq := pb.seq
	for i, p := range ready {
		check := after(baseSeq)
		if i == 0 && pb.fresh {
			// The first commit opens the caller's review: a fork of the
			// thread's head, which must still be the one pushed onto
			// (heads only move forward: if it is now, the fork was of it).
			check = func(b *satchel.Batch) error {
				if b.Base() != 1 {
					return errMoved
				}
				tw, err := h.cfg.Store.Workspace(ctx, repo.Scope, thread)
				if err != nil {
					return err
				}
				th, err := tw.Head(ctx)
				if err != nil {
					return err
				}
				if th.Seq != pb.seq {
					return errMoved
				}
				return nil
			}
			baseSeq = 1
		}
		if err := p.commit(ctx, ws, check); err != nil {
			if i > 0 {
				return fmt.Sprintf("%s (the %d commits before %s landed)", errText(err), i, p.hash.String()[:12])
			}
			return errText(err)
		}
		baseSeq++
	}
	return ""
}

// pushBase is what a push of a thread's branch builds on, for one
// caller.
type pushBase struct {
	// old is the branch as the pusher must have it: the thread's head;
	// for a caller under review with an open review, the git commit it
	// pushed last to its review (or, before any landed there, the
	// thread's commit the review was forked from).
	old plumbing.Hash
	// tree is a served commit whose tree is old's (zero: none).
	tree plumbing.Hash
	// seq is the satchel commit the first pushed commit must follow (on
	// the review thread when the review is open); fresh is set under
	// review without an open review: the first pushed commit opens one,
	// forked from the thread at seq.
	seq   int64
	fresh bool
}

// errNotPushed refuses a push to an open review whose head did not
// come from git.
var errNotPushed = errors.New("holds changes that did not come from a push: push again once it is approved or rejected")

// pushBase maps what a push of ws's caller to thread builds on (and the
// review thread it goes to, whose objects a thin pack's deltas may use),
// and returns it. A caller under review pushes to its review: the
// thread's head does not move, and the branch it fast-forwards is its
// own pushed commits on top of the commit its review was forked from.
func (h *Handler) pushBase(ctx context.Context, sr *scopeRepo, ws *satchel.Workspace, thread string) (pushBase, error) {
	if err := sr.mapFully(ctx, thread); err != nil {
		return pushBase{}, err
	}
	head, err := sr.head(ctx, thread)
	if err != nil {
		return pushBase{}, err
	}
	pb := pushBase{old: head, tree: head}
	if tm := sr.threads[thread]; tm != nil && len(tm.commits) > 0 {
		pb.seq = tm.commits[len(tm.commits)-1].Seq
	}
	if !ws.UnderReview() {
		return pb, nil
	}
	rev, open, err := ws.OpenReview(ctx)
	if err != nil {
		return pushBase{}, err
	}
	if !open {
		pb.fresh = true
		return pb, nil
	}
	if err := sr.mapFully(ctx, rev.ReviewThread); err != nil {
		return pushBase{}, err
	}
	if pb.tree, err = sr.head(ctx, rev.ReviewThread); err != nil {
		return pushBase{}, err
	}
	tm := sr.threads[rev.ReviewThread]
	if tm == nil || len(tm.commits) == 0 {
		return pushBase{}, fmt.Errorf("review %s: its thread %s has no commits", rev.ID, rev.ReviewThread)
	}
	last := tm.commits[len(tm.commits)-1]
	pb.seq = last.Seq
	switch {
	case last.Git != nil:
		pb.old = plumbing.NewHash(last.Git.Hash)
	case last.Seq == rev.Fork:
		h, ok, err := sr.hashOf(ctx, thread, rev.Base)
		if err != nil {
			return pushBase{}, err
		}
		if !ok {
			return pushBase{}, fmt.Errorf("review %s: the commit it was forked from (%s@%d) is no longer retained", rev.ID, thread, rev.Base)
		}
		pb.old = h
	default:
		return pushBase{}, fmt.Errorf("review %s %w", rev.ID, errNotPushed)
	}
	return pb, nil
}

func errText(err error) string {
	if errors.Is(err, errMoved) {
		return "non-fast-forward"
	}
	return strings.ReplaceAll(err.Error(), "\n", " ")
}

// treeOf reads a commit's tree.
func treeOf(s storer.EncodedObjectStorer, h plumbing.Hash) (*object.Tree, error) {
	c, err := object.GetCommit(s, h)
	if err != nil {
		return nil, err
	}
	return c.Tree()
}

// firstParents lists the commits from head (excluded; zero: from a root)
// to tip along first parents, oldest first; errMoved when tip does not
// descend from head (the walk meets a commit the server has, known, that
// is not head, or a root).
func firstParents(s storer.EncodedObjectStorer, tip, head plumbing.Hash, known func(plumbing.Hash) bool) ([]*object.Commit, error) {
	var out []*object.Commit
	for h := tip; h != head; {
		if known(h) {
			return nil, errMoved
		}
		c, err := object.GetCommit(s, h)
		if err != nil {
			return nil, fmt.Errorf("commit %s: %w", h, err)
		}
		if len(c.ParentHashes) > 1 {
			return nil, fmt.Errorf("commit %s is a merge: push a history without merges (rebase it), since satchel keeps one parent per pushed commit", c.Hash)
		}
		out = append(out, c)
		if len(c.ParentHashes) == 0 {
			if !head.IsZero() {
				return nil, errMoved
			}
			break
		}
		h = c.ParentHashes[0]
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

// prepared is a git commit made ready to be one satchel commit: what it
// changes over its parent, and what the commit keeps of it.
type prepared struct {
	hash    plumbing.Hash
	puts    []put
	dels    []string
	origin  satchel.GitOrigin
	subject string
}

type put struct{ path, content string }

// prepare reads what git commit c, whose tree is tree and whose parent's
// is prev, changes. With anyMode (an import) an executable file is taken
// as a file; a push takes mode 100644 only, since the commit is served
// with that mode. errEmpty when it changes nothing.
func prepare(ctx context.Context, s storer.EncodedObjectStorer, c *object.Commit, prev, tree *object.Tree, anyMode bool) (*prepared, error) {
	changes, err := object.DiffTreeWithOptions(ctx, prev, tree, &object.DiffTreeOptions{})
	if err != nil {
		return nil, err
	}
	if len(changes) == 0 {
		return nil, fmt.Errorf("commit %s %w", c.Hash, errEmpty)
	}
	p := &prepared{hash: c.Hash}
	for _, ch := range changes {
		if ch.To.Name == "" {
			p.dels = append(p.dels, ch.From.Name)
			continue
		}
		if m := ch.To.TreeEntry.Mode; m != filemode.Regular && !(anyMode && m == filemode.Executable) {
			return nil, fmt.Errorf("%s: git mode %o cannot be pushed: satchel's files are mode 100644", ch.To.Name, uint32(ch.To.TreeEntry.Mode))
		}
		if err := satchel.ValidPath(ch.To.Name); err != nil {
			return nil, err
		}
		b, err := blobContent(s, ch.To.TreeEntry.Hash)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ch.To.Name, err)
		}
		if ch.From.Name != "" && ch.From.Name != ch.To.Name {
			p.dels = append(p.dels, ch.From.Name)
		}
		p.puts = append(p.puts, put{ch.To.Name, b})
	}
	if p.origin, p.subject, err = originOf(s, c); err != nil {
		return nil, err
	}
	return p, nil
}

// commit makes p one satchel commit of ws's thread (its review
// thread, under review) if check, which sees the head it builds on,
// lets it (errMoved when the head is another).
func (p *prepared) commit(ctx context.Context, ws *satchel.Workspace, check func(*satchel.Batch) error) error {
	return ws.Batch(ctx, func(ctx context.Context, b *satchel.Batch) error {
		if err := check(b); err != nil {
			return err
		}
		for _, path := range p.dels {
			if err := b.Delete(ctx, path); err != nil {
				return err
			}
		}
		for _, f := range p.puts {
			if err := b.Write(ctx, f.path, f.content); err != nil {
				return err
			}
		}
		b.SetGit(p.origin, p.subject)
		return nil
	})
}

// after is the check of a batch that must land right after commit seq.
func after(seq int64) func(*satchel.Batch) error {
	return func(b *satchel.Batch) error {
		if b.Base() != seq {
			return errMoved
		}
		return nil
	}
}

// blobContent reads a blob.
func blobContent(s storer.EncodedObjectStorer, h plumbing.Hash) (string, error) {
	o, err := s.EncodedObject(plumbing.BlobObject, h)
	if err != nil {
		return "", err
	}
	rd, err := o.Reader()
	if err != nil {
		return "", err
	}
	defer rd.Close()
	b, err := io.ReadAll(rd)
	return string(b), err
}

// originOf returns what a satchel commit keeps of git commit c, and c's
// subject.
func originOf(s storer.EncodedObjectStorer, c *object.Commit) (satchel.GitOrigin, string, error) {
	o, err := s.EncodedObject(plumbing.CommitObject, c.Hash)
	if err != nil {
		return satchel.GitOrigin{}, "", err
	}
	rd, err := o.Reader()
	if err != nil {
		return satchel.GitOrigin{}, "", err
	}
	defer rd.Close()
	raw, err := io.ReadAll(rd)
	if err != nil {
		return satchel.GitOrigin{}, "", err
	}
	body := string(raw)
	for {
		line, rest, ok := strings.Cut(body, "\n")
		if !ok || !(strings.HasPrefix(line, "tree ") || strings.HasPrefix(line, "parent ")) {
			break
		}
		body = rest
	}
	subject, _, _ := strings.Cut(strings.TrimLeft(c.Message, "\n"), "\n\n")
	subject = strings.Join(strings.Fields(subject), " ")
	return satchel.GitOrigin{Hash: c.Hash.String(), Author: c.Author.Name + " <" + c.Author.Email + ">", Object: body}, subject, nil
}
