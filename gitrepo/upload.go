package gitrepo

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/format/pktline"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/satchel-dev/satchel"
)

// agent is the agent capability the server advertises.
const agent = "satchel"

// refs maps the repository's threads and returns its references and the
// branch HEAD points to ("" for an empty repository). A thread's
// repository has the thread's branch and its checkpoints as tags; a
// scope's has a branch per thread with commits, and tags THREAD/NAME.
func (r *scopeRepo) refs(ctx context.Context, repo repoName) ([]ref, string, error) {
	threads := []string{repo.Thread}
	if repo.Thread == "" {
		threads = threads[:0]
		for name := range r.infos {
			threads = append(threads, name)
		}
		sort.Strings(threads)
	}
	var out []ref
	headRef := ""
	for _, th := range threads {
		h, err := r.head(ctx, th)
		if err != nil {
			return nil, "", err
		}
		if h.IsZero() || !validRefPart(th) {
			continue
		}
		branch := "refs/heads/" + th
		out = append(out, ref{branch, h})
		if headRef == "" || th == "main" {
			headRef = branch
		}
		tags, err := r.tags(ctx, th)
		if err != nil {
			return nil, "", err
		}
		for _, tg := range tags {
			name := tg.name
			if repo.Thread == "" {
				name = th + "/" + tg.name
			}
			out = append(out, ref{"refs/tags/" + name, tg.hash})
		}
	}
	if repo.Thread != "" {
		headRef = "refs/heads/" + repo.Thread
	}
	return out, headRef, nil
}

// tags lists a mapped thread's checkpoints as tags (read each time: a
// checkpoint may name an old commit), oldest commit first.
func (r *scopeRepo) tags(ctx context.Context, th string) ([]ref, error) {
	tm := r.threads[th]
	if tm == nil {
		return nil, nil
	}
	w, err := r.st.Workspace(ctx, r.scope, th)
	if err != nil {
		return nil, err
	}
	cps, err := w.Checkpoints(ctx)
	if err != nil {
		return nil, err
	}
	// Those of commits before the map's base: their hashes in one read
	// of the stored map.
	stored := map[int64]plumbing.Hash{}
	var seqs []int64
	for _, cp := range cps {
		if cp.Seq < tm.base {
			seqs = append(seqs, cp.Seq)
		}
	}
	if len(seqs) > 0 {
		es, err := w.GitMapEntries(ctx, seqs, nil)
		if err != nil {
			return nil, err
		}
		for _, e := range es {
			if e.Root == tm.oldest {
				stored[e.Seq] = plumbing.NewHash(e.Hash)
			}
		}
	}
	var out []ref
	for i := len(cps) - 1; i >= 0; i-- {
		cp := cps[i]
		if !validRefPart(cp.Name) {
			continue
		}
		if cp.Seq < tm.base {
			if h, ok := stored[cp.Seq]; ok {
				out = append(out, ref{cp.Name, h})
			}
			continue
		}
		h, ok, err := r.hashOf(ctx, th, cp.Seq)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, ref{cp.Name, h})
		}
	}
	return out, nil
}

// validRefPart reports whether git takes s as one component of a
// reference name (thread and checkpoint names are close to it already).
func validRefPart(s string) bool {
	if s == "" || s[0] == '.' || s[len(s)-1] == '.' || strings.HasSuffix(s, ".lock") || strings.Contains(s, "..") || s == "@" {
		return false
	}
	return !strings.ContainsAny(s, " ~^:?*[\\\x7f@{")
}

// advertise answers GET info/refs?service=svc.
func (h *Handler) advertise(w http.ResponseWriter, r *http.Request, repo repoName, svc string, id Identity) {
	sr, err := h.repo(r.Context(), repo.Scope)
	if err != nil {
		h.fail(w, err)
		return
	}
	refs, headRef, err := sr.refs(r.Context(), repo)
	if err == nil && svc == "git-receive-pack" {
		err = h.pushRefs(r.Context(), sr, id, repo.Scope, refs)
	}
	sr.mu.Unlock()
	if err != nil {
		h.fail(w, err)
		return
	}
	ar := packp.NewAdvRefs()
	ar.Prefix = [][]byte{[]byte("# service=" + svc), pktline.Flush}
	for _, rf := range refs {
		ar.References[rf.name] = rf.hash
	}
	_ = ar.Capabilities.Set(capability.Agent, agent)
	if svc == "git-upload-pack" {
		for _, rf := range refs {
			if rf.name == headRef {
				hh := rf.hash
				ar.Head = &hh
				_ = ar.Capabilities.Set(capability.SymRef, "HEAD:"+headRef)
			}
		}
		_ = ar.Capabilities.Set(capability.MultiACKDetailed)
	} else {
		_ = ar.Capabilities.Set(capability.ReportStatus)
		_ = ar.Capabilities.Set(capability.OFSDelta)
	}
	w.Header().Set("Content-Type", "application/x-"+svc+"-advertisement")
	w.Header().Set("Cache-Control", "no-cache")
	var b bytes.Buffer
	if err := ar.Encode(&b); err != nil {
		h.fail(w, err)
		return
	}
	_, _ = w.Write(b.Bytes())
}

