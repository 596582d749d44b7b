package satchel

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/internal/errs"
)

// The lifecycle of scopes and threads (docs/operations.md, "Scopes and
// lifecycle"): what a scope holds (ScopeUsage), purging a scope, archiving
// a thread, and the retention policy a scope's new threads take.

// ScopeInfo is a scope with its usage.
type ScopeInfo struct {
	Scope string `json:"scope"`
	// Threads counts the scope's threads (spill areas are part of theirs).
	Threads int `json:"threads"`
	// Archived counts the archived ones among them.
	Archived int `json:"archived"`
	// Files and LiveBytes add up the heads of the threads (spill areas
	// included): their files, and their bytes as Limits.MaxBytes counts
	// them (every path and content as a JSON string).
	Files     int64 `json:"files"`
	LiveBytes int64 `json:"live_bytes"`
	// Documents counts the scope's documents, expired ones not yet swept
	// included; absent when the backend cannot count them
	// (backend.DocCounter).
	Documents *int64 `json:"documents,omitempty"`
	// LastActivity is the newest of the heads' commit times and the
	// documents' update times (zero: nothing yet).
	LastActivity time.Time `json:"last_activity,omitzero"`
}

// ScopeUsage lists every scope that has threads or documents, by name,
// with its usage (ScopeNames lists only the names of those with threads).
func (s *Store) ScopeUsage(ctx context.Context) ([]ScopeInfo, error) {
	return s.scopeUsageAll(ctx, nil)
}

// ScopeUsageAs is ScopeUsage as an agent's view has it: only the
// documents of the stores p grants agent read access to (as Collection
// with AsAgent checks it; none without p) are counted, and only their
// update times are a scope's last activity, so a scope that holds only
// documents the agent may not read is not listed unless it has threads.
// With a backend that does not count each store's documents apart
// (backend.ScopeDocs's Store), no document is counted.
func (s *Store) ScopeUsageAs(ctx context.Context, p *Project, agent string) ([]ScopeInfo, error) {
	return s.scopeUsageAll(ctx, func(store string) bool { return store != "" && p.agentReads(agent, store) })
}

