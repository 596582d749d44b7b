package inspector

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/satchel-dev/satchel"
)

// diffRow is one line of a unified diff as a page shows it: a hunk
// header, context, a deletion or an insertion, with the line numbers of
// the old and new file (0 where a side has none).
type diffRow struct {
	Kind     string // "hunk", "ctx", "del", "add", "note"
	Old, New int
	Text     string
}

// fileDiff is one file of a commit or a comparison.
type fileDiff struct {
	Path, Kind string
	Rows       []diffRow
	// More, when set, is the page with the diff's next rows: a diff
	// shows at most maxDiffRows rows a page.
	More string
	// Note explains a diff that is not shown (too large, binary).
	Note string
}

// parseUnified turns the unified diff udiff writes into rows, numbering
// each line; at most limit rows.
func parseUnified(s string, limit int) (rows []diffRow, cut bool) {
	var oldN, newN int
	for line := range strings.Lines(s) {
		line = strings.TrimSuffix(line, "\n")
		if len(rows) == limit {
			return rows, true
		}
		switch {
		case strings.HasPrefix(line, "--- ") && oldN == 0 && newN == 0 && len(rows) == 0,
			strings.HasPrefix(line, "+++ ") && oldN == 0 && newN == 0 && len(rows) == 0:
			// file header: the page names the file itself
		case strings.HasPrefix(line, "@@"):
			o, n, ok := hunkStarts(line)
			if !ok {
				rows = append(rows, diffRow{Kind: "note", Text: line})
				continue
			}
			oldN, newN = o, n
			rows = append(rows, diffRow{Kind: "hunk", Text: line})
		case strings.HasPrefix(line, "-"):
			rows = append(rows, diffRow{Kind: "del", Old: oldN, Text: capLine(line[1:])})
			oldN++
		case strings.HasPrefix(line, "+"):
			rows = append(rows, diffRow{Kind: "add", New: newN, Text: capLine(line[1:])})
			newN++
		case strings.HasPrefix(line, " ") || line == "":
			rows = append(rows, diffRow{Kind: "ctx", Old: oldN, New: newN, Text: capLine(strings.TrimPrefix(line, " "))})
			oldN++
			newN++
		default: // "\ No newline at end of file"
			rows = append(rows, diffRow{Kind: "note", Text: line})
		}
	}
	return rows, false
}

// hunkStarts reads the first line numbers of "@@ -a,b +c,d @@" (a side
// of an empty range starts after its line: "-0,0" is before line 1).
func hunkStarts(h string) (oldStart, newStart int, ok bool) {
	f := strings.Fields(h)
	if len(f) < 4 || f[0] != "@@" || !strings.HasPrefix(f[1], "-") || !strings.HasPrefix(f[2], "+") {
		return 0, 0, false
	}
	side := func(s string) (int, bool) {
		start, count, has := strings.Cut(s[1:], ",")
		n, err := strconv.Atoi(start)
		if err != nil || n < 0 {
			return 0, false
		}
		if has && count == "0" {
			n++
		}
		return max(n, 1), true
	}
	o, ok1 := side(f[1])
	n, ok2 := side(f[2])
	return o, n, ok1 && ok2
}