// pushRefs sets, for a caller under review, each branch it may push to
// where its push builds on (pushBase): its open review's last pushed
// commit rather than the thread's head.
func (h *Handler) pushRefs(ctx context.Context, sr *scopeRepo, id Identity, scope string, refs []ref) error {
	for i, rf := range refs {
		th, ok := strings.CutPrefix(rf.name, "refs/heads/")
		if !ok {
			continue
		}
		ws, err := h.workspace(ctx, id, scope, th, "git:push")
		if err != nil {
			return err
		}
		if !ws.UnderReview() {
			return nil // the same for every thread
		}
		pb, err := h.pushBase(ctx, sr, ws, th)
		if err != nil {
			continue // the push is refused, saying why
		}
		refs[i].hash = pb.old
	}
	return nil
}

func (h *Handler) fail(w http.ResponseWriter, err error) {
	h.cfg.Logger.Error("serving git", "error", err.Error())
	http.Error(w, err.Error(), http.StatusInternalServerError)
}

// uploadRequest is what a client of upload-pack asks for.
type uploadRequest struct {
	wants, haves []plumbing.Hash
	done         bool
}

// maxUploadRequest bounds an upload-pack request: wants and haves, 50
// bytes a line.
const maxUploadRequest = 8 << 20

// parseUpload reads an upload-pack request (protocol v0, stateless).
func parseUpload(b []byte) (uploadRequest, error) {
	var req uploadRequest
	s := pktline.NewScanner(bytes.NewReader(b))
	for s.Scan() {
		line := strings.TrimSuffix(string(s.Bytes()), "\n")
		if line == "" {
			continue // a flush
		}
		cmd, arg, _ := strings.Cut(line, " ")
		switch cmd {
		case "want", "have":
			hex, _, _ := strings.Cut(arg, " ")
			if len(hex) != 40 {
				return req, fmt.Errorf("invalid %s line %q", cmd, line)
			}
			h := plumbing.NewHash(hex)
			if h.String() != hex {
				return req, fmt.Errorf("invalid %s line %q", cmd, line)
			}
			if cmd == "want" {
				req.wants = append(req.wants, h)
			} else {
				req.haves = append(req.haves, h)
			}
		case "done":
			req.done = true
		case "shallow", "deepen", "deepen-since", "deepen-not", "filter":
			return req, fmt.Errorf("%s is not supported: clone the whole history", cmd)
		default:
			return req, fmt.Errorf("unexpected line %q", line)
		}
	}
	if err := s.Err(); err != nil {
		return req, err
	}
	if len(req.wants) == 0 {
		return req, fmt.Errorf("no want line")
	}
	return req, nil
}

