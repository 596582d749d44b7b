package satchel

import (
	"container/heap"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/internal/errs"
	"github.com/satchel-dev/satchel/internal/vpath"
)

// The audit trail (docs/operations.md): every commit records who made it
// (commitMeta), and every document set and remove is logged with its
// actor (backend.Keys.DocChanges). Store.Audit lists both, newest first.
// Neither ever holds a file's content or a document's body: a commit's
// metadata is its operation, a summary of the paths it touched and its
// actor; a document change's is the same for the document's key.

// AuditQuery selects changes for Store.Audit. Zero fields select all.
type AuditQuery struct {
	// Scope limits the listing to one scope.
	Scope string
	// Agent keeps the changes of one agent ("-" for an operator's: no agent).
	Agent string
	// Tool keeps the changes made through one tool or command: the Via of
	// their actor ("mcp:write_file", "cli:fs write"), or that without its
	// "mcp:" or "cli:" prefix.
	Tool string
	// Since keeps the changes made at or after it.
	Since time.Time
	// Until keeps the changes made before it.
	Until time.Time
	// Thread keeps the commits of one thread (and no document change).
	Thread string
	// Client keeps the changes made through one MCP client: the name its
	// initialize request gave.
	Client string
	// Path keeps the commits whose summary names a path that the glob
	// (DESIGN §2.3's syntax) matches, and no document change. A summary
	// longer than its bound is cut, so a commit of many paths may name only
	// the first of them.
	Path string
	// SkipOps drops the changes of these operations ("append" hides the
	// appends).
	SkipOps []string
	// Collection, and Key with it, keep the changes of one collection's
	// documents, or of one document (and no commit).
	Collection, Key string
	// Limit is the page size (0: 100; at most 1,000).
	Limit int
	// Cursor is the NextCursor of the previous page.
	Cursor string
	// Files are the caller's file rules (WithFileRules, Token's
	// FileOptions): each commit's summary is redacted as the history of
	// a workspace opened with them is (the parts that name hidden paths
	// dropped, a commit of hidden paths only left out), before Path and
	// the other filters look at it.
	Files []WorkspaceOption
	// AsAgent, when set, is the caller's agent: only the document changes
	// of the stores Project grants it are kept (none without a Project),
	// as Collection with AsAgent lets it read them, before Scan counts
	// them. Files does the same for commits.
	AsAgent string
	Project *Project
	// Scan bounds the commits and document changes a page examines past
	// its cursor (0: no bound), for a filter that keeps few of them: a
	// page that examines Scan of them before it is full ends there, with
	// Partial set and NextCursor after the last one examined.
	Scan int
}

// AuditEntry is one change: a commit of a thread, or a set or remove of a
// document. Summary, Key, Client, ClientVersion and IdempotencyKey are
// text an agent chose (paths, document keys, what its client calls
// itself): treat them as untrusted data (wrap them with Untrusted before
// they go into a prompt). File contents and document bodies never appear.
type AuditEntry struct {
	Time time.Time `json:"time"`
	// Scope is the scope changed; "" for a shared store's document.
	Scope string `json:"scope"`
	// Thread and Seq name a commit.
	Thread string `json:"thread,omitempty"`
	Seq    int64  `json:"seq,omitempty"`
	// Collection, Key and Version name a document change.
	Collection string `json:"collection,omitempty"`
	Key        string `json:"key,omitempty"`
	Version    int64  `json:"version,omitempty"`
	// Op is the commit's operation (write, append, ...), or "set" or
	// "remove" for a document.
	Op string `json:"op"`
	Actor
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	Summary        string `json:"summary"`

	order int64 // the commit's or the document change's ID (cursor tie-break)
	doc   bool
}

// AuditPage is one page of Store.Audit.
type AuditPage struct {
	Entries []AuditEntry `json:"entries"`
	// NextCursor is set when more entries follow.
	NextCursor string `json:"next_cursor,omitempty"`
	// Partial is set when the query's Scan bound ended the page before
	// it was full: older entries may still match, from NextCursor on.
	// Through is the time of the last change examined.
	Partial bool      `json:"partial,omitempty"`
	Through time.Time `json:"through,omitzero"`
}