func capLine(s string) string {
	if len(s) <= maxLineChars {
		return s
	}
	cut := maxLineChars
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + " … (line cut)"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// diffFiles makes the diffs of changes between two snapshots, from row
// skip of each; more(path, row) is the URL of a file's rows from row.
func (in *Inspector) diffFiles(ctx context.Context, a, b *satchel.Snapshot, changes []satchel.Change, skip int, more func(path string, row int) string) ([]fileDiff, error) {
	out := make([]fileDiff, 0, len(changes))
	for _, c := range changes {
		fd := fileDiff{Path: c.Path, Kind: c.Kind}
		if big, err := tooLarge(ctx, a, b, c.Path); err != nil {
			return nil, err
		} else if big {
			fd.Note = "too large to diff here (over " + humanBytes(maxDiffFileSize) + ")"
			out = append(out, fd)
			continue
		}
		text, err := in.cfg.Store.DiffSnapshotFile(ctx, a, b, c.Path)
		if err != nil {
			return nil, err
		}
		rows, cut := parseUnified(text, skip+maxDiffRows)
		fd.Rows = rows[min(skip, len(rows)):]
		if cut {
			fd.More = more(c.Path, skip+maxDiffRows)
		}
		out = append(out, fd)
	}
	return out, nil
}

func tooLarge(ctx context.Context, a, b *satchel.Snapshot, path string) (bool, error) {
	for _, s := range []*satchel.Snapshot{a, b} {
		ok, err := s.Exists(ctx, path)
		if err != nil {
			return false, err
		}
		if !ok {
			continue
		}
		// Stat reads the content (to hash it); the diff reads it anyway.
		fi, err := s.Stat(ctx, path)
		if err != nil {
			return false, err
		}
		if fi.Size > maxDiffFileSize {
			return true, nil
		}
	}
	return false, nil
}

type commitData struct {
	T          threadRef
	Commit     satchel.Commit
	Prev       int64
	HasPrev    bool
	Origin     *satchel.Origin
	Changes    []satchel.Change
	Files      []fileDiff
	Page, Of   int
	PrevPage   string
	NextPage   string
	Total      int
	CompareURL string
}

// commitPage shows one commit: the files it added, changed and removed
// against the retained commit before it, each with its diff.
func (in *Inspector) commitPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	t, ws, err := in.workspaceOf(r)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	seq, err := strconv.ParseInt(r.PathValue("seq"), 10, 64)
	if err != nil || seq < 1 {
		in.fail(w, r, badRequest("a commit is a sequence number from 1, was %q", r.PathValue("seq")))
		return
	}
	c, err := commitOf(ctx, ws, seq)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	d := commitData{T: t, Commit: c}
	if prev, err := ws.History(ctx, seq, 1); err != nil {
		in.fail(w, r, err)
		return
	} else if len(prev) == 1 {
		d.Prev, d.HasPrev = prev[0].Seq, true
	}
	// A fork's first commit is compared with the commit it forked from
	// (they hold the same tree), not with the empty tree.
	var a *satchel.Snapshot
	if o, ok, err := ws.Origin(ctx); err != nil {
		in.fail(w, r, err)
		return
	} else if ok && seq == 1 && viewerOf(ctx).seesThread(t.Scope, o.Thread) {
		if pw, err := in.cfg.Store.Workspace(ctx, t.Scope, o.Thread, in.fileOptions(ctx)...); err == nil {
			if a, err = pw.At(ctx, strconv.FormatInt(o.Seq, 10)); err == nil {
				d.Origin = &o
			}
		}
	}
	if a == nil {
		if a, err = ws.At(ctx, strconv.FormatInt(d.Prev, 10)); err != nil {
			in.fail(w, r, err)
			return
		}
	}
	b, err := ws.At(ctx, strconv.FormatInt(seq, 10))
	if err != nil {
		in.fail(w, r, err)
		return
	}
	all, err := in.cfg.Store.DiffSnapshots(ctx, a, b)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	page, err := intParam(r, "page", 1)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	d.Total = len(all)
	d.Of = max(1, (len(all)+changesPerPage-1)/changesPerPage)
	d.Page = int(min(max(page, 1), int64(d.Of)))
	lo, hi := (d.Page-1)*changesPerPage, min(d.Page*changesPerPage, len(all))
	d.Changes = all[lo:hi]
	from := threadRef{t.Scope, t.Thread}
	fromRef := strconv.FormatInt(d.Prev, 10)
	if d.Origin != nil {
		from, fromRef = threadRef{t.Scope, d.Origin.Thread}, strconv.FormatInt(d.Origin.Seq, 10)
	}
	more := func(path string, row int) string {
		return threadURL(t) + "/compare?" + url.Values{"from_thread": {from.Thread}, "from": {fromRef},
			"to": {strconv.FormatInt(seq, 10)}, "path": {path}, "row": {strconv.Itoa(row)}}.Encode()
	}
	if d.Files, err = in.diffFiles(ctx, a, b, d.Changes, 0, more); err != nil {
		in.fail(w, r, err)
		return
	}
	self := threadURL(t) + "/c/" + strconv.FormatInt(seq, 10) + "?page="
	if d.Page > 1 {
		d.PrevPage = self + strconv.Itoa(d.Page-1)
	}
	if d.Page < d.Of {
		d.NextPage = self + strconv.Itoa(d.Page+1)
	}
	in.render(w, r, http.StatusOK, "commit", pageData{Title: "Commit " + strconv.FormatInt(seq, 10) + " of " + t.Thread,
		Crumbs: append(threadCrumbs(t), crumb{"commit " + strconv.FormatInt(seq, 10), ""}), Data: d})
}

type compareData struct {
	T                  threadRef
	FromThread, From   string
	ToThread, To       string
	Path               string
	Asked              bool
	FromSeq, ToSeq     int64
	Changes            []satchel.Change
	Files              []fileDiff
	Total, Page, Of    int
	PrevPage, NextPage string
	Threads            []string
}

