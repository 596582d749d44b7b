package inspector

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/satchel-dev/satchel"
)

// activityPerPage is how many audit entries a page of activity reads (runs
// of identical rows are folded, so it shows fewer rows).
const activityPerPage = 100

// activityScan bounds the changes a page of activity examines: a filter
// that keeps few of them (a path, an agent, a time range) shows what the
// newest activityScan changes hold, and a link continues from there,
// instead of reading a long log whole in one request.
var activityScan = 2000

// statMaxFiles bounds the files whose lines a row's +N/−M counts, and
// statMaxBytes the size of a file counted.
const (
	statMaxFiles  = 20
	statMaxBytes  = 1 << 20
	statPageBytes = 64 << 20 // the bytes a page reads to count, in all
)

// filter is what the query of an activity page or a filtered timeline
// asks: the keys agent, tool, client, path (a glob), thread, since, until
// and hide=appends.
type filter struct {
	Agent, Tool, Client, Path, Thread string
	Since, Until                      string // as given
	HideAppends                       bool
	since, until                      time.Time
}

// filterKeys are the query keys of a filter, in the order links write
// them.
var filterKeys = []string{"agent", "tool", "client", "path", "thread", "since", "until", "hide"}

// parseFilter reads a filter from a query. A time is RFC 3339, or a date
// and time without a zone (UTC), as a datetime-local field sends it, or a
// date alone.
func parseFilter(q url.Values) (filter, error) {
	f := filter{Agent: q.Get("agent"), Tool: q.Get("tool"), Client: q.Get("client"), Path: q.Get("path"),
		Thread: q.Get("thread"), Since: q.Get("since"), Until: q.Get("until")}
	switch h := q.Get("hide"); h {
	case "":
	case "appends":
		f.HideAppends = true
	default:
		return f, badRequest("hide takes appends, was %q", h)
	}
	if f.Thread != "" {
		if err := satchel.ValidThreadName(f.Thread); err != nil {
			return f, err
		}
	}
	if f.Path != "" {
		if len(f.Path) > 1024 {
			return f, badRequest("path is a glob of at most 1024 bytes")
		}
	}
	var err error
	if f.since, err = parseTime("since", f.Since); err != nil {
		return f, err
	}
	if f.until, err = parseTime("until", f.Until); err != nil {
		return f, err
	}
	return f, nil
}

var timeLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02"}

func parseTime(key, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, badRequest("%s is a time (2026-12-06T10:30:00Z, 2026-12-06T10:30 in UTC, or 2026-12-06), was %q", key, s)
}

// any reports whether the filter selects anything at all.
func (f filter) any() bool { return f.query().Encode() != "" }

// query writes the filter back as a query, only the keys that are set.
func (f filter) query() url.Values {
	v := url.Values{}
	for k, s := range map[string]string{"agent": f.Agent, "tool": f.Tool, "client": f.Client, "path": f.Path,
		"thread": f.Thread, "since": f.Since, "until": f.Until} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if f.HideAppends {
		v.Set("hide", "appends")
	}
	return v
}

// With returns the query of f with key set to value ("" drops it).
func (f filter) With(key, value string) string {
	v := f.query()
	if value == "" {
		v.Del(key)
	} else {
		v.Set(key, value)
	}
	if e := v.Encode(); e != "" {
		return "?" + e
	}
	return ""
}

func (f filter) audit(scope string) satchel.AuditQuery {
	q := satchel.AuditQuery{Scope: scope, Agent: f.Agent, Tool: f.Tool, Client: f.Client, Path: f.Path,
		Thread: f.Thread, Since: f.since, Until: f.until}
	if f.HideAppends {
		q.SkipOps = []string{"append"}
	}
	return q
}

// activityRow is one row of an activity page: an audit entry, or a run of
// entries with the same summary folded into one (Count > 1, the newest
// first, Oldest the run's oldest commit).
type activityRow struct {
	satchel.AuditEntry
	Count          int
	Oldest         int64
	Added, Removed int
	Stat           bool   // Added and Removed are known
	StatNote       string // why they are partial
	Commit         string // the commit's page
	Run            string // the timeline page that lists a folded run
	Doc            string // a document change's page
	Spills         string // the spills page, for a commit of a thread's spill area
}

type activityData struct {
	Scope   string
	Thread  string // set on a thread's filtered timeline
	F       filter
	Rows    []activityRow
	Next    string
	Threads []string
	Action  string
	Links   activityLinks
	Entries int
	// Partial says the page examined activityScan changes, back to
	// Through, before it was full; Next continues.
	Partial bool
	Scanned int
	Through time.Time
}

