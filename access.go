package satchel

import (
	"context"
	"errors"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/internal/engine"
	"github.com/satchel-dev/satchel/internal/errs"
	"github.com/satchel-dev/satchel/internal/filerules"
	"github.com/satchel-dev/satchel/internal/vpath"
)

// File rules say who may touch which files (docs/security.md): an ordered
// list of [GLOB, ACCESS] pairs, the first pair whose glob matches a path
// deciding its access, a path no pair matches having none. An agent's
// rules come from its agent.json ("files"), a token's from `satchel token
// create --files` or --read-only, and `satchel serve --read-only` makes
// every caller read-only. A workspace opened with several sets of rules
// gives each path the strictest of their accesses, so a token narrows its
// agent's rules and never widens them.
//
// The rules are decided here, in the Workspace, once for every surface:
// the MCP tools and resources, Lua's store.*, merge, restore, fork and the
// inspector all read and write through a Workspace.
//
//   - A path of access none is invisible: a read answers `file not found:
//     PATH` as for a missing file, and listings (glob, grep, list, stat,
//     diff, history) leave it out, so its name never shows.
//   - A path of access read refuses changes with ErrAccess: `notes/a.md is
//     read-only for agent research`.
//   - A restore or a merge that would change a path the caller may not
//     write is refused, naming the paths it may see.

// FileAccess is what the caller may do with a path: AccessNone, AccessRead
// or AccessRW (String: "none", "read", "rw"). The stricter of two is the
// smaller.
type FileAccess = filerules.Access

// The three accesses.
const (
	AccessNone = filerules.None
	AccessRead = filerules.Read
	AccessRW   = filerules.RW
)

// FileRule is one [GLOB, ACCESS] pair of FileRules.
type FileRule = filerules.Rule

// FileRules is an ordered list of [GLOB, ACCESS] pairs. Its Of method
// gives a path's access; String gives the flag form
// ("notes/**=rw,**=read"); it marshals to and from the JSON form of
// agent.json ([["notes/**", "rw"], ["**", "read"]]). A nil FileRules is no
// rules (every path rw); Shadowed lists the pairs an earlier pair makes
// dead.
type FileRules = filerules.Rules

// ParseFileRules reads the flag form of file rules: GLOB=ACCESS pairs
// separated by commas, ACCESS one of rw, read, none, such as
// "secrets/**=none,notes/**=rw,**=read". A bad pair is refused with kind
// ErrInvalidArgument naming it.
func ParseFileRules(s string) (FileRules, error) { return filerules.Parse(s) }

// ParseFileRulesJSON reads the JSON form of file rules, agent.json's
// "files": [["secrets/**", "none"], ["**", "read"]].
func ParseFileRulesJSON(data []byte) (FileRules, error) { return filerules.ParseJSON(data) }

// NewFileRule makes one pair, compiling its glob (satchel's glob grammar).
func NewFileRule(glob string, a FileAccess) (FileRule, error) { return filerules.NewRule(glob, a) }

// gate is the file rules a workspace enforces: every set narrows, and
// readOnly caps every path at read. A nil gate allows everything.
type gate struct {
	sets     []FileRules
	readOnly bool
	hides    bool // some path may be none: reads go through hiddenView

	// dirs caches the rules of each directory met (gateDir), up to
	// maxGateDirs of them: a path's check is then a lookup and the pairs
	// that may match some files of its directory only. The map is
	// replaced, never changed (reads take no lock); mu orders writers.
	mu   sync.Mutex
	dirs atomic.Pointer[map[string]*gateDir]
}

// maxGateDirs bounds the directories a gate keeps the rules of; past it,
// the paths of other directories are checked against every pair.
const maxGateDirs = 1024

func (g *gate) clone() *gate {
	if g == nil {
		return &gate{}
	}
	return &gate{sets: append([]FileRules(nil), g.sets...), readOnly: g.readOnly, hides: g.hides}
}

