package gitrepo

import (
	"context"
	"fmt"
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
	// commits are the thread's retained commits, oldest first, as last
	// read; done how many of them are mapped (hashes[:done]).
	commits []satchel.Commit
	hashes  []plumbing.Hash
	// root and snap are the tree and snapshot of the last mapped commit.
	root *dir
	snap *satchel.Snapshot
	// deps are the threads whose hashes this one's depend on.
	deps map[string]bool
	busy bool
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
}

func newScopeRepo(st *satchel.Store, scope string) *scopeRepo {
	return &scopeRepo{st: st, scope: scope, objects: memory.NewStorage(), nodes: map[plumbing.Hash]*node{}, threads: map[string]*threadMap{}}
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
	names := make([]string, 0, len(r.threads))
	for name := range r.threads {
		names = append(names, name)
	}
	for _, name := range names {
		tm := r.threads[name]
		if len(tm.hashes) == 0 {
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

// load reads a thread's retained commits once per refresh. A mapped
// thread whose mapped commits are no longer all there (or that was made
// anew) is dropped from r.threads, which refresh sees.
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
	hist, err := w.History(ctx, 0, 0)
	if err != nil {
		return err
	}
	commits := make([]satchel.Commit, len(hist))
	for i, c := range hist {
		commits[len(hist)-1-i] = c
	}
	if tm != nil {
		same := tm.created.Equal(info.Created) && len(commits) >= len(tm.hashes)
		for i := 0; same && i < len(tm.hashes); i++ {
			same = commits[i].Seq == tm.commits[i].Seq
		}
		if same {
			tm.commits = commits
			return nil
		}
		delete(r.threads, name)
		return nil
	}
	r.threads[name] = &threadMap{name: name, created: info.Created, commits: commits, deps: map[string]bool{}}
	return nil
}

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
	if err != nil || tm == nil || len(tm.commits) == 0 {
		return plumbing.ZeroHash, err
	}
	if err := r.mapUpTo(ctx, tm, len(tm.commits)); err != nil {
		return plumbing.ZeroHash, err
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
	i := -1
	for j := range tm.commits {
		if tm.commits[j].Seq == seq {
			i = j
			break
		}
	}
	if i < 0 {
		return plumbing.ZeroHash, false, nil
	}
	if i >= len(tm.hashes) {
		if tm.busy {
			// A cycle, which commits made in time order cannot make.
			return plumbing.ZeroHash, false, nil
		}
		if err := r.mapUpTo(ctx, tm, i+1); err != nil {
			return plumbing.ZeroHash, false, err
		}
	}
	return tm.hashes[i], true, nil
}

// mapUpTo maps the thread's first n commits.
func (r *scopeRepo) mapUpTo(ctx context.Context, tm *threadMap, n int) error {
	if len(tm.hashes) >= n {
		return nil
	}
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

// mapOne maps commit i of the thread, the ones before it being mapped.
func (r *scopeRepo) mapOne(ctx context.Context, w *satchel.Workspace, tm *threadMap, i int) error {
	c := tm.commits[i]
	var parents []plumbing.Hash
	if i > 0 {
		parents = append(parents, tm.hashes[i-1])
	} else if src, seq, ok := forkSource(c); ok {
		tm.deps[src] = true
		h, ok, err := r.hashOf(ctx, src, seq)
		if err != nil {
			return err
		}
		if ok {
			parents = append(parents, h)
		}
	}
	if c.Parent != nil {
		tm.deps[c.Parent.Thread] = true
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
			tm.root.set(path, h)
			return nil
		})
	} else {
		err = r.applyChanges(ctx, tm, snap, &objs)
	}
	if err != nil {
		return err
	}
	tree, err := tm.root.encode(r.objects, &objs)
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
	tm.snap = snap
	return nil
}

// applyChanges brings tm.root from tm.snap to snap.
func (r *scopeRepo) applyChanges(ctx context.Context, tm *threadMap, snap *satchel.Snapshot, objs *[]plumbing.Hash) error {
	changes, err := r.st.DiffSnapshots(ctx, tm.snap, snap)
	if err != nil {
		return err
	}
	var fs *satchel.FS
	for _, ch := range changes {
		if ch.Kind == "removed" {
			tm.root.remove(ch.Path)
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
		tm.root.set(ch.Path, h)
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
