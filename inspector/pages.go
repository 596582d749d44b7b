package inspector

import (
	"context"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/satchel-dev/satchel"
)

// Page sizes: every list is cut in the server.
const (
	threadsPerPage   = 100
	commitsPerPage   = 50
	changesPerPage   = 50
	entriesPerPage   = 200
	linesPerPage     = 1000
	matchesPerPage   = 200
	documentsPerPage = 50
	maxDiffRows      = 4000
	maxLineChars     = 2000
	maxDiffFileSize  = 4 << 20
)

func (in *Inspector) routes(mux *http.ServeMux) {
	mux.HandleFunc("/signin", in.signIn)
	mux.HandleFunc("/signout", in.signOut)
	mux.HandleFunc("GET /{$}", in.scopesPage)
	mux.HandleFunc("GET /s/{scope}/{$}", in.threadsPage)
	mux.HandleFunc("GET /s/{scope}/tree", in.treePage)
	mux.HandleFunc("GET /s/{scope}/activity", in.activityPage)
	mux.HandleFunc("GET /s/{scope}/search", in.scopeSearchPage)
	mux.HandleFunc("GET /s/{scope}/t/{thread}/{$}", in.timelinePage)
	mux.HandleFunc("GET /s/{scope}/t/{thread}/c/{seq}", in.commitPage)
	mux.HandleFunc("GET /s/{scope}/t/{thread}/compare", in.comparePage)
	mux.HandleFunc("GET /s/{scope}/t/{thread}/files/{path...}", in.filesPage)
	mux.HandleFunc("GET /s/{scope}/t/{thread}/history/{path...}", in.fileHistoryPage)
	mux.HandleFunc("GET /s/{scope}/t/{thread}/search", in.searchPage)
	mux.HandleFunc("GET /s/{scope}/t/{thread}/raw/{path...}", in.rawPage)
	mux.HandleFunc("GET /s/{scope}/t/{thread}/blame/{path...}", in.blamePage)
	mux.HandleFunc("GET /s/{scope}/t/{thread}/snapshot.tar.gz", in.snapshotPage)
	mux.HandleFunc("GET /s/{scope}/t/{thread}/spills/{path...}", in.spillsPage)
	mux.HandleFunc("GET /s/{scope}/t/{thread}/events", in.events)
	mux.HandleFunc("GET /s/{scope}/reviews", in.reviewsPage)
	mux.HandleFunc("GET /s/{scope}/reviews/{id}", in.reviewPage)
	mux.HandleFunc("POST /s/{scope}/reviews/{id}/{action}", in.reviewDecide)
	mux.HandleFunc("GET /s/{scope}/docs/{$}", in.storesPage)
	mux.HandleFunc("GET /s/{scope}/docs/{store}/{$}", in.documentsPage)
	mux.HandleFunc("GET /s/{scope}/docs/{store}/doc", in.documentPage)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		in.fail(w, r, refusal(satchel.ErrNotFound, "no such page: %s", r.URL.Path))
	})
}

// scopeOf reads and checks the request's scope: one the viewer cannot see
// is reported as missing, so that a scope's existence does not leak.
func (in *Inspector) scopeOf(r *http.Request) (string, error) {
	scope := r.PathValue("scope")
	if err := satchel.ValidScope(scope); err != nil {
		return "", err
	}
	if !viewerOf(r.Context()).seesScope(scope) {
		return "", refusal(satchel.ErrNotFound, "scope not found: %s", scope)
	}
	return scope, nil
}

// threadRef is the scope and thread a page shows.
type threadRef struct {
	Scope, Thread string
}

// workspaceOf reads and checks the request's scope and thread.
func (in *Inspector) workspaceOf(r *http.Request) (threadRef, *satchel.Workspace, error) {
	scope, err := in.scopeOf(r)
	if err != nil {
		return threadRef{}, nil, err
	}
	thread := r.PathValue("thread")
	if err := satchel.ValidThreadName(thread); err != nil {
		return threadRef{}, nil, err
	}
	if !viewerOf(r.Context()).seesThread(scope, thread) {
		return threadRef{}, nil, refusal(satchel.ErrNotFound, "thread not found: %s", thread)
	}
	ws, err := in.cfg.Store.Workspace(r.Context(), scope, thread, in.fileOptions(r.Context())...)
	return threadRef{scope, thread}, ws, err
}