// gateDir is the rules of a gate for the files of one directory.
type gateDir struct {
	sets     []filerules.Dir
	top      FileAccess // read when read-only, else rw
	constant bool       // every file of the directory has access c
	c        FileAccess
}

func (d *gateDir) access(path string) FileAccess {
	if d.constant {
		return d.c
	}
	a := d.top
	for i := range d.sets {
		if x := d.sets[i].Of(path); x < a {
			if a = x; a == AccessNone {
				break
			}
		}
	}
	return a
}

// dirOf returns the rules of the gate for the files of dir.
// It returns nil when the cache is full and dir is not in it.
func (g *gate) dirOf(dir string) *gateDir {
	m := g.dirs.Load()
	if m != nil {
		if d, ok := (*m)[dir]; ok {
			return d
		}
		if len(*m) >= maxGateDirs {
			return nil
		}
	}
	d := g.newDir(dir)
	g.mu.Lock()
	defer g.mu.Unlock()
	old := g.dirs.Load()
	n := 0
	if old != nil {
		n = len(*old)
	}
	if n < maxGateDirs {
		nm := make(map[string]*gateDir, n+1)
		if old != nil {
			for k, v := range *old {
				nm[k] = v
			}
		}
		nm[strings.Clone(dir)] = d
		g.dirs.Store(&nm)
	}
	return d
}

// slow is the access of path checked against every pair (a directory
// the cache has no room for).
func (g *gate) slow(path string) FileAccess {
	a := AccessRW
	if g.readOnly {
		a = AccessRead
	}
	for _, s := range g.sets {
		a = min(a, s.Of(path))
	}
	return a
}

// newDir works out the rules of the gate for the files of dir.
func (g *gate) newDir(dir string) *gateDir {
	d := &gateDir{top: AccessRW, constant: true}
	if g.readOnly {
		d.top = AccessRead
	}
	d.c = d.top
	for _, s := range g.sets {
		fd := s.ForDir(dir)
		d.sets = append(d.sets, fd)
		d.constant = d.constant && len(fd.Maybe) == 0
		d.c = min(d.c, fd.Rest)
	}
	return d
}

// dirName is the directory of path ("" at the root).
func dirName(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		return path[:i]
	}
	return ""
}

// scanGate checks the paths of one scan, which come directory by
// directory: it keeps the rules of the last directory.
type scanGate struct {
	g   *gate
	dir string
	d   *gateDir
}

func (s *scanGate) visible(path string) bool {
	if dir := dirName(path); s.d == nil || dir != s.dir {
		d := s.g.dirOf(dir)
		if d == nil {
			return s.g.slow(path) != AccessNone
		}
		s.dir, s.d = dir, d
	}
	return s.d.access(path) != AccessNone
}

// WithFileRules makes the workspace enforce file rules: each set given
// (nil ones are ignored) narrows the access of every path, the strictest
// of all the sets deciding. Servers pass the agent's rules and the
// token's.
func WithFileRules(rules ...FileRules) WorkspaceOption {
	return func(w *Workspace) {
		g := w.gate.clone()
		for _, r := range rules {
			if r != nil {
				g.sets = append(g.sets, r)
				g.hides = g.hides || !r.HidesNothing()
			}
		}
		if len(g.sets) > 0 || g.readOnly {
			w.gate = g
		}
	}
}

// ReadOnlyFiles makes every path of the workspace at most readable: every
// change is refused with ErrAccess (`PATH is read-only for agent A`),
// restore and merge included.
func ReadOnlyFiles() WorkspaceOption {
	return func(w *Workspace) {
		g := w.gate.clone()
		g.readOnly = true
		w.gate = g
	}
}

func (g *gate) access(path string) FileAccess {
	if g == nil {
		return AccessRW
	}
	if d := g.dirOf(dirName(path)); d != nil {
		return d.access(path)
	}
	return g.slow(path)
}