const (
	defaultAuditLimit = 100
	maxAuditLimit     = 1000
)

// Audit lists changes, commits and document changes, newest first, that
// match q, one page at a time. Each thread's commits are taken in the
// order of its log (a thread's commits are made one after another). A
// page reads the commits newer than its cursor, newest first, until it
// has its entries: it is for operators, not for a hot path.
func (s *Store) Audit(ctx context.Context, q AuditQuery) (AuditPage, error) {
	if q.Scope != "" {
		if err := ValidScope(q.Scope); err != nil {
			return AuditPage{}, err
		}
	}
	limit := q.Limit
	switch {
	case limit < 0 || limit > maxAuditLimit:
		return AuditPage{}, errs.New(errs.ErrInvalidArgument, "limit must be 0 to %d, was %d", maxAuditLimit, limit)
	case limit == 0:
		limit = defaultAuditLimit
	}
	cur, err := parseAuditCursor(q.Cursor)
	if err != nil {
		return AuditPage{}, err
	}
	if q.Scan < 0 {
		return AuditPage{}, errs.New(errs.ErrInvalidArgument, "scan must be 0 or more, was %d", q.Scan)
	}
	if q.Thread != "" {
		if err := ValidThreadName(q.Thread); err != nil {
			return AuditPage{}, err
		}
	}
	var glob *vpath.Glob
	if q.Path != "" {
		if glob, err = vpath.Compile(q.Path); err != nil {
			return AuditPage{}, err
		}
	}
	scopes := []string{q.Scope}
	if q.Scope == "" {
		if scopes, err = s.b.Scopes(ctx); err != nil {
			return AuditPage{}, err
		}
	}
	// Each thread's log is read newest first, in growing batches, and the
	// threads' entries are merged: a page reads about as many commits as
	// it shows (and those its filters drop), not every retained commit.
	var streams auditHeap
	for _, scope := range scopes {
		ts, err := s.b.Threads(ctx, scope)
		if err != nil {
			return AuditPage{}, err
		}
		for _, t := range ts {
			if q.Thread != "" && t.Name != q.Thread || q.Collection != "" {
				continue
			}
			st := &auditStream{s: s, t: t, since: q.Since, batch: 64}
			if len(q.Files) > 0 {
				// The rules name paths, the same in every thread (a
				// spill area's are its thread's).
				if st.w, err = s.Workspace(ctx, t.Scope, strings.TrimSuffix(t.Name, spillThreadSuffix), q.Files...); err != nil {
					return AuditPage{}, err
				}
			}
			if err := st.fill(ctx); err != nil {
				return AuditPage{}, err
			}
			if len(st.buf) > 0 {
				streams = append(streams, st)
			}
		}
	}
	if ks, ok := backend.As[backend.Keys](s.b); ok && q.Thread == "" && q.Path == "" {
		dq := backend.DocChangeQuery{Scope: q.Scope, Since: q.Since}
		if cur != nil && cur.doc {
			dq.Before = cur.order
		}
		chs, err := ks.DocChanges(ctx, dq)
		if err != nil {
			return AuditPage{}, err
		}
		docs := &auditStream{done: true}
		reads := map[string]bool{} // the stores AsAgent may read
		for _, ch := range chs {
			if q.Collection != "" && (ch.Store != q.Collection || q.Key != "" && ch.Key != q.Key) {
				continue
			}
			if q.AsAgent != "" {
				ok, known := reads[ch.Store]
				if !known {
					ok = q.Project.agentReads(q.AsAgent, ch.Store)
					reads[ch.Store] = ok
				}
				if !ok {
					continue
				}
			}
			var m commitMeta
			_ = json.Unmarshal(ch.Meta, &m)
			docs.buf = append(docs.buf, AuditEntry{
				Time: ch.Time, Scope: ch.Scope, Collection: ch.Store, Key: ch.Key, Version: ch.Version,
				Op: ch.Op, Actor: m.Actor, IdempotencyKey: m.Key, Summary: m.Summary, order: ch.ID, doc: true,
			})
		}
		sort.Slice(docs.buf, func(i, j int) bool { return newer(docs.buf[i], docs.buf[j]) })
		if len(docs.buf) > 0 {
			streams = append(streams, docs)
		}
	}
	heap.Init(&streams)
	var all []AuditEntry
	scanned, stopped := 0, false
	var last AuditEntry
	for len(streams) > 0 && len(all) <= limit {
		if q.Scan > 0 && scanned >= q.Scan {
			stopped = true
			break
		}
		st := streams[0]
		e := st.buf[0]
		st.buf = st.buf[1:]
		if cur == nil || cur.after(e) {
			scanned++
			last = e
			if q.matches(e, glob) {
				all = append(all, e)
			}
		}
		if len(st.buf) == 0 {
			if err := st.fill(ctx); err != nil {
				return AuditPage{}, err
			}
		}
		if len(st.buf) == 0 {
			heap.Pop(&streams)
		} else {
			heap.Fix(&streams, 0)
		}
	}
	page := AuditPage{Entries: all}
	switch {
	case len(all) > limit:
		page.Entries = all[:limit]
		page.NextCursor = auditCursor(all[limit-1])
	case stopped:
		page.Partial, page.Through = true, last.Time
		page.NextCursor = auditCursor(last)
	}
	if page.Entries == nil {
		page.Entries = []AuditEntry{}
	}
	return page, nil
}

