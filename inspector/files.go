package inspector

import (
	"bytes"
	"context"
	"encoding/json"
	"html/template"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"

	"github.com/satchel-dev/satchel"
)

// dirEntry is a child of a directory: a file or a directory.
type dirEntry struct {
	Name, Path string
	Dir        bool
}

type dirData struct {
	T      threadRef
	At     string // the ref asked for ("" at the head)
	Seq    int64
	Dir    string
	Parts  []crumb
	Items  []dirEntry
	Next   string
	Search searchForm
}

type fileLine struct {
	N    int
	Text string
}

type fileData struct {
	T       threadRef
	At      string
	Seq     int64
	Path    string
	Parts   []crumb
	Info    satchel.FileInfo
	Lines   []fileLine
	Error   string
	Start   int
	Prev    string
	Next    string
	Last    string // the last page of lines (a log's tail)
	History string
	// Links of the file: its raw bytes, a download, its blame, and this
	// page at the commit's number (a permalink).
	Raw, Download, Blame, Permalink string
	// Kind is how the file is shown: "text" (lines), "image", "binary"
	// (its type, size and hash), "markdown" (Rendered) or "json" (Lines
	// pretty-printed).
	Kind     string
	Rendered template.HTML
	Source   string // the page of the source lines of a rendered file
	View     string // the rendered view's link, on the source page
	Tree     string // JSON's folded view
}

// maxRenderBytes bounds the files rendered (Markdown) or pretty-printed
// (JSON); a larger one is shown as lines.
const maxRenderBytes = 1 << 20

// atQuery is the ?at= of a link ("" at the head).
func atQuery(at string) string {
	if at == "" {
		return ""
	}
	return "?at=" + url.QueryEscape(at)
}

// pathParts are the breadcrumbs of a path in the file browser.
func pathParts(t threadRef, at, p string) []crumb {
	out := []crumb{{"/", threadURL(t) + "/files/" + atQuery(at)}}
	if p == "" {
		return out
	}
	segs := strings.Split(p, "/")
	for i := range segs {
		sub := strings.Join(segs[:i+1], "/")
		out = append(out, crumb{segs[i], threadURL(t) + "/files/" + escapePath(sub) + atQuery(at)})
	}
	return out
}

// filesPage shows a directory or a file at a commit (?at=REF, default
// the head).
func (in *Inspector) filesPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	t, ws, err := in.workspaceOf(r)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	at := r.URL.Query().Get("at")
	snap, err := ws.At(ctx, at)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	p := strings.TrimSuffix(r.PathValue("path"), "/")
	pd := pageData{Crumbs: append(threadCrumbs(t), crumb{"files", ""})}
	if at == "" {
		pd.Live = liveURL(t, snap.Commit().Seq)
	}
	if p != "" {
		if err := satchel.ValidPath(p); err != nil {
			in.fail(w, r, err)
			return
		}
		isFile, err := snap.Exists(ctx, p)
		if err != nil {
			in.fail(w, r, err)
			return
		}
		if isFile {
			d, err := in.fileView(r, t, at, snap, p)
			if err != nil {
				in.fail(w, r, err)
				return
			}
			pd.Title, pd.Data = p+" in "+t.Thread, d
			in.render(w, r, http.StatusOK, "file", pd)
			return
		}
	}
	d := dirData{T: t, At: at, Seq: snap.Commit().Seq, Dir: p, Parts: pathParts(t, at, p),
		Search: searchForm{Action: threadURL(t) + "/search", At: at, Under: p}}
	after := r.URL.Query().Get("after")
	if d.Items, d.Next, err = listDir(ctx, snap, p, after, entriesPerPage); err != nil {
		in.fail(w, r, err)
		return
	}
	if p != "" && len(d.Items) == 0 && after == "" {
		in.fail(w, r, refusal(satchel.ErrNotFound, "file not found: %s", p))
		return
	}
	if d.Next != "" {
		q := url.Values{"after": {d.Next}}
		if at != "" {
			q.Set("at", at)
		}
		d.Next = threadURL(t) + "/files/" + escapePath(p) + "?" + q.Encode()
	}
	pd.Title = "/" + p + " in " + t.Thread
	pd.Data = d
	in.render(w, r, http.StatusOK, "dir", pd)
}