// activityLinks are the one-click filters of the page.
type activityLinks struct {
	HideAppends, ShowAppends, Clear string
}

// activityPage lists a scope's changes, commits of every thread and
// document changes, newest first, filtered, with runs of identical
// summaries folded.
func (in *Inspector) activityPage(w http.ResponseWriter, r *http.Request) {
	scope, err := in.scopeOf(r)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	f, err := parseFilter(r.URL.Query())
	if err != nil {
		in.fail(w, r, err)
		return
	}
	v := viewerOf(r.Context())
	if v.thread != "" && !v.all {
		if f.Thread != "" && f.Thread != v.thread {
			in.fail(w, r, refusal(satchel.ErrNotFound, "thread not found: %s", f.Thread))
			return
		}
		f.Thread = v.thread
	}
	base := "/s/" + pathSeg(scope) + "/activity"
	d, err := in.activity(r, scope, f, base)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	in.render(w, r, http.StatusOK, "activity", pageData{Title: "Activity in " + scope,
		Crumbs: append(scopeCrumbs(scope), crumb{"activity", ""}), Data: d})
}

// activity reads a page of the audit (?after= continues) and folds it.
func (in *Inspector) activity(r *http.Request, scope string, f filter, base string) (activityData, error) {
	ctx := r.Context()
	v := viewerOf(ctx)
	d := activityData{Scope: scope, F: f, Action: base}
	if infos, err := in.cfg.Store.Threads(ctx, scope); err == nil {
		for _, t := range infos {
			if v.seesThread(scope, t.Name) {
				d.Threads = append(d.Threads, t.Name)
			}
		}
	}
	q := f.audit(scope)
	q.Limit = activityPerPage
	q.Scan = activityScan
	q.Files = in.fileOptions(ctx)
	if !v.all {
		// An agent's token sees the document changes of the stores its
		// agent may read, no other.
		q.AsAgent, q.Project = v.agent, in.cfg.Project
	}
	q.Cursor = r.URL.Query().Get("after")
	page, err := in.cfg.Store.Audit(ctx, q)
	if err != nil {
		return d, err
	}
	d.Entries = len(page.Entries)
	d.Partial, d.Scanned, d.Through = page.Partial, activityScan, page.Through
	var rows []activityRow
	for _, e := range page.Entries {
		owner, spill := strings.CutSuffix(e.Thread, "/spill")
		if e.Thread != "" && !v.seesThread(scope, owner) {
			continue
		}
		if spill {
			rows = append(rows, activityRow{AuditEntry: e, Count: 1, Oldest: e.Seq, Spills: threadURL(threadRef{scope, owner}) + "/spills/"})
			continue
		}
		if n := len(rows); n > 0 && e.Thread != "" && foldable(rows[n-1].AuditEntry, e) {
			rows[n-1].Count++
			rows[n-1].Oldest = e.Seq
			continue
		}
		rows = append(rows, activityRow{AuditEntry: e, Count: 1, Oldest: e.Seq})
	}
	budget := int64(statPageBytes)
	for i := range rows {
		row := &rows[i]
		if row.Spills != "" {
			continue
		}
		if row.Thread == "" {
			row.Doc = "/s/" + pathSeg(scope) + "/docs/" + pathSeg(row.Collection) + "/doc?key=" + url.QueryEscape(row.Key)
			continue
		}
		t := threadRef{scope, row.Thread}
		row.Commit = threadURL(t) + "/c/" + strconv.FormatInt(row.Seq, 10)
		if row.Count > 1 {
			row.Run = threadURL(t) + "/?before=" + strconv.FormatInt(row.Seq+1, 10)
		}
		if err := in.rowStat(ctx, t, row, &budget); err != nil {
			return d, err
		}
	}
	d.Rows = rows
	if page.NextCursor != "" {
		nq := f.query()
		nq.Set("after", page.NextCursor)
		d.Next = base + "?" + nq.Encode()
	}
	d.Links = activityLinks{HideAppends: base + f.With("hide", "appends"), ShowAppends: base + f.With("hide", ""), Clear: base}
	return d, nil
}

// foldable reports whether e continues the run of row: same thread,
// operation, summary and actor, and the commit just before.
func foldable(row, e satchel.AuditEntry) bool {
	return row.Thread == e.Thread && row.Op == e.Op && row.Summary == e.Summary && row.Actor == e.Actor
}