func scopeCrumbs(scope string) []crumb {
	return []crumb{{"scopes", "/"}, {scope, "/s/" + pathSeg(scope) + "/"}}
}

func threadCrumbs(t threadRef) []crumb {
	return append(scopeCrumbs(t.Scope), crumb{t.Thread, threadURL(t) + "/"})
}

func pathSeg(s string) string { return escapePath(s) }

func threadURL(t threadRef) string {
	return "/s/" + pathSeg(t.Scope) + "/t/" + pathSeg(t.Thread)
}

// scopesPage lists the scopes the viewer sees.
func (in *Inspector) scopesPage(w http.ResponseWriter, r *http.Request) {
	v := viewerOf(r.Context())
	var all []satchel.ScopeInfo
	var err error
	if v.all {
		all, err = in.cfg.Store.ScopeUsage(r.Context())
	} else {
		// An agent's token counts the documents of the stores its agent
		// may read, no other.
		all, err = in.cfg.Store.ScopeUsageAs(r.Context(), in.cfg.Project, v.agent)
	}
	if err != nil {
		in.fail(w, r, err)
		return
	}
	scopes := []satchel.ScopeInfo{}
	for _, s := range all {
		if v.seesScope(s.Scope) {
			scopes = append(scopes, s)
		}
	}
	if !v.all && len(scopes) == 0 && v.scope != "" {
		scopes = append(scopes, satchel.ScopeInfo{Scope: v.scope}) // its scope, even with no thread yet
	}
	sort.Slice(scopes, func(i, j int) bool { return scopes[i].Scope < scopes[j].Scope })
	in.render(w, r, http.StatusOK, "scopes", pageData{Title: "Scopes", Crumbs: []crumb{{"scopes", "/"}}, Data: scopes})
}

// threadRow is one thread of a scope's table.
type threadRow struct {
	satchel.ThreadInfo
	Files, Bytes int64
	Origin       *satchel.Origin
}

type threadsData struct {
	Scope      string
	Rows       []threadRow
	Page, Of   int
	Prev, Next string
	HasStores  bool
}

// threadsPage lists a scope's threads: files, bytes, head, last activity
// and where each was forked from.
func (in *Inspector) threadsPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	scope, err := in.scopeOf(r)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	infos, err := in.cfg.Store.Threads(ctx, scope)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	v := viewerOf(ctx)
	seen := infos[:0]
	for _, t := range infos {
		if v.seesThread(scope, t.Name) {
			seen = append(seen, t)
		}
	}
	page, err := intParam(r, "page", 1)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	pages := max(1, (len(seen)+threadsPerPage-1)/threadsPerPage)
	p := int(min(max(page, 1), int64(pages)))
	lo, hi := (p-1)*threadsPerPage, min(p*threadsPerPage, len(seen))
	d := threadsData{Scope: scope, Page: p, Of: pages, HasStores: in.cfg.Project != nil}
	for _, t := range seen[lo:hi] {
		row, err := in.threadRow(ctx, scope, t)
		if err != nil {
			in.fail(w, r, err)
			return
		}
		d.Rows = append(d.Rows, row)
	}
	base := "/s/" + pathSeg(scope) + "/?page="
	if p > 1 {
		d.Prev = base + strconv.Itoa(p-1)
	}
	if p < pages {
		d.Next = base + strconv.Itoa(p+1)
	}
	in.render(w, r, http.StatusOK, "threads", pageData{Title: "Scope " + scope, Crumbs: scopeCrumbs(scope), Data: d})
}

func (in *Inspector) threadRow(ctx context.Context, scope string, t satchel.ThreadInfo) (threadRow, error) {
	row := threadRow{ThreadInfo: t}
	ws, err := in.cfg.Store.Workspace(ctx, scope, t.Name, in.fileOptions(ctx)...)
	if err != nil {
		return row, err
	}
	if row.Files, row.Bytes, err = ws.Usage(ctx); err != nil {
		return row, err
	}
	o, ok, err := ws.Origin(ctx)
	if ok {
		row.Origin = &o
	}
	return row, err
}

type timelineData struct {
	T       threadRef
	Info    threadRow
	Commits []satchel.Commit
	Next    string
	Newest  string
	AtHead  bool
	// Filtered, when the query filters, holds the matching commits in
	// place of Commits.
	Filtered *activityData
	Jump     string
}

