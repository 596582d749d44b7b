package inspector

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"

	"github.com/satchel-dev/satchel"
)

// rawPolicy is the Content-Security-Policy of a file's raw bytes: nothing
// loads, nothing runs, and the document is sandboxed (an origin of its
// own), whatever the bytes are.
const rawPolicy = "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; sandbox"

// activeNames are the file names a browser might render as a document
// with script: their raw bytes are always a download.
var activeNames = map[string]bool{".html": true, ".htm": true, ".xhtml": true, ".svg": true, ".svgz": true,
	".xml": true, ".xsl": true, ".xslt": true, ".js": true, ".mjs": true, ".pdf": true, ".swf": true}

// rawType is the Content-Type the raw bytes are served with: the sniffed
// type of images and the few binary formats satchel knows, text/plain for
// all text (HTML and SVG included: the browser shows them as text).
func rawType(content string) string {
	t := satchel.FileType(content)
	if t == satchel.TypeText {
		return "text/plain; charset=utf-8"
	}
	return t
}

// snapshotAt opens the request's thread at ?at= (the head by default).
func (in *Inspector) snapshotAt(r *http.Request) (threadRef, *satchel.Workspace, *satchel.Snapshot, error) {
	t, ws, err := in.workspaceOf(r)
	if err != nil {
		return t, nil, nil, err
	}
	at := r.URL.Query().Get("at")
	if strings.IndexByte(at, '@') >= 0 {
		return t, nil, nil, badRequest("at names a commit of thread %s (a sequence number, a checkpoint name or head), was %q", t.Thread, at)
	}
	snap, err := ws.At(r.Context(), at)
	return t, ws, snap, err
}

// rawPage answers a file's bytes at a commit, with their type; HTML, SVG
// and the like are a download, never a page of the inspector's origin.
// ?download=1 makes any file a download.
func (in *Inspector) rawPage(w http.ResponseWriter, r *http.Request) {
	_, _, snap, err := in.snapshotAt(r)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	p := r.PathValue("path")
	if err := satchel.ValidPath(p); err != nil {
		in.fail(w, r, err)
		return
	}
	content, ok, err := readWhole(r.Context(), snap, p)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	if !ok {
		in.fail(w, r, refusal(satchel.ErrNotFound, "file not found: %s", p))
		return
	}
	h := w.Header()
	h.Set("Content-Security-Policy", rawPolicy)
	h.Set("Content-Type", rawType(content))
	h.Set("Content-Length", strconv.Itoa(len(content)))
	h.Set("Cache-Control", "private, no-store")
	name := path.Base(p)
	disp := "inline"
	if r.URL.Query().Get("download") != "" || activeNames[strings.ToLower(path.Ext(name))] {
		disp = "attachment"
	}
	h.Set("Content-Disposition", mime.FormatMediaType(disp, map[string]string{"filename": name}))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write([]byte(content))
	}
}

// snapshotPage answers every file of a commit as a gzipped tar, under a
// directory named THREAD-SEQ.
func (in *Inspector) snapshotPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	t, _, snap, err := in.snapshotAt(r)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	// The first page of paths is read before any byte is sent, so that a
	// failure still answers with its status.
	batch, err := snap.List(ctx, "", satchel.ListOptions{Limit: 1000})
	if err != nil {
		in.fail(w, r, err)
		return
	}
	c := snap.Commit()
	dir := t.Thread + "-" + strconv.FormatInt(c.Seq, 10)
	h := w.Header()
	h.Set("Content-Type", "application/gzip")
	h.Set("Content-Security-Policy", rawPolicy)
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": t.Scope + "-" + dir + ".tar.gz"}))
	h.Set("Cache-Control", "private, no-store")
	if r.Method == http.MethodHead {
		w.WriteHeader(http.StatusOK)
		return
	}
	zw := gzip.NewWriter(w)
	tw := tar.NewWriter(zw)
	if err := writeSnapshot(ctx, snap, tw, dir, batch); err != nil {
		// Headers are gone: end the stream short, so the archive is
		// visibly truncated, and log why.
		in.log.Error("writing a snapshot archive", "path", r.URL.Path, "error", err.Error())
		panic(http.ErrAbortHandler)
	}
	_ = tw.Close()
	_ = zw.Close()
}

