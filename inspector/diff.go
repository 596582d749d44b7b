package inspector

import (
	"context"
	"errors"
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
	// Marked, when set, splits Text into Pre, Mid (the changed words) and
	// Post.
	Marked         bool
	Pre, Mid, Post string
}

// fileDiff is one file of a commit or a comparison.
type fileDiff struct {
	Path, Kind string
	From       string // a renamed file's old path
	// File, History and Raw link the file at the commit (the old side's
	// for a removal), its history and its bytes.
	File, History, Raw string
	// Images, when set, shows an image before and after; BinBefore and
	// BinAfter describe binary content.
	Images              *imagePair
	BinBefore, BinAfter *binFacts
	Append              bool // Rows are the lines an append added
	// Split, on the side-by-side view, lays Rows side by side.
	Split []splitRow
	Rows  []diffRow
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

// side is one side of a diff: a thread at a commit.
type side struct {
	T   threadRef
	Seq int64
}

func (sd side) fileURL(p string) string {
	return threadURL(sd.T) + "/files/" + escapePath(p) + "?at=" + strconv.FormatInt(sd.Seq, 10)
}

func (sd side) rawURL(p string) string {
	return threadURL(sd.T) + "/raw/" + escapePath(p) + "?at=" + strconv.FormatInt(sd.Seq, 10)
}

// change is a file of a diff: satchel's change, or a move paired from a
// removal and an addition ("renamed", From the old path).
type change struct {
	Path, Kind, From string
}

// pairMoves turns a removal of X and an addition of Y into one rename of
// X to Y when moves (new path to old, from the commit's summary) names it
// or, among at most maxPair changes, when their contents are the same.
func pairMoves(ctx context.Context, a, b *satchel.Snapshot, all []satchel.Change, moves map[string]string) ([]change, error) {
	const maxPair = 200
	removed := map[string]bool{}
	for _, c := range all {
		if c.Kind == "removed" {
			removed[c.Path] = true
		}
	}
	byHash := map[string]string{} // content hash of a removed file -> its path
	if len(all) <= maxPair {
		for _, c := range all {
			if c.Kind != "removed" {
				continue
			}
			fi, err := a.Stat(ctx, c.Path)
			if err != nil {
				return nil, err
			}
			byHash[fi.Hash] = c.Path
		}
	}
	from := map[string]string{} // added path -> removed path
	for _, c := range all {
		if c.Kind != "added" {
			continue
		}
		if old, ok := moves[c.Path]; ok && removed[old] {
			from[c.Path] = old
			continue
		}
		if len(byHash) > 0 {
			fi, err := b.Stat(ctx, c.Path)
			if err != nil {
				return nil, err
			}
			if old, ok := byHash[fi.Hash]; ok && removed[old] {
				from[c.Path] = old
				delete(byHash, fi.Hash)
			}
		}
	}
	used := map[string]bool{}
	for _, old := range from {
		used[old] = true
	}
	out := make([]change, 0, len(all))
	for _, c := range all {
		switch {
		case c.Kind == "removed" && used[c.Path]:
			continue
		case from[c.Path] != "":
			out = append(out, change{Path: c.Path, Kind: "renamed", From: from[c.Path]})
		default:
			out = append(out, change{Path: c.Path, Kind: c.Kind})
		}
	}
	return out, nil
}

// summaryMoves reads the moves a commit's summary names: "move X -> Y".
func summaryMoves(summary string) map[string]string {
	out := map[string]string{}
	for part := range strings.SplitSeq(summary, "; ") {
		if rest, ok := strings.CutPrefix(part, "move "); ok {
			if x, y, ok := strings.Cut(rest, " -> "); ok {
				out[y] = x
			}
		}
	}
	return out
}

// imagePair is an image diff: the raw URLs of each side ("" where the
// side has none).
type imagePair struct{ Before, After string }

// binFacts describes binary content: type, size and hash.
type binFacts struct {
	Type string
	Size int64
	Hash string
}

// diffFiles makes the diffs of changes between two snapshots, from row
// skip of each; more(path, row) is the URL of a file's rows from row.
// Binary content is never shown as text (images side by side, other
// binary as facts), an append shows the lines it added whatever the
// file's size, and a rename diffs the old path with the new.
func (in *Inspector) diffFiles(ctx context.Context, a, b *satchel.Snapshot, sa, sb side, changes []change, skip int, split bool, more func(path string, row int) string) ([]fileDiff, error) {
	out := make([]fileDiff, 0, len(changes))
	for _, c := range changes {
		fd := fileDiff{Path: c.Path, Kind: c.Kind, From: c.From}
		oldPath := c.Path
		if c.From != "" {
			oldPath = c.From
		}
		if c.Kind != "removed" {
			fd.File, fd.Raw = sb.fileURL(c.Path), sb.rawURL(c.Path)
			fd.History = threadURL(sb.T) + "/history/" + escapePath(c.Path)
		} else {
			fd.File, fd.Raw = sa.fileURL(c.Path), sa.rawURL(c.Path)
			fd.History = threadURL(sa.T) + "/history/" + escapePath(c.Path)
		}
		ca, okA, err := readWhole(ctx, a, oldPath)
		if err != nil {
			return nil, err
		}
		cb, okB, err := readWhole(ctx, b, c.Path)
		if err != nil {
			return nil, err
		}
		ta, tb := satchel.FileType(ca), satchel.FileType(cb)
		if (okA && ta != satchel.TypeText) || (okB && tb != satchel.TypeText) {
			if (!okA || satchel.IsImage(ta)) && (!okB || satchel.IsImage(tb)) {
				fd.Images = &imagePair{}
				if okA {
					fd.Images.Before = sa.rawURL(oldPath)
				}
				if okB {
					fd.Images.After = sb.rawURL(c.Path)
				}
			}
			if okA {
				fd.BinBefore = &binFacts{Type: ta, Size: int64(len(ca)), Hash: satchel.Hash(ca)}
			}
			if okB {
				fd.BinAfter = &binFacts{Type: tb, Size: int64(len(cb)), Hash: satchel.Hash(cb)}
			}
			out = append(out, fd)
			continue
		}
		if okA && okB && len(cb) > len(ca) && strings.HasPrefix(cb, ca) && (ca == "" || strings.HasSuffix(ca, "\n")) {
			// An append: the lines it added, numbered, whatever the size.
			fd.Append = true
			first := countLines(ca) + 1
			fd.Rows = append(fd.Rows, diffRow{Kind: "hunk", Text: "appended from line " + strconv.Itoa(first)})
			n := 0
			for line := range strings.Lines(cb[len(ca):]) {
				if n >= skip+maxDiffRows {
					fd.More = moreOf(more, c, skip+maxDiffRows)
					break
				}
				if n >= skip {
					fd.Rows = append(fd.Rows, diffRow{Kind: "add", New: first + n, Text: capLine(strings.TrimSuffix(line, "\n"))})
				}
				n++
			}
			out = append(out, fd)
			continue
		}
		if len(ca) > maxDiffFileSize || len(cb) > maxDiffFileSize {
			fd.Note = "too large to diff here (over " + humanBytes(maxDiffFileSize) + ")"
			out = append(out, fd)
			continue
		}
		// The contents are read once: the diff is of what was read.
		text := satchel.DiffText("a/"+oldPath, "b/"+c.Path, ca, cb)
		rows, cut := parseUnified(text, skip+maxDiffRows)
		fd.Rows = markWords(rows[min(skip, len(rows)):])
		if split {
			fd.Split = splitRows(fd.Rows)
		}
		if cut {
			fd.More = moreOf(more, c, skip+maxDiffRows)
		}
		out = append(out, fd)
	}
	return out, nil
}

// moreOf is the URL of c's rows from row: a rename's names its old path.
func moreOf(more func(string, int) string, c change, row int) string {
	u := more(c.Path, row)
	if c.From != "" {
		u += "&from_path=" + url.QueryEscape(c.From)
	}
	return u
}

type commitData struct {
	T          threadRef
	Split      bool   // the side-by-side view
	ViewURL    string // the other view's URL
	Commit     satchel.Commit
	Prev       int64
	HasPrev    bool
	Origin     *satchel.Origin
	Changes    []change
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
	d := commitData{T: t, Commit: c, Split: r.URL.Query().Get("view") == "split"}
	d.ViewURL = viewToggle(r, d.Split)
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
	changed, err := pairMoves(ctx, a, b, all, summaryMoves(c.Summary))
	if err != nil {
		in.fail(w, r, err)
		return
	}
	page, err := intParam(r, "page", 1)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	d.Total = len(changed)
	d.Of = max(1, (len(changed)+changesPerPage-1)/changesPerPage)
	d.Page = int(min(max(page, 1), int64(d.Of)))
	lo, hi := (d.Page-1)*changesPerPage, min(d.Page*changesPerPage, len(changed))
	d.Changes = changed[lo:hi]
	from := threadRef{t.Scope, t.Thread}
	fromRef := strconv.FormatInt(d.Prev, 10)
	if d.Origin != nil {
		from, fromRef = threadRef{t.Scope, d.Origin.Thread}, strconv.FormatInt(d.Origin.Seq, 10)
	}
	more := func(path string, row int) string {
		return threadURL(t) + "/compare?" + url.Values{"from_thread": {from.Thread}, "from": {fromRef},
			"to": {strconv.FormatInt(seq, 10)}, "path": {path}, "row": {strconv.Itoa(row)}}.Encode()
	}
	sa, sb := side{from, a.Commit().Seq}, side{t, seq}
	if d.Files, err = in.diffFiles(ctx, a, b, sa, sb, d.Changes, 0, d.Split, more); err != nil {
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
	Split              bool
	ViewURL            string
	FromThread, From   string
	ToThread, To       string
	Path               string
	Asked              bool
	FromSeq, ToSeq     int64
	Changes            []change
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
	d := compareData{T: t, FromThread: q.Get("from_thread"), From: q.Get("from"), ToThread: q.Get("to_thread"), To: q.Get("to"), Path: q.Get("path"),
		Split: q.Get("view") == "split"}
	d.ViewURL = viewToggle(r, d.Split)
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
	var changed []change
	if fp := q.Get("from_path"); fp != "" && d.Path != "" {
		// One renamed file: its old path in from, its new in to.
		for _, p := range []string{fp, d.Path} {
			if err := satchel.ValidPath(p); err != nil {
				in.fail(w, r, err)
				return
			}
		}
		okA, errA := a.Exists(ctx, fp)
		okB, errB := b.Exists(ctx, d.Path)
		if err := errors.Join(errA, errB); err != nil {
			in.fail(w, r, err)
			return
		}
		if !okA || !okB {
			in.fail(w, r, refusal(satchel.ErrNotFound, "file not found: %s in the first commit or %s in the second", fp, d.Path))
			return
		}
		changed = []change{{Path: d.Path, Kind: "renamed", From: fp}}
	} else if d.Path != "" {
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
	if changed == nil {
		moves := map[string]string{}
		if d.FromThread == d.ToThread && d.ToSeq == d.FromSeq+1 {
			moves = summaryMoves(b.Commit().Summary)
		}
		if changed, err = pairMoves(ctx, a, b, all, moves); err != nil {
			in.fail(w, r, err)
			return
		}
	}
	page, err := intParam(r, "page", 1)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	d.Total = len(changed)
	d.Of = max(1, (len(changed)+changesPerPage-1)/changesPerPage)
	d.Page = int(min(max(page, 1), int64(d.Of)))
	lo, hi := (d.Page-1)*changesPerPage, min(d.Page*changesPerPage, len(changed))
	d.Changes = changed[lo:hi]
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
	sa := side{threadRef{t.Scope, d.FromThread}, d.FromSeq}
	sb := side{threadRef{t.Scope, d.ToThread}, d.ToSeq}
	if d.Files, err = in.diffFiles(ctx, a, b, sa, sb, d.Changes, int(row), d.Split, more); err != nil {
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

// markWords marks, in each deleted line paired with an inserted one (the
// i-th deletion of a run with the i-th insertion after it), the words
// between their common start and common end: Pre, Mid and Post split the
// text there.
func markWords(rows []diffRow) []diffRow {
	for i := 0; i < len(rows); {
		if rows[i].Kind != "del" {
			i++
			continue
		}
		j, k := changeRun(rows, i)
		for n := 0; n < j-i && n < k-j; n++ {
			markPair(&rows[i+n], &rows[j+n])
		}
		i = k
	}
	return rows
}

// changeRun returns the ends of the change that starts at rows[i]: its
// deletions are rows[i:j], the insertions that follow them rows[j:k].
func changeRun(rows []diffRow, i int) (j, k int) {
	j = i
	for j < len(rows) && rows[j].Kind == "del" {
		j++
	}
	k = j
	for k < len(rows) && rows[k].Kind == "add" {
		k++
	}
	return j, k
}

// markPair splits two lines into their common start, the changed middle
// and their common end, at word boundaries; lines with nothing in common
// are left whole.
func markPair(a, b *diffRow) {
	x, y := a.Text, b.Text
	p := 0
	for p < len(x) && p < len(y) && x[p] == y[p] {
		p++
	}
	for p > 0 && (isWordByte(x[p-1]) && (p < len(x) && isWordByte(x[p]) || p < len(y) && isWordByte(y[p])) || !isRuneStart(x[min(p, len(x)-1)])) {
		p--
	}
	s := 0
	for s < len(x)-p && s < len(y)-p && x[len(x)-1-s] == y[len(y)-1-s] {
		s++
	}
	for s > 0 && (isWordByte(x[len(x)-s]) && (len(x)-s-1 >= p && isWordByte(x[len(x)-s-1]) || len(y)-s-1 >= p && isWordByte(y[len(y)-s-1])) || !isRuneStart(x[len(x)-s])) {
		s--
	}
	if p == 0 && s == 0 {
		return
	}
	a.Pre, a.Mid, a.Post, a.Marked = x[:p], x[p:len(x)-s], x[len(x)-s:], true
	b.Pre, b.Mid, b.Post, b.Marked = y[:p], y[p:len(y)-s], y[len(y)-s:], true
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// splitRow is a row of the side-by-side view: the old line on the left,
// the new on the right (a hunk or a note spans both).
type splitRow struct {
	Kind        string // "hunk", "note" or "lines"
	Text        string
	Left, Right *diffRow
}

// splitRows lays unified rows side by side: context on both sides, a run
// of deletions beside the run of insertions that follows it.
func splitRows(rows []diffRow) []splitRow {
	var out []splitRow
	for i := 0; i < len(rows); {
		r := &rows[i]
		switch r.Kind {
		case "hunk", "note":
			out = append(out, splitRow{Kind: r.Kind, Text: r.Text})
			i++
		case "ctx":
			out = append(out, splitRow{Kind: "lines", Left: r, Right: r})
			i++
		default:
			j, k := changeRun(rows, i)
			for n := 0; n < max(j-i, k-j); n++ {
				sr := splitRow{Kind: "lines"}
				if n < j-i {
					sr.Left = &rows[i+n]
				}
				if n < k-j {
					sr.Right = &rows[j+n]
				}
				out = append(out, sr)
			}
			i = k
		}
	}
	return out
}

// viewToggle is the request's URL in the other view (unified or split).
func viewToggle(r *http.Request, split bool) string {
	q := r.URL.Query()
	if split {
		q.Del("view")
	} else {
		q.Set("view", "split")
	}
	u := r.URL.Path
	if e := q.Encode(); e != "" {
		u += "?" + e
	}
	return u
}