// timelinePage shows a thread's history, newest first, a page at a time
// (?before=SEQ continues an older page).
func (in *Inspector) timelinePage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	// A thread's spill area, as a link may name it (THREAD/spill), is
	// shown on the thread's spills page.
	if th, ok := strings.CutSuffix(r.PathValue("thread"), "/spill"); ok && satchel.ValidThreadName(th) == nil {
		if _, err := in.scopeOf(r); err == nil {
			http.Redirect(w, r, in.cfg.Base+"/s/"+pathSeg(r.PathValue("scope"))+"/t/"+pathSeg(th)+"/spills/", http.StatusSeeOther)
			return
		}
	}
	t, ws, err := in.workspaceOf(r)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	if jump := r.URL.Query().Get("jump"); jump != "" {
		to, err := in.jumpTo(ctx, t, jump)
		if err != nil {
			in.fail(w, r, err)
			return
		}
		http.Redirect(w, r, in.cfg.Base+to, http.StatusSeeOther)
		return
	}
	f, err := parseFilter(r.URL.Query())
	if err != nil {
		in.fail(w, r, err)
		return
	}
	f.Thread = ""
	if f.any() {
		f.Thread = t.Thread
		ad, err := in.activity(r, t.Scope, f, threadURL(t)+"/")
		if err != nil {
			in.fail(w, r, err)
			return
		}
		ad.Thread = t.Thread
		f.Thread = ""
		ad.F = f
		ad.Links = activityLinks{HideAppends: ad.Action + f.With("hide", "appends"), ShowAppends: ad.Action + f.With("hide", ""), Clear: ad.Action}
		d := timelineData{T: t, Filtered: &ad}
		if d.Info, err = in.threadRow(ctx, t.Scope, satchel.ThreadInfo{Name: t.Thread}); err != nil {
			in.fail(w, r, err)
			return
		}
		in.render(w, r, http.StatusOK, "timeline", pageData{Title: "Thread " + t.Thread, Crumbs: threadCrumbs(t), Data: d})
		return
	}
	before, err := intParam(r, "before", 0)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	cs, err := ws.History(ctx, before, commitsPerPage+1)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	if len(cs) == 0 && before == 0 {
		in.fail(w, r, refusal(satchel.ErrNotFound, "thread not found: %s (it has no commits)", t.Thread))
		return
	}
	d := timelineData{T: t, AtHead: before == 0}
	if len(cs) > commitsPerPage {
		cs = cs[:commitsPerPage]
		d.Next = threadURL(t) + "/?before=" + strconv.FormatInt(cs[len(cs)-1].Seq, 10)
	}
	if before != 0 {
		d.Newest = threadURL(t) + "/"
	}
	d.Commits = cs
	head := satchel.ThreadInfo{Name: t.Thread}
	if d.AtHead && len(cs) > 0 {
		head.Head, head.HeadTime = cs[0].Seq, cs[0].Time
	}
	if d.Info, err = in.threadRow(ctx, t.Scope, head); err != nil {
		in.fail(w, r, err)
		return
	}
	pd := pageData{Title: "Thread " + t.Thread, Crumbs: threadCrumbs(t), Data: d}
	if d.AtHead {
		pd.Live = liveURL(t, head.Head)
	}
	in.render(w, r, http.StatusOK, "timeline", pd)
}

func liveURL(t threadRef, after int64) string {
	return threadURL(t) + "/events?after=" + strconv.FormatInt(after, 10)
}

// commitOf returns commit seq of a thread, with its checkpoint names.
func commitOf(ctx context.Context, ws *satchel.Workspace, seq int64) (satchel.Commit, error) {
	cs, err := ws.History(ctx, seq+1, 1)
	if err != nil {
		return satchel.Commit{}, err
	}
	if len(cs) == 0 || cs[0].Seq != seq {
		return satchel.Commit{}, refusal(satchel.ErrNotFound, "commit not found: %d is not a retained commit of thread %s", seq, ws.Thread())
	}
	return cs[0], nil
}

// refSeq resolves a ref (a sequence number, a checkpoint, "head") to a
// sequence number.
func refSeq(ctx context.Context, ws *satchel.Workspace, ref string) (int64, error) {
	snap, err := ws.At(ctx, ref)
	if err != nil {
		return 0, err
	}
	return snap.Commit().Seq, nil
}
