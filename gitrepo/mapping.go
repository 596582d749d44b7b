package gitrepo

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/satchel-dev/satchel"
)

// The mapping (docs/git.md): each retained satchel commit is one git
// commit. Its tree holds the commit's files (mode 100644); its author and
// committer are the agent ("satchel" for none) at the commit's time; its
// message is the summary and the trailers Satchel-Commit, Satchel-Tool
// and Satchel-Client; its parents are the thread's previous retained
// commit (none for the oldest: a root), a fork's source commit for a
// fork's first commit, and the commit merged for a merge. A commit that
// came from git (a push, satchel git import) is its git commit again: its
// own author, committer and message over the tree and parents above.

// node is a git commit of the mapping.
type node struct {
	hash    plumbing.Hash
	parents []plumbing.Hash
	// objs are the objects the commit added over its first parent: the
	// commit itself, the trees it changed, the blobs of the files it
	// changed. Those of a commit and of all its ancestors are every
	// object it reaches.
	objs []plumbing.Hash
}

// threadMap is one thread's part of the mapping, as far as it was built.
type threadMap struct {
	name    string
	created time.Time
	// oldest is the thread's oldest retained commit (the mapping's root).
	oldest int64
	// base, when not 0, is the commit the mapping starts from: a commit
	// of the stored map (docs/decisions/0147-git-map-stored.md), whose
	// hash is baseHash and whose tree root starts as (read from the
	// stored trees as the next commits change them). commits then holds
	// only the commits after it. A thread mapped from its oldest retained
	// commit has base 0.
	base     int64
	baseHash plumbing.Hash
	// commits are the thread's retained commits (after base), oldest
	// first, as last read; done how many of them are mapped
	// (hashes[:done]); trees the tree of each mapped commit.
	commits []satchel.Commit
	hashes  []plumbing.Hash
	trees   []plumbing.Hash
	// saved is how many of hashes are in the stored map.
	saved int
	// added are the tree objects each mapped commit added, until saved.
	added [][]plumbing.Hash
	// root and snap are the tree and snapshot of the last mapped commit
	// (snap nil: read it when needed, the commit being base).
	root *dir
	snap *satchel.Snapshot
	// deps are the threads whose hashes this one's depend on.
	deps map[string]bool
	busy bool
}

// lastSeq is the newest commit the map knows of (0: none).
func (tm *threadMap) lastSeq() int64 {
	if len(tm.commits) > 0 {
		return tm.commits[len(tm.commits)-1].Seq
	}
	return tm.base
}

// scopeRepo is the mapping of one scope's threads, kept between requests
// so that a fetch maps only the commits made since the last one.
type scopeRepo struct {
	mu      sync.Mutex
	st      *satchel.Store
	scope   string
	objects *memory.Storage
	nodes   map[plumbing.Hash]*node
	threads map[string]*threadMap
	// fresh names the threads whose commits were read in this refresh.
	fresh map[string]bool
	// infos are the scope's threads as this refresh read them.
	infos map[string]satchel.ThreadInfo
	// used is when the handler last served the scope (Handler.clock).
	used int64
	// full names the threads mapped from their oldest retained commit,
	// not from the stored map: a push, a clone, a fetch of commits older
	// than the map's start need every object; allFull is that for every
	// thread (satchel git export).
	full    map[string]bool
	allFull bool
	// ctx is the request's, for reading stored trees.
	ctx    context.Context
	logger *slog.Logger
}

func (r *scopeRepo) log(msg string, err error) {
	if r.logger != nil {
		r.logger.Error(msg, "scope", r.scope, "error", err.Error())
	}
}

func newScopeRepo(st *satchel.Store, scope string) *scopeRepo {
	return &scopeRepo{st: st, scope: scope, objects: memory.NewStorage(), nodes: map[plumbing.Hash]*node{}, threads: map[string]*threadMap{}, full: map[string]bool{}}
}

// refresh starts a request: it reads the scope's threads, and drops the
// whole mapping when a thread it mapped lost a mapped commit (retention)
// or was made anew, since every hash after it changes.
func (r *scopeRepo) refresh(ctx context.Context) error {
	infos, err := r.st.Threads(ctx, r.scope)
	if err != nil {
		return err
	}
	r.infos = make(map[string]satchel.ThreadInfo, len(infos))
	for _, t := range infos {
		r.infos[t.Name] = t
	}
	r.fresh = map[string]bool{}
	r.ctx = ctx
	names := make([]string, 0, len(r.threads))
	for name := range r.threads {
		names = append(names, name)
	}
	for _, name := range names {
		tm := r.threads[name]
		if len(tm.hashes) == 0 && tm.base == 0 {
			delete(r.threads, name) // nothing mapped: read afresh when asked
			continue
		}
		if err := r.load(ctx, name); err != nil {
			return err
		}
		if r.threads[name] != tm {
			r.objects = memory.NewStorage()
			r.nodes = map[plumbing.Hash]*node{}
			r.threads = map[string]*threadMap{}
			r.fresh = map[string]bool{}
			return nil
		}
	}
	return nil
}

