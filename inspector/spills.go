package inspector

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/satchel-dev/satchel"
)

type spillsData struct {
	T      threadRef
	Path   string
	Paths  []string
	Lines  []fileLine
	Info   satchel.FileInfo
	Kind   string // "list", "text" or "binary"
	Raw    string
	Prev   string
	Next   string
	Start  int
	Exists bool
}

// spillsPage lists a thread's spills (results too large to return
// inline, kept beside the thread), or shows one of them like a file
// (?raw=1: its bytes).
func (in *Inspector) spillsPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	t, ws, err := in.workspaceOf(r)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	sw := ws.Spills()
	snap, err := sw.At(ctx, "")
	if err != nil {
		in.fail(w, r, err)
		return
	}
	p := strings.TrimSuffix(r.PathValue("path"), "/")
	d := spillsData{T: t, Path: p, Kind: "list"}
	pd := pageData{Title: "Spills of " + t.Thread, Crumbs: append(threadCrumbs(t), crumb{"spills", threadURL(t) + "/spills/"})}
	if p == "" || p == satchel.SpillDir {
		if snap.Commit().Seq != 0 {
			if d.Paths, err = snap.List(ctx, satchel.SpillDir, satchel.ListOptions{Limit: satchel.KeepSpills + 1}); err != nil {
				in.fail(w, r, err)
				return
			}
		}
		pd.Data = d
		in.render(w, r, http.StatusOK, "spills", pd)
		return
	}
	if err := satchel.ValidPath(p); err != nil {
		in.fail(w, r, err)
		return
	}
	if !strings.HasPrefix(p, satchel.SpillDir+"/") {
		in.fail(w, r, refusal(satchel.ErrNotFound, "spill not found: %s (spills are under %s/)", p, satchel.SpillDir))
		return
	}
	content, ok, err := readWhole(ctx, snap, p)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	if !ok {
		in.fail(w, r, refusal(satchel.ErrNotFound, "spill not found: %s (a thread keeps its newest %d)", p, satchel.KeepSpills))
		return
	}
	if r.URL.Query().Get("raw") != "" {
		h := w.Header()
		h.Set("Content-Security-Policy", rawPolicy)
		h.Set("Content-Type", rawType(content))
		h.Set("Content-Disposition", "attachment")
		_, _ = w.Write([]byte(content))
		return
	}
	d.Raw = threadURL(t) + "/spills/" + escapePath(p) + "?raw=1"
	d.Info = satchel.FileInfo{Path: p, Size: int64(len(content)), Type: satchel.FileType(content), Hash: satchel.Hash(content)}
	pd.Title = p + " (spill of " + t.Thread + ")"
	if d.Info.Type != satchel.TypeText {
		d.Kind = "binary"
		pd.Data = d
		in.render(w, r, http.StatusOK, "spills", pd)
		return
	}
	d.Kind = "text"
	start, err := intParam(r, "start", 1)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	d.Start = int(max(start, 1))
	all := strings.Split(strings.TrimSuffix(content, "\n"), "\n")
	lo := min(d.Start-1, len(all))
	hi := min(lo+linesPerPage, len(all))
	for i := lo; i < hi; i++ {
		d.Lines = append(d.Lines, fileLine{N: i + 1, Text: capLine(all[i])})
	}
	self := func(s int) string {
		return threadURL(t) + "/spills/" + escapePath(p) + "?" + url.Values{"start": {strconv.Itoa(s)}}.Encode()
	}
	if lo > 0 {
		d.Prev = self(max(1, lo+1-linesPerPage))
	}
	if hi < len(all) {
		d.Next = self(hi + 1)
	}
	pd.Data = d
	in.render(w, r, http.StatusOK, "spills", pd)
}