// rowStat counts the lines a row's commits added and removed: the diff
// from the commit before the run's oldest to its newest.
func (in *Inspector) rowStat(ctx context.Context, t threadRef, row *activityRow, budget *int64) error {
	if row.Op == "fork" || row.Op == "checkpoint" {
		row.Stat = true
		return nil
	}
	ws, err := in.cfg.Store.Workspace(ctx, t.Scope, t.Thread, in.fileOptions(ctx)...)
	if err != nil {
		return err
	}
	b, err := ws.At(ctx, strconv.FormatInt(row.Seq, 10))
	if satchelNotFound(err) {
		return nil // dropped by retention meanwhile
	} else if err != nil {
		return err
	}
	// The commit before the run: most often its sequence number minus
	// one, else the retained commit before it.
	a, err := ws.At(ctx, strconv.FormatInt(row.Oldest-1, 10))
	if satchelNotFound(err) {
		prev, err := ws.History(ctx, row.Oldest, 1)
		if err != nil || len(prev) == 0 {
			return err // none retained: no count
		}
		a, err = ws.At(ctx, strconv.FormatInt(prev[0].Seq, 10))
	}
	if err != nil {
		return err
	}
	changes, err := in.cfg.Store.DiffSnapshots(ctx, a, b)
	if err != nil {
		return err
	}
	row.Stat = true
	for i, c := range changes {
		if i == statMaxFiles {
			row.StatNote = "counted in " + strconv.Itoa(statMaxFiles) + " of " + strconv.Itoa(len(changes)) + " files"
			break
		}
		add, del, ok, err := lineStat(ctx, a, b, c.Path, budget)
		if err != nil {
			return err
		}
		if !ok {
			row.StatNote = "large or binary files not counted (or the page read enough)"
			continue
		}
		row.Added += add
		row.Removed += del
	}
	return nil
}

// lineStat counts the lines added and removed in path between a and b;
// ok is false for binary content, for a file over statMaxBytes, and once
// the page's budget of bytes read (*budget) is spent.
func lineStat(ctx context.Context, a, b *satchel.Snapshot, path string, budget *int64) (add, del int, ok bool, err error) {
	na, err := sizeOf(ctx, a, path)
	if err != nil {
		return 0, 0, false, err
	}
	nb, err := sizeOf(ctx, b, path)
	if err != nil {
		return 0, 0, false, err
	}
	if na > statMaxBytes || nb > statMaxBytes || na+nb > *budget {
		return 0, 0, false, nil
	}
	*budget -= na + nb
	ca, _, err := readWhole(ctx, a, path)
	if err != nil {
		return 0, 0, false, err
	}
	cb, _, err := readWhole(ctx, b, path)
	if err != nil {
		return 0, 0, false, err
	}
	if satchel.IsBinary(ca) || satchel.IsBinary(cb) {
		return 0, 0, false, nil
	}
	if strings.HasPrefix(cb, ca) && (ca == "" || strings.HasSuffix(ca, "\n")) {
		return countLines(cb[len(ca):]), 0, true, nil
	}
	text := satchel.DiffText("a/"+path, "b/"+path, ca, cb)
	head := 0
	for line := range strings.Lines(text) {
		if head < 2 && (strings.HasPrefix(line, "--- ") || strings.HasPrefix(line, "+++ ")) {
			head++
			continue
		}
		head = 2
		switch line[0] {
		case '+':
			add++
		case '-':
			del++
		}
	}
	return add, del, true, nil
}