// load reads a thread's commits once per refresh: the first time all
// its retained commits, or those after the stored map's last one; then
// only those newer than it knows, after checking that its oldest
// retained commit is still retained. A mapped thread whose mapped
// commits are no longer all there (retention), or that was made anew, is
// dropped from r.threads, which refresh sees.
func (r *scopeRepo) load(ctx context.Context, name string) error {
	if r.fresh[name] {
		return nil
	}
	r.fresh[name] = true
	info, ok := r.infos[name]
	tm := r.threads[name]
	if !ok {
		delete(r.threads, name)
		return nil
	}
	w, err := r.st.Workspace(ctx, r.scope, name)
	if err != nil {
		return err
	}
	if tm != nil {
		last := tm.lastSeq()
		same := tm.created.Equal(info.Created) && info.Head >= last
		if same && tm.oldest > 0 {
			same, err = retained(ctx, w, tm.oldest)
			if err != nil {
				return err
			}
		}
		if !same {
			delete(r.threads, name)
			return nil
		}
		if info.Head > last {
			newer, err := w.History(ctx, 0, int(info.Head-last))
			if err != nil {
				return err
			}
			for i := len(newer) - 1; i >= 0; i-- {
				if newer[i].Seq > last {
					tm.commits = append(tm.commits, newer[i])
				}
			}
			if tm.oldest == 0 && len(tm.commits) > 0 {
				tm.oldest = tm.commits[0].Seq
			}
		}
		return nil
	}
	tm = &threadMap{name: name, created: info.Created, deps: map[string]bool{}}
	if !r.allFull && !r.full[name] {
		e, ok, err := w.GitMapLast(ctx)
		if err != nil {
			return err
		}
		if ok && e.Seq <= info.Head {
			if ok, err = retained(ctx, w, e.Root); err != nil {
				return err
			}
		}
		if ok && e.Seq <= info.Head {
			tm.oldest, tm.base, tm.baseHash = e.Root, e.Seq, plumbing.NewHash(e.Hash)
			tm.root = lazyDir(plumbing.NewHash(e.Tree))
			if info.Head > e.Seq {
				newer, err := w.History(ctx, 0, int(info.Head-e.Seq))
				if err != nil {
					return err
				}
				for i := len(newer) - 1; i >= 0; i-- {
					if newer[i].Seq > e.Seq {
						tm.commits = append(tm.commits, newer[i])
					}
				}
			}
			r.threads[name] = tm
			return nil
		}
	}
	hist, err := w.History(ctx, 0, 0)
	if err != nil {
		return err
	}
	tm.commits = make([]satchel.Commit, len(hist))
	for i, c := range hist {
		tm.commits[len(hist)-1-i] = c
	}
	if len(tm.commits) > 0 {
		tm.oldest = tm.commits[0].Seq
	}
	r.threads[name] = tm
	return nil
}

// retained reports whether commit seq of the thread is still retained,
// with one read of the log.
func retained(ctx context.Context, w *satchel.Workspace, seq int64) (bool, error) {
	cs, err := w.History(ctx, seq+1, 1)
	if err != nil {
		return false, err
	}
	return len(cs) == 1 && cs[0].Seq == seq, nil
}

// mapFully makes the thread mapped from its oldest retained commit, for
// a request that needs every object (a push, a clone, a fetch from
// before the stored map's start), and keeps it so in this process.
func (r *scopeRepo) mapFully(ctx context.Context, name string) error {
	r.full[name] = true
	if tm := r.threads[name]; tm != nil && tm.base > 0 {
		delete(r.threads, name)
		r.fresh[name] = false
	}
	return r.load(ctx, name)
}