func writeSnapshot(ctx context.Context, snap *satchel.Snapshot, tw *tar.Writer, dir string, batch []string) error {
	mod := snap.Commit().Time
	for len(batch) > 0 {
		for _, p := range batch {
			content, err := snap.Read(ctx, p)
			if err != nil {
				return err
			}
			if err := tw.WriteHeader(&tar.Header{Name: dir + "/" + p, Mode: 0o644, Size: int64(len(content)), ModTime: mod,
				Typeflag: tar.TypeReg, Format: tar.FormatPAX}); err != nil {
				return err
			}
			if _, err := tw.Write([]byte(content)); err != nil {
				return err
			}
		}
		if len(batch) < 1000 {
			break
		}
		var err error
		if batch, err = snap.List(ctx, "", satchel.ListOptions{Limit: 1000, After: batch[len(batch)-1]}); err != nil {
			return err
		}
	}
	return nil
}

// blameRow is a line of a blame page; Show is set on the first line of
// a run of lines from the same commit.
type blameRow struct {
	satchel.BlameLine
	Show bool
	Link string // the commit's page (when the viewer sees its thread)
}

type blameData struct {
	T          threadRef
	At         string
	Seq        int64
	Path       string
	Rows       []blameRow
	Error      string
	Prev, Next string
	File       string
}

// blamePage shows, for each line of a file at a commit, the commit, agent
// and time that last changed it, following a fork into its source.
func (in *Inspector) blamePage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	t, ws, snap, err := in.snapshotAt(r)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	p := r.PathValue("path")
	if err := satchel.ValidPath(p); err != nil {
		in.fail(w, r, err)
		return
	}
	info, err := snap.Stat(ctx, p)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	start, err := intParam(r, "start", 1)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	s := int(max(start, 1))
	seq := snap.Commit().Seq
	d := blameData{T: t, At: r.URL.Query().Get("at"), Seq: seq, Path: p,
		File: threadURL(t) + "/files/" + escapePath(p) + "?at=" + strconv.FormatInt(seq, 10)}
	if v := viewerOf(ctx); !v.all && v.thread != "" {
		if ws, err = in.cfg.Store.Workspace(ctx, t.Scope, t.Thread, append(in.fileOptions(ctx), satchel.OnlyThread())...); err != nil {
			in.fail(w, r, err)
			return
		}
	}
	if info.Lines > 0 && int64(s) <= info.Lines {
		lines, err := ws.Blame(ctx, p, strconv.FormatInt(seq, 10), s, s+linesPerPage-1)
		if err != nil && !errors.Is(err, satchel.ErrInvalidArgument) {
			in.fail(w, r, err)
			return
		} else if err != nil {
			d.Error = err.Error()
		}
		v := viewerOf(ctx)
		for i, l := range lines {
			l.Text = capLine(l.Text)
			row := blameRow{BlameLine: l}
			row.Show = i == 0 || lines[i-1].Thread != l.Thread || lines[i-1].Commit.Seq != l.Commit.Seq
			if v.seesThread(t.Scope, l.Thread) {
				row.Link = threadURL(threadRef{t.Scope, l.Thread}) + "/c/" + strconv.FormatInt(l.Commit.Seq, 10)
			}
			d.Rows = append(d.Rows, row)
		}
	}
	self := func(n int) string {
		return threadURL(t) + "/blame/" + escapePath(p) + "?" + url.Values{"at": {strconv.FormatInt(seq, 10)}, "start": {strconv.Itoa(n)}}.Encode()
	}
	if s > 1 {
		d.Prev = self(max(1, s-linesPerPage))
	}
	if int64(s+linesPerPage-1) < info.Lines {
		d.Next = self(s + linesPerPage)
	}
	in.render(w, r, http.StatusOK, "blame", pageData{Title: "Blame of " + p,
		Crumbs: append(threadCrumbs(t), crumb{"blame of " + p, ""}), Data: d})
}