// listDir returns up to limit children of dir (directories and files, in
// path order) after the child named after (a directory's name ends with
// "/"), and the name to continue from ("" when there are no more). A
// directory costs one seek past its subtree, whatever it holds: List is
// asked to start after the largest string under it (a path is UTF-8,
// which has no 0xff byte).
func listDir(ctx context.Context, snap *satchel.Snapshot, dir, after string, limit int) ([]dirEntry, string, error) {
	prefix := ""
	if dir != "" {
		prefix = dir + "/"
	}
	cursor := ""
	if name, isDir := strings.CutSuffix(after, "/"); isDir {
		cursor = prefix + name + "/\xff"
	} else if after != "" {
		cursor = prefix + after
	}
	out := []dirEntry{}
	for len(out) <= limit {
		batch, err := snap.List(ctx, dir, satchel.ListOptions{After: cursor, Limit: 64})
		if err != nil {
			return nil, "", err
		}
		if len(batch) == 0 {
			break
		}
		skipped := false
		for _, p := range batch {
			rel := p[len(prefix):]
			if i := strings.IndexByte(rel, '/'); i >= 0 {
				name := rel[:i]
				out = append(out, dirEntry{Name: name, Path: prefix + name, Dir: true})
				cursor = prefix + name + "/\xff"
				skipped = true
				break
			}
			out = append(out, dirEntry{Name: rel, Path: p})
			cursor = p
			if len(out) > limit {
				break
			}
		}
		if !skipped && len(batch) < 64 {
			break
		}
	}
	if len(out) > limit {
		last := out[limit-1]
		if last.Dir {
			return out[:limit], last.Name + "/", nil
		}
		return out[:limit], last.Name, nil
	}
	return out, "", nil
}

// fileView reads a page of a file's lines (?start=N).
func (in *Inspector) fileView(r *http.Request, t threadRef, at string, snap *satchel.Snapshot, p string) (fileData, error) {
	ctx := r.Context()
	d := fileData{T: t, At: at, Seq: snap.Commit().Seq, Path: p, Parts: pathParts(t, at, p),
		History: threadURL(t) + "/history/" + escapePath(p)}
	info, err := snap.Stat(ctx, p)
	if err != nil {
		return d, err
	}
	d.Info = info
	seq := strconv.FormatInt(d.Seq, 10)
	d.Raw = threadURL(t) + "/raw/" + escapePath(p) + "?at=" + seq
	d.Download = d.Raw + "&download=1"
	d.Blame = threadURL(t) + "/blame/" + escapePath(p) + "?at=" + seq
	d.Permalink = threadURL(t) + "/files/" + escapePath(p) + "?at=" + seq
	d.Kind = "text"
	start, err := intParam(r, "start", 1)
	if err != nil {
		return d, err
	}
	d.Start = int(max(start, 1))
	switch {
	case satchel.IsImage(info.Type):
		d.Kind = "image"
		return d, nil
	case info.Type != satchel.TypeText:
		d.Kind = "binary"
		return d, nil
	}
	if info.Lines == 0 {
		return d, nil
	}
	// ?tail=1 is the last page, whatever the file's length then: at the
	// head, the live page follows the end of a growing log.
	tail := r.URL.Query().Get("tail") != ""
	if tail {
		d.Start = int(max(1, info.Lines-linesPerPage+1))
	}
	view := r.URL.Query().Get("view")
	ext := strings.ToLower(path.Ext(p))
	if (ext == ".md" || ext == ".markdown" || ext == ".json") && info.Size <= maxRenderBytes && r.URL.Query().Get("start") == "" && !tail {
		d.Source = d.Permalink + "&view=source"
		if view != "source" {
			content, err := snap.Read(ctx, p)
			if err != nil {
				return d, err
			}
			if ext == ".json" && view == "tree" {
				if tree, err := jsonTree([]byte(content)); err == nil {
					d.Kind, d.Rendered = "jsontree", tree
					d.View = d.Permalink
					return d, nil
				}
			}
			if ext == ".json" {
				d.Tree = d.Permalink + "&view=tree"
				var buf bytes.Buffer
				if json.Indent(&buf, []byte(content), "", "  ") == nil && bytes.Count(buf.Bytes(), []byte("\n")) < linesPerPage {
					d.Kind = "json"
					for i, line := range strings.Split(buf.String(), "\n") {
						d.Lines = append(d.Lines, fileLine{N: i + 1, Text: capLine(line)})
					}
					return d, nil
				}
			} else {
				dir := path.Dir(p)
				if dir == "." {
					dir = ""
				}
				d.Kind = "markdown"
				d.Rendered = renderMarkdown(content, dir,
					func(q string) string { return in.cfg.Base + threadURL(t) + "/files/" + escapePath(q) + "?at=" + seq },
					func(q string) string { return in.cfg.Base + threadURL(t) + "/raw/" + escapePath(q) + "?at=" + seq })
				return d, nil
			}
		} else {
			d.View, d.Source = d.Permalink, ""
		}
	}
	end := d.Start + linesPerPage - 1
	text, err := snap.ReadWith(ctx, p, satchel.ReadOptions{Bounds: satchel.Lines(d.Start, end)})
	if err != nil {
		// Binary content and the like: say so on the page.
		d.Error = err.Error()
		return d, nil
	}
	for i, line := range strings.Split(text.Text, "\n") {
		if d.Start+i > int(info.Lines) {
			break
		}
		d.Lines = append(d.Lines, fileLine{N: d.Start + i, Text: capLine(line)})
	}
	self := func(s int) string {
		q := url.Values{"start": {strconv.Itoa(s)}}
		if at != "" {
			q.Set("at", at)
		}
		return threadURL(t) + "/files/" + escapePath(p) + "?" + q.Encode()
	}
	if d.Start > 1 {
		d.Prev = self(max(1, d.Start-linesPerPage))
	}
	if int64(end) < info.Lines {
		d.Next = self(end + 1)
		d.Last = threadURL(t) + "/files/" + escapePath(p) + "?tail=1"
		if at != "" {
			d.Last += "&at=" + url.QueryEscape(at)
		}
	}
	return d, nil
}