// auditStream is one thread's retained commits, newest first, read in
// batches that double up to 1,000; or the document changes, all read.
type auditStream struct {
	s      *Store
	t      backend.Thread
	w      *Workspace // set to redact with its file rules
	since  time.Time
	before int64
	batch  int
	done   bool
	buf    []AuditEntry
}

// fill reads the stream's next batch when its buffer is empty.
func (st *auditStream) fill(ctx context.Context) error {
	for len(st.buf) == 0 && !st.done {
		cs, err := st.s.eng.Log(ctx, st.t.ID, st.before, st.batch)
		if errors.Is(err, backend.ErrNoThread) {
			st.done = true // deleted meanwhile
			return nil
		}
		if err != nil {
			return err
		}
		if len(cs) < st.batch {
			st.done = true
		}
		st.batch = min(st.batch*2, 1000)
		for _, c := range cs {
			if !st.since.IsZero() && c.Time.Before(st.since) {
				st.done = true
				break
			}
			var m commitMeta
			_ = json.Unmarshal(c.Meta, &m)
			if st.w != nil {
				rc, ok := st.w.redact(Commit{Op: m.Op, Summary: m.Summary}, m.Own)
				if !ok {
					continue
				}
				m.Summary = rc.Summary
			}
			st.buf = append(st.buf, AuditEntry{
				Time: c.Time, Scope: st.t.Scope, Thread: st.t.Name, Seq: c.Seq, Op: m.Op,
				Actor: m.Actor, IdempotencyKey: m.Key, Summary: m.Summary, order: c.ID,
			})
		}
		if len(cs) > 0 {
			st.before = cs[len(cs)-1].Seq
		}
	}
	return nil
}

// auditHeap orders streams by their next entry, the newest on top.
type auditHeap []*auditStream