// rebase maps the thread again from commit seq of the stored map (for a
// fetch whose client has it), unless the thread is mapped from before it.
func (r *scopeRepo) rebase(ctx context.Context, name string, seq int64) error {
	tm := r.threads[name]
	if tm == nil || tm.base == 0 || tm.base <= seq {
		return nil
	}
	w, err := r.st.Workspace(ctx, r.scope, name)
	if err != nil {
		return err
	}
	es, err := w.GitMapEntries(ctx, []int64{seq}, nil)
	if err != nil {
		return err
	}
	if len(es) != 1 || es[0].Root != tm.oldest {
		return r.mapFully(ctx, name)
	}
	before, err := w.History(ctx, tm.base+1, int(tm.base-seq))
	if err != nil {
		return err
	}
	var commits []satchel.Commit
	for i := len(before) - 1; i >= 0; i-- {
		if before[i].Seq > seq {
			commits = append(commits, before[i])
		}
	}
	nt := &threadMap{name: name, created: tm.created, oldest: tm.oldest, base: seq, baseHash: plumbing.NewHash(es[0].Hash),
		root: lazyDir(plumbing.NewHash(es[0].Tree)), deps: map[string]bool{}}
	nt.commits = append(commits, tm.commits...)
	r.threads[name] = nt
	return nil
}

// storedHash returns the stored hash of commit seq of a thread mapped
// from the stored map, if it is there for the thread's root.
func (r *scopeRepo) storedHash(ctx context.Context, tm *threadMap, seq int64) (plumbing.Hash, bool, error) {
	if seq == tm.base {
		return tm.baseHash, true, nil
	}
	w, err := r.st.Workspace(ctx, r.scope, tm.name)
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	es, err := w.GitMapEntries(ctx, []int64{seq}, nil)
	if err != nil || len(es) != 1 || es[0].Root != tm.oldest {
		return plumbing.ZeroHash, false, err
	}
	return plumbing.NewHash(es[0].Hash), true, nil
}

// save stores the entries and trees the request mapped of a thread that
// depends on no other (backend.GitMapper; nothing without it). A failure
// is the cache's, not the request's: it is logged.
func (r *scopeRepo) save(ctx context.Context, tm *threadMap) error {
	if tm.saved >= len(tm.hashes) || len(tm.deps) > 0 || !r.st.HasGitMap() {
		return nil
	}
	w, err := r.st.Workspace(ctx, r.scope, tm.name)
	if err != nil {
		return err
	}
	var es []satchel.GitMapEntry
	trees := map[string][]byte{}
	for i := tm.saved; i < len(tm.hashes); i++ {
		es = append(es, satchel.GitMapEntry{Seq: tm.commits[i].Seq, Root: tm.oldest, Hash: tm.hashes[i].String(), Tree: tm.trees[i].String()})
		for _, h := range tm.added[i-tm.saved] {
			o, err := r.objects.EncodedObject(plumbing.TreeObject, h)
			if err != nil {
				return err
			}
			rd, err := o.Reader()
			if err != nil {
				return err
			}
			b, err := io.ReadAll(rd)
			rd.Close()
			if err != nil {
				return err
			}
			trees[h.String()] = b
		}
	}
	if err := w.PutGitMap(ctx, es, trees); err != nil {
		return err
	}
	tm.saved, tm.added = len(tm.hashes), nil
	return nil
}

// readTree reads a stored tree object of a thread.
func (r *scopeRepo) readTree(tm *threadMap) treeReader {
	return func(h plumbing.Hash) ([]byte, error) {
		w, err := r.st.Workspace(r.ctx, r.scope, tm.name)
		if err != nil {
			return nil, err
		}
		ts, err := w.GitTrees(r.ctx, []string{h.String()})
		if err != nil {
			return nil, err
		}
		b, ok := ts[h.String()]
		if !ok {
			return nil, fmt.Errorf("tree %s: %w", h, errFull)
		}
		return b, nil
	}
}

// errStale is a stored tree that is missing: the thread is mapped again
// from its oldest retained commit.

// thread returns a thread's map, loaded, or nil when it does not exist.
func (r *scopeRepo) thread(ctx context.Context, name string) (*threadMap, error) {
	if err := r.load(ctx, name); err != nil {
		return nil, err
	}
	return r.threads[name], nil
}

// head maps a thread up to its head and returns the head's hash (zero
// when the thread has no commits).
func (r *scopeRepo) head(ctx context.Context, name string) (plumbing.Hash, error) {
	tm, err := r.thread(ctx, name)
	if err != nil || tm == nil {
		return plumbing.ZeroHash, err
	}
	if len(tm.commits) == 0 {
		return tm.baseHash, nil
	}
	if tm, err = r.mapUpTo(ctx, tm, len(tm.commits)); err != nil || tm == nil {
		return plumbing.ZeroHash, err
	}
	if len(tm.hashes) == 0 {
		return tm.baseHash, nil
	}
	return tm.hashes[len(tm.hashes)-1], nil
}