// Access returns what the workspace's caller may do with path under the
// file rules it enforces (AccessRW for every path when it enforces none).
func (w *Workspace) Access(path string) FileAccess { return w.gate.access(path) }

// ReadsEverything reports whether no path the caller could ask for is
// hidden from it (its rules give every path read or rw). A server that
// hands out whole trees (a git clone) refuses callers for whom it is
// false.
func (w *Workspace) ReadsEverything() bool { return w.gate == nil || !w.gate.hides }

// FileRules returns the rule sets the workspace enforces and whether it is
// read-only (ReadOnlyFiles), for tools that show them.
func (w *Workspace) FileRules() (sets []FileRules, readOnly bool) {
	if w.gate == nil {
		return nil, false
	}
	return append([]FileRules(nil), w.gate.sets...), w.gate.readOnly
}

// who names the caller in a refusal: "agent A", or "this caller" for a
// workspace without an agent.
func (w *Workspace) who() string {
	if w.actor.Agent != "" {
		return "agent " + w.actor.Agent
	}
	return "this caller"
}

// The reasons of satchel_access_refusals_total.
const (
	refusedReadOnly = "read_only" // a change to a path the caller may only read
	refusedHidden   = "hidden"    // a read or a change of a path hidden from the caller
)

// refused counts and logs a refusal.
func (w *Workspace) refused(op, path, reason string) {
	w.s.refusals.add(w.actor.Agent, reason)
	w.s.logger().LogAttrs(context.Background(), slog.LevelWarn, "file access refused",
		slog.String("scope", w.scope), slog.String("thread", w.thread), slog.String("agent", w.actor.Agent),
		slog.String("credential", w.actor.Credential), slog.String("op", op), slog.String("path", path), slog.String("reason", reason))
}

// refusal is a refusal of the file rules: the error the caller sees,
// and what the count and the log of it say. A batch's function may run
// more than once (a retry on the backend's head), so refusals made in it
// are counted once, when the mutation returns (countRefusal).
type refusal struct {
	err              error // an *errs.Error
	op, path, reason string
}

func (r *refusal) Error() string { return r.err.Error() }
func (r *refusal) Unwrap() error { return r.err }

// countRefusal counts and logs err when it is a refusal of the rules.
func (w *Workspace) countRefusal(err error) {
	var r *refusal
	if errors.As(err, &r) {
		w.refused(r.op, r.path, r.reason)
	}
}

// canWrite refuses a change (op) of path unless the caller may write it.
// A hidden path is refused without a word on whether it exists.
func (w *Workspace) canWrite(op, path string) error {
	if w.gate == nil {
		return nil
	}
	switch w.gate.access(path) {
	case AccessRW:
		return nil
	case AccessRead:
		return &refusal{errs.New(errs.ErrAccess, "%s is read-only for %s", path, w.who()), op, path, refusedReadOnly}
	}
	return &refusal{errs.New(errs.ErrAccess, "%s is hidden from %s: it cannot be written", path, w.who()), op, path, refusedHidden}
}

// canChange is canWrite for a change of an existing file (an edit, the
// source of a move): a hidden path answers as a missing file.
func (w *Workspace) canChange(op, path string) error {
	if w.gate != nil && w.gate.access(path) == AccessNone {
		return &refusal{errs.New(errs.ErrNotFound, "file not found: %s", path), op, path, refusedHidden}
	}
	return w.canWrite(op, path)
}

// canChangeAll refuses what (a restore, a merge) when it would change a
// path the caller may not write, naming those it may see.
func (w *Workspace) canChangeAll(op, what string, paths []string) error {
	if w.gate == nil {
		return nil
	}
	var named []string
	hidden := false
	for _, p := range paths {
		switch w.gate.access(p) {
		case AccessRead:
			named = append(named, p)
		case AccessNone:
			hidden = true
		}
	}
	if len(named) == 0 && !hidden {
		return nil
	}
	reason := refusedReadOnly
	if len(named) == 0 {
		reason = refusedHidden
	}
	sort.Strings(named)
	msg := what + " would change files " + w.who() + " may not write: " + strings.Join(named, ", ")
	switch {
	case hidden && len(named) == 0:
		msg = what + " would change files hidden from " + w.who()
	case hidden:
		msg += ", and files hidden from it"
	}
	return &refusal{errs.New(errs.ErrAccess, "%s", msg), op, strings.Join(named, ","), reason}
}