// sizeOf is the size of path in snap (0 when it is absent), without
// reading its content.
func sizeOf(ctx context.Context, snap *satchel.Snapshot, path string) (int64, error) {
	fi, err := snap.FS(ctx).Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// readWhole reads path in snap whole (ok false when it is absent).
func readWhole(ctx context.Context, snap *satchel.Snapshot, path string) (string, bool, error) {
	ok, err := snap.Exists(ctx, path)
	if err != nil || !ok {
		return "", false, err
	}
	s, err := snap.Read(ctx, path)
	return s, err == nil, err
}

func countLines(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// jumpTo resolves the timeline's jump box: a commit's number, or a time
// (the newest commit at or before it).
func (in *Inspector) jumpTo(ctx context.Context, t threadRef, s string) (string, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n >= 1 {
		return threadURL(t) + "/c/" + strconv.FormatInt(n, 10), nil
	}
	at, err := parseTime("jump", s)
	if err != nil {
		return "", badRequest("jump takes a commit number or a time (2026-12-06T10:30:00Z, 2026-12-06T10:30 in UTC, or 2026-12-06), was %q", s)
	}
	page, err := in.cfg.Store.Audit(ctx, satchel.AuditQuery{Scope: t.Scope, Thread: t.Thread, Until: at.Add(time.Nanosecond), Limit: 1})
	if err != nil {
		return "", err
	}
	if len(page.Entries) == 0 {
		return "", refusal(satchel.ErrNotFound, "commit not found: thread %s has no retained commit at or before %s", t.Thread, at.Format(time.RFC3339))
	}
	return threadURL(t) + "/c/" + strconv.FormatInt(page.Entries[0].Seq, 10), nil
}

// scopeSearch is the search across the threads of a scope.
type scopeSearchData struct {
	Scope   string
	Q       string
	Threads []threadHits
	Stopped string
	// From is the first thread the page searched (?from=, "" for the
	// first); Next continues with the threads it did not reach, from
	// NextThread on.
	From, Next, NextThread string
	Searched               int
}

// scopeSearchBudget bounds the work of a page of the search across
// threads: the page searches the threads in name order, at least one,
// and starts no other once it has spent this long; a link continues with
// the rest. Each thread's result is whole (a grep of its head), so the
// page stays about one whole-tree grep however many threads there are.
var scopeSearchBudget = 25 * time.Millisecond

type threadHits struct {
	T        threadRef
	Seq      int64
	Paths    []string
	MorePath bool
	Matches  []satchel.Match
	More     string // the thread's own search, for more matches
}

const hitsPerThread = 20

// scopeSearchPage looks for q in the paths and the content of the head of
// every thread of a scope: a literal text, case-insensitive.
func (in *Inspector) scopeSearchPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	scope, err := in.scopeOf(r)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	q := r.URL.Query().Get("q")
	if len(q) > satchel.MaxRegexBytes/2 {
		in.fail(w, r, badRequest("the search text is at most %d bytes", satchel.MaxRegexBytes/2))
		return
	}
	d := scopeSearchData{Scope: scope, Q: q, From: r.URL.Query().Get("from")}
	if d.From != "" {
		if err := satchel.ValidThreadName(d.From); err != nil {
			in.fail(w, r, err)
			return
		}
	}
	if q != "" {
		infos, err := in.cfg.Store.Threads(ctx, scope)
		if err != nil {
			in.fail(w, r, err)
			return
		}
		slices.SortFunc(infos, func(a, b satchel.ThreadInfo) int { return strings.Compare(a.Name, b.Name) })
		v := viewerOf(ctx)
		lower := strings.ToLower(q)
		re := "(?i)" + regexp.QuoteMeta(q)
		start := time.Now()
		for _, ti := range infos {
			if !v.seesThread(scope, ti.Name) || ti.Head == 0 || ti.Name < d.From {
				continue
			}
			if d.Searched > 0 && time.Since(start) >= scopeSearchBudget {
				d.NextThread = ti.Name
				d.Next = "/s/" + pathSeg(scope) + "/search?" + url.Values{"q": {q}, "from": {ti.Name}}.Encode()
				break
			}
			d.Searched++
			t := threadRef{scope, ti.Name}
			ws, err := in.cfg.Store.Workspace(ctx, scope, ti.Name, in.fileOptions(ctx)...)
			if err != nil {
				in.fail(w, r, err)
				return
			}
			snap, err := ws.At(ctx, "")
			if err != nil {
				in.fail(w, r, err)
				return
			}
			h := threadHits{T: t, Seq: snap.Commit().Seq}
			paths, err := snap.List(ctx, "", satchel.ListOptions{Limit: hitsPerThread + 1,
				Accept: func(p string) bool { return strings.Contains(strings.ToLower(p), lower) }})
			if err != nil {
				in.fail(w, r, err)
				return
			}
			if len(paths) > hitsPerThread {
				paths, h.MorePath = paths[:hitsPerThread], true
			}
			h.Paths = paths
			res, err := snap.Grep(ctx, re, "", satchel.GrepOptions{Limit: hitsPerThread, Timeout: in.cfg.GrepTimeout})
			if err != nil {
				in.fail(w, r, err)
				return
			}
			if res.Stopped != "" {
				d.Stopped = res.Stopped
			}
			h.Matches = res.Matches
			if res.Truncated {
				h.More = threadURL(t) + "/search?" + url.Values{"grep": {re}}.Encode()
			}
			if len(h.Paths) > 0 || len(h.Matches) > 0 {
				d.Threads = append(d.Threads, h)
			}
		}
	}
	in.render(w, r, http.StatusOK, "scopesearch", pageData{Title: "Search " + scope,
		Crumbs: append(scopeCrumbs(scope), crumb{"search", ""}), Data: d})
}