// hashOf maps thread name up to commit seq and returns its hash; ok is
// false when the thread or the commit is not there (retention dropped it).
func (r *scopeRepo) hashOf(ctx context.Context, name string, seq int64) (plumbing.Hash, bool, error) {
	tm, err := r.thread(ctx, name)
	if err != nil || tm == nil {
		return plumbing.ZeroHash, false, err
	}
	if seq <= tm.base {
		return r.storedHash(ctx, tm, seq)
	}
	i, found := sort.Find(len(tm.commits), func(j int) int { return cmp.Compare(seq, tm.commits[j].Seq) })
	if !found {
		return plumbing.ZeroHash, false, nil
	}
	if i >= len(tm.hashes) {
		if tm.busy {
			// A cycle, which commits made in time order cannot make.
			return plumbing.ZeroHash, false, nil
		}
		base := tm.base
		if tm, err = r.mapUpTo(ctx, tm, i+1); err != nil || tm == nil {
			return plumbing.ZeroHash, false, err
		}
		if tm.base != base { // mapped again from the oldest
			return r.hashOf(ctx, name, seq)
		}
	}
	return tm.hashes[i], true, nil
}

// mapUpTo maps the thread's first n commits (after its base). When the
// stored map cannot serve (a tree of it missing, a merge after it), it
// maps the thread again from its oldest retained commit, up to its head,
// and returns that map.
func (r *scopeRepo) mapUpTo(ctx context.Context, tm *threadMap, n int) (*threadMap, error) {
	if len(tm.hashes) >= n {
		return tm, nil
	}
	err := r.mapRange(ctx, tm, n)
	if errors.Is(err, errFull) && tm.base > 0 {
		if err := r.mapFully(ctx, tm.name); err != nil {
			return nil, err
		}
		if tm = r.threads[tm.name]; tm == nil {
			return nil, nil
		}
		err = r.mapRange(ctx, tm, len(tm.commits))
	}
	if err != nil {
		return nil, err
	}
	if err := r.save(ctx, tm); err != nil {
		r.log("storing the git map", err)
	}
	return tm, nil
}

func (r *scopeRepo) mapRange(ctx context.Context, tm *threadMap, n int) error {
	tm.busy = true
	defer func() { tm.busy = false }()
	w, err := r.st.Workspace(ctx, r.scope, tm.name)
	if err != nil {
		return err
	}
	for i := len(tm.hashes); i < n; i++ {
		if err := r.mapOne(ctx, w, tm, i); err != nil {
			return err
		}
	}
	return nil
}

// errFull is what the stored map cannot serve: the thread is mapped
// again from its oldest retained commit.
var errFull = errors.New("the stored git map cannot serve the thread")

// mapOne maps commit i of the thread, the ones before it being mapped.
func (r *scopeRepo) mapOne(ctx context.Context, w *satchel.Workspace, tm *threadMap, i int) error {
	c := tm.commits[i]
	var parents []plumbing.Hash
	if i > 0 {
		parents = append(parents, tm.hashes[i-1])
	} else if tm.base > 0 {
		parents = append(parents, tm.baseHash)
	} else if src, seq, ok := forkSource(c); ok {
		tm.deps[src] = true
		// The source's commits are this thread's ancestors, sent with
		// it: the source is mapped from its oldest retained commit too.
		if err := r.mapFully(ctx, src); err != nil {
			return err
		}
		h, ok, err := r.hashOf(ctx, src, seq)
		if err != nil {
			return err
		}
		if ok {
			parents = append(parents, h)
		}
	}
	if c.Parent != nil {
		if tm.base > 0 {
			// The merged thread's commits are to be sent too: map
			// everything.
			return errFull
		}
		tm.deps[c.Parent.Thread] = true
		if err := r.mapFully(ctx, c.Parent.Thread); err != nil {
			return err
		}
		h, ok, err := r.hashOf(ctx, c.Parent.Thread, c.Parent.Seq)
		if err != nil {
			return err
		}
		if ok {
			parents = append(parents, h)
		}
	}
	snap, err := w.At(ctx, strconv.FormatInt(c.Seq, 10))
	if err != nil {
		return err
	}
	var objs []plumbing.Hash
	if tm.root == nil {
		tm.root = newDir()
		err = snap.Walk(ctx, func(path, content string) error {
			h, err := putBlob(r.objects, content)
			if err != nil {
				return err
			}
			objs = append(objs, h)
			return tm.root.set(nil, path, h)
		})
	} else {
		err = r.applyChanges(ctx, w, tm, snap, &objs)
	}
	if err != nil {
		return err
	}
	var trees []plumbing.Hash
	tree, err := tm.root.encode(r.objects, &objs, &trees)
	if err != nil {
		return err
	}
	body := commitBody(r.scope, c)
	h, err := putRaw(r.objects, plumbing.CommitObject, commitObject(tree, parents, body))
	if err != nil {
		return err
	}
	objs = append(objs, h)
	r.nodes[h] = &node{hash: h, parents: parents, objs: objs}
	tm.hashes = append(tm.hashes, h)
	tm.trees = append(tm.trees, tree)
	tm.added = append(tm.added, trees)
	tm.snap = snap
	return nil
}