// comparePage compares two commits, of this thread or of two threads of
// the scope (a fork and its parent), for the whole tree or one file.
func (in *Inspector) comparePage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	t, _, err := in.workspaceOf(r)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	q := r.URL.Query()
	d := compareData{T: t, FromThread: q.Get("from_thread"), From: q.Get("from"), ToThread: q.Get("to_thread"), To: q.Get("to"), Path: q.Get("path")}
	if d.FromThread == "" {
		d.FromThread = t.Thread
	}
	if d.ToThread == "" {
		d.ToThread = t.Thread
	}
	v := viewerOf(ctx)
	if infos, err := in.cfg.Store.Threads(ctx, t.Scope); err == nil {
		for _, ti := range infos {
			if v.seesThread(t.Scope, ti.Name) {
				d.Threads = append(d.Threads, ti.Name)
			}
		}
	}
	pd := pageData{Title: "Compare in " + t.Thread, Crumbs: append(threadCrumbs(t), crumb{"compare", ""})}
	d.Asked = d.From != "" || d.To != ""
	if !d.Asked {
		pd.Data = d
		in.render(w, r, http.StatusOK, "compare", pd)
		return
	}
	if d.To == "" {
		d.To = "head"
	}
	if d.From == "" {
		d.From = "head"
	}
	snap := func(thread, ref string) (*satchel.Snapshot, error) {
		if err := satchel.ValidThreadName(thread); err != nil {
			return nil, err
		}
		if !v.seesThread(t.Scope, thread) {
			return nil, refusal(satchel.ErrNotFound, "thread not found: %s", thread)
		}
		ws, err := in.cfg.Store.Workspace(ctx, t.Scope, thread, in.fileOptions(ctx)...)
		if err != nil {
			return nil, err
		}
		return ws.At(ctx, ref)
	}
	a, err := snap(d.FromThread, d.From)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	b, err := snap(d.ToThread, d.To)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	d.FromSeq, d.ToSeq = a.Commit().Seq, b.Commit().Seq
	var all []satchel.Change
	if d.Path != "" {
		if err := satchel.ValidPath(d.Path); err != nil {
			in.fail(w, r, err)
			return
		}
		okA, err := a.Exists(ctx, d.Path)
		if err != nil {
			in.fail(w, r, err)
			return
		}
		okB, err := b.Exists(ctx, d.Path)
		if err != nil {
			in.fail(w, r, err)
			return
		}
		switch {
		case okA && okB:
			all = []satchel.Change{{Path: d.Path, Kind: "changed"}}
		case okA:
			all = []satchel.Change{{Path: d.Path, Kind: "removed"}}
		case okB:
			all = []satchel.Change{{Path: d.Path, Kind: "added"}}
		default:
			in.fail(w, r, refusal(satchel.ErrNotFound, "file not found: %s (in neither commit)", d.Path))
			return
		}
	} else if all, err = in.cfg.Store.DiffSnapshots(ctx, a, b); err != nil {
		in.fail(w, r, err)
		return
	}
	page, err := intParam(r, "page", 1)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	d.Total = len(all)
	d.Of = max(1, (len(all)+changesPerPage-1)/changesPerPage)
	d.Page = int(min(max(page, 1), int64(d.Of)))
	lo, hi := (d.Page-1)*changesPerPage, min(d.Page*changesPerPage, len(all))
	d.Changes = all[lo:hi]
	row, err := intParam(r, "row", 0)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	more := func(path string, next int) string {
		v := url.Values{"from_thread": {d.FromThread}, "from": {d.From}, "to_thread": {d.ToThread}, "to": {d.To},
			"path": {path}, "row": {strconv.Itoa(next)}}
		return threadURL(t) + "/compare?" + v.Encode()
	}
	if d.Path == "" {
		row = 0 // rows page one file's diff
	}
	if d.Files, err = in.diffFiles(ctx, a, b, d.Changes, int(row), more); err != nil {
		in.fail(w, r, err)
		return
	}
	// A file asked for by path whose content is equal shows no rows.
	rest := r.URL.Query()
	rest.Del("page")
	rest.Del("row")
	self := threadURL(t) + "/compare?" + rest.Encode()
	if d.Page > 1 {
		d.PrevPage = self + "&page=" + strconv.Itoa(d.Page-1)
	}
	if d.Page < d.Of {
		d.NextPage = self + "&page=" + strconv.Itoa(d.Page+1)
	}
	pd.Data = d
	in.render(w, r, http.StatusOK, "compare", pd)
}