type fileHistoryData struct {
	T       threadRef
	Path    string
	Changes []historyRow
	Next    string
	Scanned bool
	// Dropped says that retention dropped older commits of a thread
	// walked.
	Dropped string
}

// historyRow is a commit that changed the file, in the thread it
// belongs to (a fork's source, for what the fork inherited).
type historyRow struct {
	satchel.FileChange
	Thread string
}

// fileHistoryPage lists the commits that changed a file, newest first,
// following a fork into its source thread: a fork's first commit holds
// the files it inherited, which it did not add. ?thread= and ?before=
// continue a page (thread: the thread being walked).
func (in *Inspector) fileHistoryPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	t, ws, err := in.workspaceOf(r)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	p := r.PathValue("path")
	before, err := intParam(r, "before", 0)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	v := viewerOf(ctx)
	cur := t.Thread
	if th := r.URL.Query().Get("thread"); th != "" && th != t.Thread {
		if err := satchel.ValidThreadName(th); err != nil {
			in.fail(w, r, err)
			return
		}
		if !v.seesThread(t.Scope, th) {
			in.fail(w, r, refusal(satchel.ErrNotFound, "thread not found: %s", th))
			return
		}
		cur = th
		if ws, err = in.cfg.Store.Workspace(ctx, t.Scope, th, in.fileOptions(ctx)...); err != nil {
			in.fail(w, r, err)
			return
		}
	}
	d := fileHistoryData{T: t, Path: p, Changes: []historyRow{}}
	for hops := 0; ; hops++ {
		page, err := ws.FileHistory(ctx, p, before, commitsPerPage-len(d.Changes))
		if err != nil {
			in.fail(w, r, err)
			return
		}
		for _, c := range page.Changes {
			d.Changes = append(d.Changes, historyRow{FileChange: c, Thread: cur})
		}
		if page.Next != 0 {
			d.Next = threadURL(t) + "/history/" + escapePath(p) + "?" + url.Values{"thread": {cur}, "before": {strconv.FormatInt(page.Next, 10)}}.Encode()
			d.Scanned = len(page.Changes) < commitsPerPage
			break
		}
		// The end of this thread's retained history: its oldest change
		// may be inherited (a fork's first commit) or what retention left.
		n := len(d.Changes)
		if n == 0 || d.Changes[n-1].Kind != "added" || d.Changes[n-1].Thread != cur {
			break
		}
		last := d.Changes[n-1].Commit
		older, err := ws.History(ctx, last.Seq, 1)
		if err != nil {
			in.fail(w, r, err)
			return
		}
		if len(older) > 0 {
			break // a retained commit before it: it did add the file
		}
		o, isFork, err := ws.Origin(ctx)
		if err != nil {
			in.fail(w, r, err)
			return
		}
		switch {
		case isFork && last.Seq == 1:
			d.Changes = d.Changes[:n-1] // inherited, not added
			if !v.seesThread(t.Scope, o.Thread) || hops == 8 {
				d.Dropped = "The file came with the fork from " + o.Thread + "@" + strconv.FormatInt(o.Seq, 10) + "."
				break
			}
			if len(d.Changes) >= commitsPerPage {
				d.Next = threadURL(t) + "/history/" + escapePath(p) + "?" + url.Values{"thread": {o.Thread}, "before": {strconv.FormatInt(o.Seq+1, 10)}}.Encode()
				break
			}
			if ws, err = in.cfg.Store.Workspace(ctx, t.Scope, o.Thread, in.fileOptions(ctx)...); err != nil {
				in.fail(w, r, err)
				return
			}
			cur, before = o.Thread, o.Seq+1
			continue
		case last.Seq > 1:
			d.Changes[n-1].Kind = "present"
			d.Dropped = "Retention dropped the commits of " + cur + " before " + strconv.FormatInt(last.Seq, 10) + ": the file was there at the oldest commit kept."
		}
		break
	}
	in.render(w, r, http.StatusOK, "filehistory", pageData{Title: "History of " + p,
		Crumbs: append(threadCrumbs(t), crumb{"history of " + p, ""}), Data: d})
}