// applyChanges brings tm.root from tm.snap (base's, read now when nil)
// to snap.
func (r *scopeRepo) applyChanges(ctx context.Context, w *satchel.Workspace, tm *threadMap, snap *satchel.Snapshot, objs *[]plumbing.Hash) error {
	if tm.snap == nil {
		s, err := w.At(ctx, strconv.FormatInt(tm.base, 10))
		if err != nil {
			return err
		}
		tm.snap = s
	}
	changes, err := r.st.DiffSnapshots(ctx, tm.snap, snap)
	if err != nil {
		return err
	}
	read := r.readTree(tm)
	var fs *satchel.FS
	for _, ch := range changes {
		if ch.Kind == "removed" {
			if _, err := tm.root.remove(read, ch.Path); err != nil {
				return err
			}
			continue
		}
		if fs == nil {
			fs = snap.FS(ctx)
		}
		b, err := fs.ReadFile(ch.Path)
		if err != nil {
			return err
		}
		h, err := putBlob(r.objects, string(b))
		if err != nil {
			return err
		}
		*objs = append(*objs, h)
		if err := tm.root.set(read, ch.Path, h); err != nil {
			return err
		}
	}
	return nil
}

// forkSource reads a fork's first commit: "fork of THREAD@SEQ".
func forkSource(c satchel.Commit) (string, int64, bool) {
	if c.Op != "fork" || c.Seq != 1 {
		return "", 0, false
	}
	rest, ok := strings.CutPrefix(c.Summary, "fork of ")
	if !ok {
		return "", 0, false
	}
	i := strings.LastIndexByte(rest, '@')
	if i < 0 || satchel.ValidThreadName(rest[:i]) != nil {
		return "", 0, false
	}
	seq, err := strconv.ParseInt(rest[i+1:], 10, 64)
	if err != nil || seq < 1 {
		return "", 0, false
	}
	return rest[:i], seq, true
}

// commitObject is a commit object's content: its tree and parent lines,
// then body (the rest: author, committer, message).
func commitObject(tree plumbing.Hash, parents []plumbing.Hash, body string) []byte {
	var b strings.Builder
	b.WriteString("tree " + tree.String() + "\n")
	for _, p := range parents {
		b.WriteString("parent " + p.String() + "\n")
	}
	b.WriteString(body)
	return []byte(b.String())
}

// commitBody is what follows a commit object's parent lines: the git
// commit it came from, or the mapping of the satchel commit.
func commitBody(scope string, c satchel.Commit) string {
	if c.Git != nil && c.Git.Object != "" {
		return c.Git.Object
	}
	name := c.Agent
	if name == "" {
		name = "satchel"
	}
	sig := object.Signature{Name: name, Email: name + "@" + scope + ".satchel", When: c.Time.UTC()}
	var b strings.Builder
	b.WriteString("author ")
	writeSig(&b, sig)
	b.WriteString("\ncommitter ")
	writeSig(&b, sig)
	b.WriteString("\n\n")
	b.WriteString(c.Summary)
	b.WriteString("\n\nSatchel-Commit: " + strconv.FormatInt(c.Seq, 10) + "\n")
	if c.Via != "" {
		b.WriteString("Satchel-Tool: " + oneLine(c.Via) + "\n")
	}
	if c.Client != "" {
		cl := c.Client
		if c.ClientVersion != "" {
			cl += " " + c.ClientVersion
		}
		b.WriteString("Satchel-Client: " + oneLine(cl) + "\n")
	}
	return b.String()
}

// writeSig writes "Name <email> SECONDS +0000" as git does.
func writeSig(b *strings.Builder, s object.Signature) {
	fmt.Fprintf(b, "%s <%s> %d +0000", oneLine(s.Name), oneLine(s.Email), s.When.Unix())
}

// oneLine keeps agent-chosen text (a client's name) on its line: a
// newline would start a header or trailer of its own.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '<' || r == '>' || r == 0 {
			return ' '
		}
		return r
	}, s)
}