// readView is the view the workspace's reads go through: v itself, or v
// without the paths the caller may not see.
func (w *Workspace) filter(v engine.View) engine.View {
	if w.gate == nil || !w.gate.hides {
		return v
	}
	return &hiddenView{v: v, w: w}
}

// hiddenView is a view without the paths its workspace's rules hide: Get
// finds none of them, and the scans skip them.
type hiddenView struct {
	v engine.View
	w *Workspace
}

func (h *hiddenView) visible(path string) bool { return h.w.gate.access(path) != AccessNone }

func (h *hiddenView) Get(ctx context.Context, path string) (engine.Entry, bool, error) {
	if !h.visible(path) {
		h.w.refused("read", path, refusedHidden)
		return engine.Entry{}, false, nil
	}
	return h.v.Get(ctx, path)
}

func (h *hiddenView) Content(ctx context.Context, ent *engine.Entry) (string, error) {
	return h.v.Content(ctx, ent)
}

func (h *hiddenView) Scan(ctx context.Context, from, to string, fn func(*engine.Entry) (bool, error)) error {
	sg := scanGate{g: h.w.gate}
	return h.v.Scan(ctx, from, to, func(e *engine.Entry) (bool, error) {
		if !sg.visible(e.Path) {
			return true, nil
		}
		return fn(e)
	})
}

func (h *hiddenView) ScanFiles(ctx context.Context, from, to string, want func(string) bool, fn func(*engine.Entry) (bool, error)) error {
	// A hidden file is skipped before its content is read; want is left
	// as it is (the engine reads ahead best without one).
	sg := scanGate{g: h.w.gate}
	return h.v.ScanFiles(ctx, from, to, want, func(e *engine.Entry) (bool, error) {
		if !sg.visible(e.Path) {
			return true, nil
		}
		return fn(e)
	})
}

func (h *hiddenView) ScanPaths(ctx context.Context, from, to string, fn func(string) (bool, error)) error {
	sg := scanGate{g: h.w.gate}
	return h.v.ScanPaths(ctx, from, to, func(p string) (bool, error) {
		if !sg.visible(p) {
			return true, nil
		}
		return fn(p)
	})
}

// Totals counts the visible files only when some are hidden (a scan).
func (h *hiddenView) Totals(ctx context.Context) (files, bytes int64, err error) {
	err = h.Scan(ctx, "", "", func(e *engine.Entry) (bool, error) {
		files++
		bytes += e.Size
		return true, nil
	})
	return files, bytes, err
}

// AccessRefusal counts the refusals of file rules for one agent ("" for a
// caller without one) and reason: "read_only" (a change to a path it may
// only read) or "hidden" (a read or change of a path hidden from it).
type AccessRefusal struct {
	Agent  string `json:"agent"`
	Reason string `json:"reason"`
	Count  int64  `json:"count"`
}

// refusalCounts counts a store's refusals since it was opened.
type refusalCounts struct{ m sync.Map } // [2]string{agent, reason} -> *atomic.Int64

func (r *refusalCounts) add(agent, reason string) {
	k := [2]string{agent, reason}
	c, ok := r.m.Load(k)
	if !ok {
		c, _ = r.m.LoadOrStore(k, new(atomic.Int64))
	}
	c.(*atomic.Int64).Add(1)
}