// searchForm is what the search box holds.
type searchForm struct {
	Action                         string
	At, Under, Glob, Grep, Include string
}

type searchData struct {
	T       threadRef
	Seq     int64
	Form    searchForm
	Paths   []string
	Matches []satchel.Match
	Error   string
	Stopped string // why a grep stopped before its end, with the matches so far
	Next    string
	Total   int
}

// searchPage runs a glob or a grep over a commit, a page at a time:
// glob results by offset, grep matches from a file and a count of its
// matches already shown.
func (in *Inspector) searchPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	t, ws, err := in.workspaceOf(r)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	q := r.URL.Query()
	f := searchForm{Action: threadURL(t) + "/search", At: q.Get("at"), Under: q.Get("under"), Glob: q.Get("glob"), Grep: q.Get("grep"), Include: q.Get("include")}
	snap, err := ws.At(ctx, f.At)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	d := searchData{T: t, Seq: snap.Commit().Seq, Form: f}
	next := func(extra url.Values) string {
		v := url.Values{}
		for k, s := range map[string]string{"at": f.At, "under": f.Under, "glob": f.Glob, "grep": f.Grep, "include": f.Include} {
			if s != "" {
				v.Set(k, s)
			}
		}
		for k, s := range extra {
			v[k] = s
		}
		return threadURL(t) + "/search?" + v.Encode()
	}
	switch {
	case f.Glob != "":
		paths, err := snap.Glob(ctx, f.Glob)
		if err != nil {
			d.Error = err.Error()
			break
		}
		off, err := intParam(r, "offset", 0)
		if err != nil {
			in.fail(w, r, err)
			return
		}
		d.Total = len(paths)
		lo := int(min(off, int64(len(paths))))
		hi := min(lo+matchesPerPage, len(paths))
		d.Paths = paths[lo:hi]
		if hi < len(paths) {
			d.Next = next(url.Values{"offset": {strconv.Itoa(hi)}})
		}
	case f.Grep != "":
		from := q.Get("from")
		skip, err := intParam(r, "skip", 0)
		if err != nil {
			in.fail(w, r, err)
			return
		}
		o := satchel.GrepOptions{Include: f.Include, Limit: matchesPerPage + int(skip) + 1, Timeout: in.cfg.GrepTimeout}
		if from != "" {
			o.Accept = func(p string) bool { return p >= from }
		}
		res, err := snap.Grep(ctx, f.Grep, f.Under, o)
		if err != nil {
			d.Error = err.Error()
			break
		}
		d.Stopped = res.Stopped
		ms := res.Matches[min(int(skip), len(res.Matches)):]
		more := len(ms) > matchesPerPage || res.Truncated
		if len(ms) > matchesPerPage {
			ms = ms[:matchesPerPage]
		}
		d.Matches = ms
		if more && len(ms) > 0 {
			last := ms[len(ms)-1].Path
			n := 0
			for _, m := range ms {
				if m.Path == last {
					n++
				}
			}
			if last == from && n == len(ms) {
				n += int(skip)
			}
			d.Next = next(url.Values{"from": {last}, "skip": {strconv.Itoa(n)}})
		}
	}
	pd := pageData{Title: "Search " + t.Thread, Crumbs: append(threadCrumbs(t), crumb{"search", ""}), Data: d}
	code := http.StatusOK
	if d.Error != "" {
		code = http.StatusBadRequest
	}
	in.render(w, r, code, "search", pd)
}