func (h auditHeap) Len() int           { return len(h) }
func (h auditHeap) Less(i, j int) bool { return newer(h[i].buf[0], h[j].buf[0]) }
func (h auditHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *auditHeap) Push(x any)        { *h = append(*h, x.(*auditStream)) }
func (h *auditHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func (q AuditQuery) matches(e AuditEntry, glob *vpath.Glob) bool {
	if q.Agent != "" && e.Agent != q.Agent && !(q.Agent == "-" && e.Agent == "") {
		return false
	}
	if q.Tool != "" && e.Via != q.Tool && strings.TrimPrefix(strings.TrimPrefix(e.Via, "mcp:"), "cli:") != q.Tool {
		return false
	}
	if q.Client != "" && e.Client != q.Client {
		return false
	}
	if slices.Contains(q.SkipOps, e.Op) {
		return false
	}
	if glob != nil && !slices.ContainsFunc(SummaryPaths(e.Summary), glob.Match) {
		return false
	}
	if !q.Until.IsZero() && !e.Time.Before(q.Until) {
		return false
	}
	return q.Since.IsZero() || !e.Time.Before(q.Since)
}

// SummaryPaths returns the paths a commit's summary names: it is "op
// path", several of them separated by "; ", and a move's is "move path ->
// to" (both paths are named). A summary with no path (a fork's "fork of
// THREAD@SEQ") names what follows its first word, which is no valid path.
func SummaryPaths(summary string) []string {
	var out []string
	for part := range strings.SplitSeq(summary, "; ") {
		_, rest, ok := strings.Cut(part, " ")
		if !ok || rest == "" {
			continue
		}
		from, to, moved := strings.Cut(rest, " -> ")
		out = append(out, from)
		if moved {
			out = append(out, to)
		}
	}
	return out
}

// newer orders entries newest first: by time, then document changes
// before commits, then by ID.
func newer(a, b AuditEntry) bool {
	if !a.Time.Equal(b.Time) {
		return a.Time.After(b.Time)
	}
	if a.doc != b.doc {
		return a.doc
	}
	return a.order > b.order
}

// auditPos is where a page ended: its last entry's place in the order.
type auditPos struct {
	t     time.Time
	doc   bool
	order int64
}

// after reports whether e comes after the position (is older).
func (p *auditPos) after(e AuditEntry) bool {
	return newer(AuditEntry{Time: p.t, doc: p.doc, order: p.order}, e)
}

func auditCursor(e AuditEntry) string {
	kind := "c"
	if e.doc {
		kind = "d"
	}
	return strconv.FormatInt(e.Time.UnixNano(), 10) + "." + kind + "." + strconv.FormatInt(e.order, 10)
}

func parseAuditCursor(s string) (*auditPos, error) {
	if s == "" {
		return nil, nil
	}
	bad := errs.New(errs.ErrInvalidArgument, "invalid audit cursor %q: pass back the next_cursor of a page", s)
	parts := strings.Split(s, ".")
	if len(parts) != 3 || parts[1] != "c" && parts[1] != "d" {
		return nil, bad
	}
	ns, err1 := strconv.ParseInt(parts[0], 10, 64)
	id, err2 := strconv.ParseInt(parts[2], 10, 64)
	if err1 != nil || err2 != nil || id < 0 {
		return nil, bad
	}
	return &auditPos{t: time.Unix(0, ns).UTC(), doc: parts[1] == "d", order: id}, nil
}

// String renders an entry as one line of `satchel audit` (see
// AuditEntry about which fields are agent-chosen; AuditText escapes them).
func (e AuditEntry) String() string {
	what := e.Thread + "@" + strconv.FormatInt(e.Seq, 10)
	if e.Collection != "" {
		what = e.Collection + "/" + AuditText(e.Key)
	}
	client := AuditText(e.Client)
	if e.ClientVersion != "" {
		client += "/" + AuditText(e.ClientVersion)
	}
	return fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s", e.Time.UTC().Format(time.RFC3339Nano), dash(e.Scope), what,
		dash(e.Agent), dash(e.Credential), dash(e.Via), dash(client), dash(AuditText(e.IdempotencyKey)), AuditText(e.Summary))
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// AuditText escapes agent-chosen text for one line of an audit listing:
// control characters (tabs and newlines among them) and backslashes are
// written as Go escapes, and "<" as "&lt;" as the untrusted envelope
// does, so that no path or key can forge a column, a line or a tag.
func AuditText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '<':
			b.WriteString("&lt;")
		case r == '\\':
			b.WriteString(`\\`)
		case r < 0x20 || r == 0x7f || r == 0x2028 || r == 0x2029 || r == 0xfffd:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