// AccessRefusals returns the refusals of file rules made through the
// store since it was opened, by agent then reason (what /metrics serves
// as satchel_access_refusals_total{agent,reason}).
func (s *Store) AccessRefusals() []AccessRefusal {
	var out []AccessRefusal
	s.refusals.m.Range(func(k, v any) bool {
		kk := k.([2]string)
		out = append(out, AccessRefusal{Agent: kk[0], Reason: kk[1], Count: v.(*atomic.Int64).Load()})
		return true
	})
	sort.Slice(out, func(i, j int) bool {
		if out[i].Agent != out[j].Agent {
			return out[i].Agent < out[j].Agent
		}
		return out[i].Reason < out[j].Reason
	})
	return out
}

// keepGate is a WorkspaceOption giving a workspace w's file rules (a fork
// keeps its parent's).
func (w *Workspace) keepGate(o *Workspace) { o.gate = w.gate }

// canRestore refuses a restore to src that would change a path the caller
// may not write.
func (w *Workspace) canRestore(ctx context.Context, ref string, src backend.Commit) error {
	if w.gate == nil {
		return nil
	}
	head, _, err := w.head(ctx)
	if err != nil {
		return err
	}
	at, err := w.s.eng.At(ctx, src)
	if err != nil {
		return err
	}
	err = w.canChangeTrees(ctx, "restore", "restore to "+w.srcName(ref, src), head, at)
	w.countRefusal(err)
	return err
}

// canChangeTrees refuses making tree b the head when tree a is, if that
// changes a path the caller may not write.
func (w *Workspace) canChangeTrees(ctx context.Context, op, what string, a, b *engine.Snapshot) error {
	changes, err := w.s.eng.Diff(ctx, a, b)
	if err != nil {
		return err
	}
	paths := make([]string, len(changes))
	for i, c := range changes {
		paths[i] = c.Path
	}
	return w.canChangeAll(op, what, paths)
}

// canPublish refuses publishing src (of thread from) onto w's thread id
// when that would change a path the caller may not write.
func (w *Workspace) canPublish(ctx context.Context, id int64, from string, src backend.Commit) error {
	head, _, _, err := w.s.eng.Head(ctx, id)
	if err != nil {
		return err
	}
	at, err := w.s.eng.At(ctx, src)
	if err != nil {
		return err
	}
	err = w.canChangeTrees(ctx, "publish", "publishing "+from+" onto "+w.thread, head, at)
	w.countRefusal(err)
	return err
}

// oneOps are the ops whose summary is always the store's note of the
// commit's one operation (opNote): "op path", or "move path -> to".
var oneOps = map[string]bool{"write": true, "append": true, "edit": true, "delete": true, "move": true}

// fixedOps are the ops whose summary the store always writes whole, of
// threads, commits and checkpoints, never of paths: "merged T@N", "fork
// of T@N", "restore to REF", "checkpoint NAME", "dropped by retention".
var fixedOps = map[string]bool{"merge": true, "fork": true, "restore": true, "checkpoint": true, "import": true}