// uploadPack answers POST git-upload-pack as git's upload-pack does in a
// stateless exchange with multi_ack_detailed: "ACK common" for each have
// it knows, "ready" once one is known, NAK at the end of a round; after
// done, the pack of what the wants reach and the common haves do not.
func (h *Handler) uploadPack(w http.ResponseWriter, r *http.Request, repo repoName) {
	rd, err := body(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	raw, err := readBounded(rd, maxUploadRequest)
	if err != nil {
		http.Error(w, err.Error(), http.StatusRequestEntityTooLarge)
		return
	}
	req, err := parseUpload(raw)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ctx := r.Context()
	sr, err := h.repo(ctx, repo.Scope)
	if err != nil {
		h.fail(w, err)
		return
	}
	locked := true
	defer func() {
		if locked {
			sr.mu.Unlock()
		}
	}()
	refs, _, err := sr.refs(ctx, repo)
	if err != nil {
		h.fail(w, err)
		return
	}
	tips := map[plumbing.Hash]bool{}
	for _, rf := range refs {
		tips[rf.hash] = true
	}
	known, err := sr.prepareUpload(ctx, repo, refs, req)
	if err != nil {
		h.fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/x-git-upload-pack-result")
	w.Header().Set("Cache-Control", "no-cache")
	bw := bufio.NewWriterSize(w, 64<<10)
	defer bw.Flush()
	pe := pktline.NewEncoder(bw)
	for _, want := range req.wants {
		if !tips[want] {
			_ = pe.EncodeString(fmt.Sprintf("ERR upload-pack: not our ref %s\n", want))
			return
		}
	}
	// As git's upload-pack answers with multi_ack_detailed, stateless:
	// the client replays the haves found common in each request.
	var common []plumbing.Hash
	lastHex := ""
	gotCommon, gotOther, sentReady := false, false, false
	for _, hv := range req.haves {
		if sr.nodes[hv] == nil && !known[hv] {
			gotOther = true
			if len(common) > 0 {
				sentReady = true
				_ = pe.EncodeString("ACK " + hv.String() + " ready\n")
			}
			continue
		}
		gotCommon = true
		common = append(common, hv)
		lastHex = hv.String()
		_ = pe.EncodeString("ACK " + lastHex + " common\n")
	}
	if !req.done {
		if gotCommon && !gotOther && !sentReady {
			_ = pe.EncodeString("ACK " + lastHex + " ready\n")
		}
		_ = pe.EncodeString("NAK\n")
		return
	}
	if len(common) > 0 {
		_ = pe.EncodeString("ACK " + lastHex + "\n")
	} else {
		_ = pe.EncodeString("NAK\n")
	}
	objs := sr.objectsFor(req.wants, common)
	// The pack is written from the objects picked under the scope's lock,
	// without it: a slow client holds up no other request of the scope.
	picked := memory.NewStorage()
	for _, o := range objs {
		obj, err := sr.objects.EncodedObject(plumbing.AnyObject, o)
		if err != nil {
			h.cfg.Logger.Error("writing a pack", "error", err.Error())
			return
		}
		if _, err := picked.SetEncodedObject(obj); err != nil {
			h.cfg.Logger.Error("writing a pack", "error", err.Error())
			return
		}
	}
	sr.mu.Unlock()
	locked = false
	if _, err := packfile.NewEncoder(bw, picked, false).Encode(objs, 0); err != nil {
		h.cfg.Logger.Error("writing a pack", "error", err.Error())
	}
}

// prepareUpload makes the threads whose tips are wanted mapped far enough
// back for the pack: a thread mapped from a commit of the stored map
// (tm.base) is mapped again from the newest commit of it the client has,
// or from its oldest retained commit when the client has none of it (a
// clone). It returns the commits the client may have that this process
// did not map: the bases, known from the stored map.
func (r *scopeRepo) prepareUpload(ctx context.Context, repo repoName, refs []ref, req uploadRequest) (map[plumbing.Hash]bool, error) {
	wanted := map[plumbing.Hash]bool{}
	for _, h := range req.wants {
		wanted[h] = true
	}
	threads := map[string]bool{}
	for _, rf := range refs {
		if !wanted[rf.hash] {
			continue
		}
		th := repo.Thread
		if th == "" {
			rest := strings.TrimPrefix(strings.TrimPrefix(rf.name, "refs/heads/"), "refs/tags/")
			th, _, _ = strings.Cut(rest, "/")
		}
		threads[th] = true
	}
	names := make([]string, 0, len(threads))
	for th := range threads {
		names = append(names, th)
	}
	sort.Strings(names)
	known := map[plumbing.Hash]bool{}
	for _, th := range names {
		tm := r.threads[th]
		if tm == nil || tm.base == 0 {
			continue
		}
		mine := map[plumbing.Hash]bool{tm.baseHash: true}
		for _, hh := range tm.hashes {
			mine[hh] = true
		}
		var unknown []string
		has := false
		for _, hv := range req.haves {
			if mine[hv] {
				has = true
			} else if r.nodes[hv] == nil {
				unknown = append(unknown, hv.String())
			}
		}
		if has {
			known[tm.baseHash] = true
			continue
		}
		var best *satchel.GitMapEntry
		if len(unknown) > 0 {
			w, err := r.st.Workspace(ctx, r.scope, th)
			if err != nil {
				return nil, err
			}
			es, err := w.GitMapEntries(ctx, nil, unknown)
			if err != nil {
				return nil, err
			}
			for i := range es {
				if es[i].Root == tm.oldest && (best == nil || es[i].Seq > best.Seq) {
					best = &es[i]
				}
			}
		}
		if best != nil {
			if err := r.rebase(ctx, th, best.Seq); err != nil {
				return nil, err
			}
		} else if err := r.mapFully(ctx, th); err != nil {
			return nil, err
		}
		if _, err := r.head(ctx, th); err != nil {
			return nil, err
		}
		if tm := r.threads[th]; tm != nil && tm.base > 0 {
			known[tm.baseHash] = true
		}
	}
	return known, nil
}

// objectsFor lists the objects the commits wants reach and the commits
// haves reach do not: what each commit added over its first parent.
func (r *scopeRepo) objectsFor(wants, haves []plumbing.Hash) []plumbing.Hash {
	has := map[plumbing.Hash]bool{}
	stack := append([]plumbing.Hash(nil), haves...)
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if has[c] {
			continue
		}
		has[c] = true
		if n := r.nodes[c]; n != nil {
			stack = append(stack, n.parents...)
		}
	}
	seen := map[plumbing.Hash]bool{}
	var out []plumbing.Hash
	visited := map[plumbing.Hash]bool{}
	stack = append(stack[:0], wants...)
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if has[c] || visited[c] {
			continue
		}
		visited[c] = true
		n := r.nodes[c]
		if n == nil {
			continue
		}
		for _, o := range n.objs {
			if !seen[o] {
				seen[o] = true
				out = append(out, o)
			}
		}
		stack = append(stack, n.parents...)
	}
	return out
}