// scopeUsageAll is ScopeUsage counting the documents of the stores reads
// allows (nil: every store).
func (s *Store) scopeUsageAll(ctx context.Context, reads func(store string) bool) ([]ScopeInfo, error) {
	names, err := s.b.Scopes(ctx)
	if err != nil {
		return nil, err
	}
	docs, docsKnown, err := s.docUsage(ctx, reads)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, n := range names {
		seen[n] = true
	}
	for n := range docs {
		if !seen[n] {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	out := make([]ScopeInfo, 0, len(names))
	for _, n := range names {
		u, err := s.scopeUsage(ctx, n, docs[n], docsKnown)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, nil
}

// ScopeInfo returns one scope's usage (all zero for a scope that holds
// nothing).
func (s *Store) ScopeInfo(ctx context.Context, scope string) (ScopeInfo, error) {
	if err := ValidScope(scope); err != nil {
		return ScopeInfo{}, err
	}
	docs, known, err := s.docUsage(ctx, nil)
	if err != nil {
		return ScopeInfo{}, err
	}
	return s.scopeUsage(ctx, scope, docs[scope], known)
}

// docUsage returns the documents of every scope, of the stores reads
// allows (nil: every store), when the backend counts them. This is the
// one place that decides which documents a caller's count holds.
func (s *Store) docUsage(ctx context.Context, reads func(store string) bool) (map[string]backend.ScopeDocs, bool, error) {
	dc, ok := backend.As[backend.DocCounter](s.b)
	if !ok {
		return nil, false, nil
	}
	l, err := dc.DocsByScope(ctx)
	if err != nil {
		return nil, false, err
	}
	m := make(map[string]backend.ScopeDocs, len(l))
	allowed := map[string]bool{}
	for _, d := range l {
		if d.Scope == "" {
			continue // a shared store's documents are no scope's
		}
		if reads != nil {
			ok, known := allowed[d.Store]
			if !known {
				ok = reads(d.Store)
				allowed[d.Store] = ok
			}
			if !ok {
				continue
			}
		}
		sum := m[d.Scope]
		sum.Scope, sum.Docs = d.Scope, sum.Docs+d.Docs
		if d.Updated.After(sum.Updated) {
			sum.Updated = d.Updated
		}
		m[d.Scope] = sum
	}
	return m, true, nil
}

// scopeUsage is where a scope's usage is computed: from the heads of its
// threads (their roots keep the totals of files and bytes) and the count
// of its documents. It is the one place to read stored counters instead,
// should the store keep them.
func (s *Store) scopeUsage(ctx context.Context, scope string, docs backend.ScopeDocs, docsKnown bool) (ScopeInfo, error) {
	u := ScopeInfo{Scope: scope}
	if docsKnown {
		n := docs.Docs
		u.Documents = &n
		u.LastActivity = docs.Updated.UTC()
	}
	ts, err := s.b.Threads(ctx, scope)
	if err != nil {
		return u, err
	}
	for _, t := range ts {
		snap, head, ok, err := s.eng.Head(ctx, t.ID)
		if errors.Is(err, backend.ErrNoThread) {
			continue // deleted meanwhile
		}
		if err != nil {
			return u, err
		}
		if !isSpillThread(t.Name) {
			u.Threads++
			if archivedMeta(head.Meta) {
				u.Archived++
			}
		}
		if !ok {
			continue
		}
		if head.Time.After(u.LastActivity) {
			u.LastActivity = head.Time.UTC()
		}
		files, n, err := snap.Totals(ctx)
		if err != nil {
			return u, err
		}
		u.Files += files
		u.LiveBytes += n
	}
	return u, nil
}

// PurgeReport is what a purge removed.
type PurgeReport struct {
	Scope   string `json:"scope"`
	Threads int    `json:"threads"`
	// Commits counts the retained commits of the threads.
	Commits int64 `json:"commits"`
	// Files and Bytes add up the heads (the files and their bytes of
	// content), as ScopeInfo does.
	Files     int64 `json:"files"`
	Documents int64 `json:"documents"`
	// Tokens counts the access tokens of the scope, revoked and expired
	// ones included.
	Tokens int   `json:"tokens"`
	Bytes  int64 `json:"bytes"`
}

// Purge deletes everything of a scope, for good: its threads with their
// history and storage, settings, documents and access tokens; then it
// gives the freed space back when the backend can (SQLite's vacuum). The
// report counts what was there just before.
//
// The backend removes the threads, commits with their packs, settings and
// documents in one transaction. A writer racing it in any process either
// commits before it (and is purged) or after it, into a fresh, empty
// scope: a commit to a thread the purge removed finds no thread and the
// workspace starts it anew; nothing is left half-purged and no storage
// is left without its commit. The scope's tokens are removed after that
// transaction, so a token created for the scope while it ran goes too.
func (s *Store) Purge(ctx context.Context, scope string) (PurgeReport, error) {
	r := PurgeReport{Scope: scope}
	u, err := s.ScopeInfo(ctx, scope)
	if err != nil {
		return r, err
	}
	r.Threads, r.Files, r.Bytes = u.Threads, u.Files, u.LiveBytes
	if u.Documents != nil {
		r.Documents = *u.Documents
	}
	ts, err := s.b.Threads(ctx, scope)
	if err != nil {
		return r, err
	}
	for _, t := range ts {
		cs, err := s.eng.Log(ctx, t.ID, 0, 0)
		if err != nil && !errors.Is(err, backend.ErrNoThread) {
			return r, err
		}
		r.Commits += int64(len(cs))
	}
	if err := s.b.PurgeScope(ctx, scope); err != nil {
		return r, err
	}
	if r.Tokens, err = s.deleteTokens(ctx, scope); err != nil {
		return r, err
	}
	if err := s.deleteReviews(ctx, scope); err != nil {
		return r, err
	}
	if v, ok := backend.As[backend.Vacuumer](s.b); ok {
		if err := v.Vacuum(ctx); err != nil {
			return r, err
		}
	}
	return r, nil
}

// deleteTokens deletes the tokens of a scope, and returns how many.
func (s *Store) deleteTokens(ctx context.Context, scope string) (int, error) {
	ts, err := s.Tokens(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, t := range ts {
		if t.Operator || t.Scope != scope {
			continue
		}
		if err := s.b.PutSetting(ctx, "", "", tokenKey+t.ID, nil); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// Archiving a thread appends an entry to its log, a commit with the
// head's tree and the op "archive" ("unarchive" to undo it). Every write
// reads the head for its compare-and-swap, and refuses to commit after an
// archive entry (engine.Options.Guard): so a write racing an archive, in
// any process, either lands before it or is refused. The entry keeps the
// tree, so the archived thread reads as it was, and its history says
// when it was archived and by whom.
const (
	opArchive   = "archive"
	opUnarchive = "unarchive"
)

var archivePrefix = []byte(`{"op":"` + opArchive + `"`)

// archivedMeta reports whether a commit's metadata is an archive entry.
// appendMeta writes the op first, so the prefix decides.
func archivedMeta(meta []byte) bool { return bytes.HasPrefix(meta, archivePrefix) }

// errArchivedHead is the Guard's refusal; the workspace that wrote turns
// it into its ArchivedError, which names the thread.
var errArchivedHead = errors.New("the thread is archived")

func guardArchived(head backend.Commit) error {
	if archivedMeta(head.Meta) {
		return errArchivedHead
	}
	return nil
}

// archivedError refuses a write to an archived thread, with kind
// ErrArchived.
func archivedError(scope, thread string) error {
	return errs.New(errs.ErrArchived, "thread %s of scope %s is archived: it can be read, not written; satchel threads unarchive %s --scope %s makes it writable",
		thread, scope, thread, scope)
}

// archived turns the Guard's refusal into the error that names w's thread.
func (w *Workspace) archived(err error) error {
	if errors.Is(err, errArchivedHead) {
		return archivedError(w.scope, strings.TrimSuffix(w.thread, spillThreadSuffix))
	}
	return err
}

// ArchiveResult says what ArchiveThread or UnarchiveThread did.
type ArchiveResult struct {
	Thread   string `json:"thread"`
	Archived bool   `json:"archived"`
	// Changed is false when the thread already was in that state.
	Changed bool `json:"changed"`
	// Head is the sequence number of the thread's head afterwards.
	Head int64 `json:"head"`
}

// ArchiveThread makes a thread read-only: it keeps every file and commit
// and reads as before, but every write (file operations, restore,
// checkpoint, publish onto it, spills) is refused with ErrArchived until
// UnarchiveThread. Archiving an archived thread changes nothing.
func (s *Store) ArchiveThread(ctx context.Context, scope, thread string, opts ...WorkspaceOption) (ArchiveResult, error) {
	return s.setArchived(ctx, scope, thread, true, opts)
}

// UnarchiveThread makes an archived thread writable again.
func (s *Store) UnarchiveThread(ctx context.Context, scope, thread string, opts ...WorkspaceOption) (ArchiveResult, error) {
	return s.setArchived(ctx, scope, thread, false, opts)
}

func (s *Store) setArchived(ctx context.Context, scope, thread string, archive bool, opts []WorkspaceOption) (ArchiveResult, error) {
	res := ArchiveResult{Thread: thread, Archived: archive}
	if err := s.CheckThread(ctx, scope, thread); err != nil {
		return res, err
	}
	w, err := s.Workspace(ctx, scope, thread, opts...)
	if err != nil {
		return res, err
	}
	return w.setArchivedWith(ctx, archive, "")
}

// setArchivedWith archives (or unarchives) w's thread, summarizing the
// entry sum ("": "archive THREAD").
func (w *Workspace) setArchivedWith(ctx context.Context, archive bool, sum string) (ArchiveResult, error) {
	s, thread := w.s, w.thread
	res := ArchiveResult{Thread: thread, Archived: archive}
	op, def := opArchive, "archive "+thread
	if !archive {
		op, def = opUnarchive, "unarchive "+thread
	}
	if sum == "" {
		sum = def
	}
	// The thread, then its spill area, which a spill writes to (made, empty,
	// when missing, so that a first spill is refused too); each is guarded
	// by its own head.
	for _, ws := range []*Workspace{w, w.spills()} {
		id, ok, err := ws.threadID(ctx, archive || ws == w)
		if err != nil {
			return res, err
		}
		if !ok {
			continue // no spill area to unarchive
		}
		c, changed, err := s.eng.Mark(ctx, id, ws.meta(op, sum), func(head backend.Commit) (bool, error) {
			return archivedMeta(head.Meta) == archive, nil
		})
		if err != nil {
			return res, err
		}
		if ws == w {
			res.Changed, res.Head = changed, c.Seq
		}
	}
	return res, nil
}

// Archived reports whether the workspace's thread is archived.
func (w *Workspace) Archived(ctx context.Context) (bool, error) {
	_, c, err := w.head(ctx)
	if err != nil {
		return false, err
	}
	return archivedMeta(c.Meta), nil
}

// checkWritable refuses a write to an archived thread, for writes that do
// not go through the head's compare-and-swap (checkpoints, publish).
func (w *Workspace) checkWritable(head backend.Commit) error {
	if archivedMeta(head.Meta) {
		return archivedError(w.scope, strings.TrimSuffix(w.thread, spillThreadSuffix))
	}
	return nil
}

// Default retention. A scope's default policy is kept as a list of the
// policies it was set to, each with the time it was set (by the backend's
// clock): a thread without a policy of its own takes the one in force
// when it was created. So a thread created after a default was set takes
// it, and the threads that existed keep what they had, with no step at
// the creation of a thread that could race the change (a fork is a new
// thread: it takes the default, not its source's policy).
const defaultRetentionKey = "retention-default"

// defaultPolicy is one setting of a scope's default.
type defaultPolicy struct {
	Since  time.Time `json:"since"`
	Policy Policy    `json:"policy"`
}

// maxDefaultPolicies bounds the list: the oldest settings go first (the
// threads older than the oldest kept then have no default).
const maxDefaultPolicies = 64

// SetDefaultRetention sets the retention policy that the threads of scope
// created from now on take, when they have none of their own. Existing
// threads keep theirs. The zero Policy clears the default (threads created
// afterwards take none).
func (s *Store) SetDefaultRetention(ctx context.Context, scope string, p Policy) error {
	if err := ValidScope(scope); err != nil {
		return err
	}
	if err := p.check(); err != nil {
		return err
	}
	l, err := s.defaultPolicies(ctx, scope)
	if err != nil {
		return err
	}
	now, err := s.b.Now(ctx)
	if err != nil {
		return err
	}
	if n := len(l); n > 0 && now.Before(l[n-1].Since) {
		now = l[n-1].Since // a clock that stepped back keeps the order
	}
	l = append(l, defaultPolicy{Since: now.UTC(), Policy: p})
	if len(l) > maxDefaultPolicies {
		l = l[len(l)-maxDefaultPolicies:]
	}
	v, _ := json.Marshal(l)
	return s.b.PutSetting(ctx, scope, "", defaultRetentionKey, v)
}

// DefaultRetention returns the scope's default retention policy (the zero
// Policy when none is set).
func (s *Store) DefaultRetention(ctx context.Context, scope string) (Policy, error) {
	if err := ValidScope(scope); err != nil {
		return Policy{}, err
	}
	l, err := s.defaultPolicies(ctx, scope)
	if err != nil || len(l) == 0 {
		return Policy{}, err
	}
	return l[len(l)-1].Policy, nil
}

func (s *Store) defaultPolicies(ctx context.Context, scope string) ([]defaultPolicy, error) {
	v, ok, err := s.b.Setting(ctx, scope, "", defaultRetentionKey)
	if err != nil || !ok {
		return nil, err
	}
	var l []defaultPolicy
	if err := json.Unmarshal(v, &l); err != nil {
		return nil, fmt.Errorf("satchel: stored default retention of scope %s: %w", scope, err)
	}
	return l, nil
}

// defaultFor returns the default policy in force when a thread was
// created.
func defaultFor(l []defaultPolicy, created time.Time) Policy {
	for i := len(l) - 1; i >= 0; i-- {
		if !l[i].Since.After(created) {
			return l[i].Policy
		}
	}
	return Policy{}
}