// redact returns c, whose metadata says own (commitMeta.Own), with what
// its summary may say of paths hidden from the caller left out; ok is
// false when the summary named hidden paths only (the commit touched
// hidden files only: a history leaves it out), and c's summary is then
// "". This is the one rule of every view of commits (a history, a file's
// history, blame, the audit): for a caller whose rules hide no path the
// summary is kept whole. Else a summary is shown only as far as the store
// wrote it, never a caller's text, whatever that looks like (decision
// 0156):
//   - the note of one operation (oneOps) is kept when it names paths the
//     caller sees, a list of operations (a batch's or a spill's, when
//     own) keeps the notes on such paths; a note cut short ("…", kept as
//     the summary's end) is dropped;
//   - an archive entry keeps what comes before ": " ("review R
//     rejected"), not the reason or the error after it;
//   - a shell commit's summary, a line of its script, is cut to "sh";
//   - the fixed summaries (fixedOps, a publish's when own) are whole;
//   - any other (Batch.Summarize's text, a git commit's subject, a
//     publish's caller's summary, a list the store did not mark own, an
//     op the store does not know) is "".
func (w *Workspace) redact(c Commit, own bool) (Commit, bool) {
	if w.gate == nil || !w.gate.hides || c.Summary == "" {
		return c, true
	}
	var notes []string
	body, cut := strings.CutSuffix(c.Summary, "…")
	switch {
	case c.Op == "sh":
		c.Summary = "sh"
		return c, true
	case c.Op == opArchive || c.Op == opUnarchive:
		c.Summary, _, _ = strings.Cut(c.Summary, ": ")
		return c, true
	case fixedOps[c.Op] || c.Op == "publish" && own:
		return c, true
	case oneOps[c.Op]:
		if !cut {
			notes = []string{body}
		}
	case (c.Op == "batch" || c.Op == "spill") && own:
		notes = strings.Split(body, "; ")
		if cut {
			notes = notes[:len(notes)-1] // the note cut short
		}
	default:
		c.Summary = ""
		return c, true
	}
	kept := notes[:0]
	for _, p := range notes {
		from, to, move, ok := parseNote(p)
		if !ok {
			// Not a note the store wrote (an imported commit's text):
			// the commit may have changed what the caller sees.
			c.Summary = ""
			return c, true
		}
		if w.gate.access(from) == AccessNone || move && w.gate.access(to) == AccessNone {
			continue
		}
		kept = append(kept, p)
	}
	c.Summary = strings.Join(kept, "; ")
	if cut {
		c.Summary += "…"
	}
	return c, len(kept) > 0 || cut
}

// redactOf is redact of commit c (with its checkpoint names), read from
// its metadata.
func (w *Workspace) redactOf(c backend.Commit, names []string) (Commit, bool) {
	m := commitMetaOf(c)
	return w.redact(m.commit(c, names), m.Own)
}

// noteOps are the ops a note of a summary starts with (opNote).
var noteOps = map[string]bool{"write": true, "append": true, "edit": true, "delete": true, "move": true}

// parseNote reads a note of a summary the store wrote ("op path", "move
// path -> to"); ok is false for other text, and for a move whose paths
// hold " -> " (which of them is which cannot be told).
func parseNote(p string) (from, to string, move, ok bool) {
	op, rest, _ := strings.Cut(p, " ")
	from, to, move = strings.Cut(rest, " -> ")
	ok = noteOps[op] && move == (op == "move") && vpath.Validate(from) == nil && (!move || vpath.Validate(to) == nil && !strings.Contains(to, " -> "))
	return from, to, move, ok
}

// hiddenIn reports whether the file rules of the workspace s was taken
// from hide path.
func hiddenIn(s *Snapshot, path string) bool {
	h, ok := s.view.(*hiddenView)
	return ok && !h.visible(path)
}

// FileOptions returns the workspace options of the token's file rules
// (Files and ReadOnly): servers open the workspaces of the token's calls
// with them, after their agent's rules (WithFileRules).
func (t Token) FileOptions() []WorkspaceOption {
	var opts []WorkspaceOption
	if t.Files != "" {
		r, err := ParseFileRules(t.Files)
		if err != nil {
			r = FileRules{} // rules that do not parse hide everything
		}
		opts = append(opts, WithFileRules(r))
	}
	if t.ReadOnly {
		opts = append(opts, ReadOnlyFiles())
	}
	return opts
}

// SetLogger sends the store's logs (the refusals of file rules, at
// WARN) to l. A store without one logs nothing: servers pass their own
// (satchel serve and satchel ui do), and a caller that is refused is told
// so by the error either way.
func (s *Store) SetLogger(l *slog.Logger) { s.log.Store(l) }

// discardLog is the logger of a store without SetLogger's.
var discardLog = slog.New(slog.DiscardHandler)

func (s *Store) logger() *slog.Logger {
	if l := s.log.Load(); l != nil {
		return l
	}
	return discardLog
}
