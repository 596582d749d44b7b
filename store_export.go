package satchel

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/internal/archive"
	"github.com/satchel-dev/satchel/internal/engine"
	"github.com/satchel-dev/satchel/internal/errs"
)

// ExportFormatVersion is the version of the export format this satchel
// writes; Import refuses a file of a newer version.
const ExportFormatVersion = archive.FormatVersion

// ExportOptions says what Export writes.
type ExportOptions struct {
	// Scope limits the export to one scope ("" for every scope).
	Scope string
	// Thread limits it to one thread of Scope: then only the thread, its
	// commits, checkpoints and settings are written.
	Thread string
	// Project, when set, is a project directory (holding stores/ and
	// agents/): its definition files are written, and the documents of
	// every store it defines (expired ones included).
	Project fs.FS
	// Progress, when set, is called as commits and documents are written,
	// with how many of total are done.
	Progress func(done, total int64)
}

// ExportStats counts what an export or an import holds.
type ExportStats struct {
	// Threads counts the threads; SpillAreas the spill areas beside them
	// (a thread's spills, DESIGN §4), which are not threads of their own.
	Threads      int   `json:"threads"`
	SpillAreas   int   `json:"spill_areas"`
	Commits      int   `json:"commits"`
	Blobs        int64 `json:"blobs"`
	Documents    int   `json:"documents"`
	Tokens       int   `json:"tokens"`
	Reviews      int   `json:"reviews"`
	ProjectFiles int   `json:"project_files"`
}

// Export writes the store (or one scope, or one thread) to w in satchel's
// portable export format (docs/export-format.md): every retained commit of
// every thread with its time and metadata, each file's bytes and modified
// time, checkpoints, forks, settings (bounds, retention), documents with
// their history, the project's definition files, the tokens' hashes and
// the reviews' records, open and decided.
// Import loads it into any backend. One store's export is the same bytes
// whatever backend holds it.
//
// Export reads while writers may run. On a backend.Snapshotter
// (PostgreSQL) it reads one snapshot of the whole database; elsewhere each
// thread is read at the commits its log listed when the export reached it.
func (s *Store) Export(ctx context.Context, w io.Writer, o ExportOptions) (ExportStats, error) {
	var st ExportStats
	if sn, ok := backend.As[backend.Snapshotter](s.b); ok {
		// One snapshot for the whole export (PostgreSQL), so that it is
		// consistent across threads while writers run.
		b, release, err := sn.Snapshot(ctx)
		if err != nil {
			return st, err
		}
		defer release()
		s = New(b)
	}
	if o.Thread != "" && o.Scope == "" {
		return st, errs.New(errs.ErrInvalidArgument, "an export of one thread needs its scope")
	}
	scopes := []string{o.Scope}
	if o.Scope == "" {
		var err error
		if scopes, err = s.b.Scopes(ctx); err != nil {
			return st, err
		}
		slices.Sort(scopes)
	} else if err := ValidScope(o.Scope); err != nil {
		return st, err
	}
	ex := &exporter{s: s, o: o, st: &st, wrote: map[*exThread]bool{}}
	// What to export, and its size for the progress bar, first.
	for _, sc := range scopes {
		ts, err := s.b.Threads(ctx, sc)
		if err != nil {
			return st, err
		}
		for _, t := range ts {
			if o.Thread != "" && t.Name != o.Thread {
				continue
			}
			log, err := s.eng.Log(ctx, t.ID, 0, 0)
			if err != nil {
				return st, err
			}
			slices.Reverse(log)
			ex.threads = append(ex.threads, &exThread{t: t, log: log})
			ex.total += int64(len(log))
		}
	}
	if o.Thread != "" && len(ex.threads) == 0 {
		return st, errs.New(errs.ErrNotFound, "thread not found: %s", o.Thread)
	}
	var err error
	if ex.tw, err = archive.NewWriter(w); err != nil {
		return st, err
	}
	if err := ex.run(ctx, scopes); err != nil {
		return st, err
	}
	if err := ex.tw.Close(); err != nil {
		return st, err
	}
	st.Blobs = ex.tw.Blobs()
	return st, nil
}

type exporter struct {
	s       *Store
	o       ExportOptions
	st      *ExportStats
	tw      *archive.Writer
	threads []*exThread
	total   int64
	done    int64
	wrote   map[*exThread]bool // the threads whose records are written
}

type exThread struct {
	t      backend.Thread
	log    []backend.Commit
	forkOf *archive.Ref
}

func (ex *exporter) tick() {
	ex.done++
	if ex.o.Progress != nil {
		ex.o.Progress(ex.done, ex.total)
	}
}

func (ex *exporter) run(ctx context.Context, scopes []string) error {
	whole := ex.o.Thread == ""
	for _, sc := range scopes {
		if whole {
			set, err := ex.s.b.Settings(ctx, sc, "", "")
			if err != nil {
				return err
			}
			if len(set) > 0 {
				if err := ex.tw.Record(archive.Scope{Type: archive.TypeScope, Scope: sc, Settings: set}); err != nil {
					return err
				}
			}
		}
		var ts []*exThread
		for _, t := range ex.threads {
			if t.t.Scope == sc {
				ts = append(ts, t)
			}
		}
		for _, t := range forkOrder(ts) {
			if err := ex.thread(ctx, t); err != nil {
				return err
			}
		}
	}
	if !whole {
		return nil
	}
	done := map[backend.DocID]bool{} // the (store, scope) written, Key unset
	if ex.o.Project != nil {
		if err := ex.project(ctx, done); err != nil {
			return err
		}
	}
	if err := ex.undefinedDocs(ctx, done); err != nil {
		return err
	}
	if err := ex.tokens(ctx); err != nil {
		return err
	}
	return ex.reviews(ctx)
}

// forkOf reads the source a thread's first commit was forked from (its
// metadata says "fork of NAME@SEQ").
func forkOf(log []backend.Commit) *archive.Ref {
	if len(log) == 0 || log[0].Seq != 1 {
		return nil
	}
	var m commitMeta
	if json.Unmarshal(log[0].Meta, &m) != nil || m.Op != "fork" {
		return nil
	}
	rest, ok := strings.CutPrefix(m.Summary, "fork of ")
	if !ok {
		return nil
	}
	name, seqs, ok := strings.Cut(rest, "@")
	seq, err := strconv.ParseInt(seqs, 10, 64)
	if !ok || err != nil || ValidThreadName(name) != nil || seq < 1 {
		return nil
	}
	return &archive.Ref{Thread: name, Seq: seq}
}

// forkOrder orders a scope's threads by name, except that a fork comes
// after the thread it was forked from, so that an import can point at its
// source instead of copying it.
func forkOrder(ts []*exThread) []*exThread {
	sort.Slice(ts, func(i, j int) bool { return ts[i].t.Name < ts[j].t.Name })
	byName := map[string]*exThread{}
	for _, t := range ts {
		t.forkOf = forkOf(t.log)
		byName[t.t.Name] = t
	}
	out := make([]*exThread, 0, len(ts))
	state := map[*exThread]int{} // 1: visiting, 2: placed
	var visit func(t *exThread)
	visit = func(t *exThread) {
		if state[t] != 0 {
			return
		}
		state[t] = 1
		if t.forkOf != nil {
			if src := byName[t.forkOf.Thread]; src != nil && src != t {
				visit(src)
			}
		}
		state[t] = 2
		out = append(out, t)
	}
	for _, t := range ts {
		visit(t)
	}
	return out
}

func (ex *exporter) thread(ctx context.Context, t *exThread) error {
	set, err := ex.s.b.Settings(ctx, t.t.Scope, t.t.Name, "")
	if err != nil {
		return err
	}
	cps, err := ex.s.eng.Checkpoints(ctx, t.t.ID)
	if err != nil {
		return err
	}
	names := map[int64][]string{}
	for _, cp := range cps {
		names[cp.Seq] = append(names[cp.Seq], cp.Name)
	}
	rt := archive.Thread{Type: archive.TypeThread, Scope: t.t.Scope, Name: t.t.Name, Created: archive.Time(t.t.Created), ForkOf: t.forkOf}
	if len(set) > 0 {
		rt.Settings = set
	}
	if n := len(t.log); n > 0 {
		rt.Head = t.log[n-1].Seq
	}
	if err := ex.tw.Record(rt); err != nil {
		return err
	}
	if strings.HasSuffix(t.t.Name, spillThreadSuffix) {
		ex.st.SpillAreas++
	} else {
		ex.st.Threads++
	}
	prev := ex.s.eng.Empty()
	for i, c := range t.log {
		snap, err := ex.s.eng.At(ctx, c)
		if err != nil {
			return err
		}
		rc := archive.Commit{Type: archive.TypeCommit, Scope: t.t.Scope, Thread: t.t.Name, Seq: c.Seq, Time: archive.Time(c.Time), Meta: string(c.Meta)}
		if cs := names[c.Seq]; len(cs) > 0 {
			slices.Sort(cs)
			rc.Checkpoints = cs
		}
		base := prev
		if i == 0 && t.forkOf != nil {
			// A fork points at its source when the source is in the
			// file and the trees are the same (nothing is copied).
			if src, ok := ex.commitOf(ctx, t.t.Scope, *t.forkOf); ok {
				ss, err := ex.s.eng.At(ctx, src)
				if err != nil {
					return err
				}
				if same, err := ex.s.eng.DiffExact(ctx, ss, snap); err != nil {
					return err
				} else if len(same) == 0 {
					rc.Base = t.forkOf
				}
			}
		}
		if rc.Base == nil {
			changes, err := ex.s.eng.DiffExact(ctx, base, snap)
			if err != nil {
				return err
			}
			if rc.Changes, err = ex.changes(ctx, snap, changes); err != nil {
				return err
			}
		}
		if err := ex.tw.Record(rc); err != nil {
			return err
		}
		ex.st.Commits++
		prev = snap
		ex.tick()
	}
	ex.wrote[t] = true
	return nil
}

// commitOf returns a commit of a thread already written to the file.
func (ex *exporter) commitOf(ctx context.Context, scope string, r archive.Ref) (backend.Commit, bool) {
	for _, t := range ex.threads {
		if t.t.Scope != scope || t.t.Name != r.Thread {
			continue
		}
		for _, c := range t.log {
			if c.Seq == r.Seq {
				return c, ex.wrote[t]
			}
		}
	}
	return backend.Commit{}, false
}

func (ex *exporter) changes(ctx context.Context, snap *engine.Snapshot, cs []engine.Change) ([]archive.Change, error) {
	out := make([]archive.Change, 0, len(cs))
	for _, c := range cs {
		if c.Kind == engine.Removed {
			out = append(out, archive.Change{Path: c.Path, Deleted: true})
			continue
		}
		content, err := snap.Content(ctx, c.New)
		if err != nil {
			return nil, err
		}
		name, err := ex.tw.Blob(content)
		if err != nil {
			return nil, err
		}
		out = append(out, archive.Change{Path: c.Path, Blob: name, Size: c.New.Size, ModTime: c.New.ModTime})
	}
	return out, nil
}

// project writes the definition files of the project and the documents of
// its stores.
func (ex *exporter) project(ctx context.Context, done map[backend.DocID]bool) error {
	fsys := ex.o.Project
	var files []string
	for _, pat := range []string{"stores/*.json", "agents/*/agent.json"} {
		m, err := fs.Glob(fsys, pat)
		if err != nil {
			return err
		}
		files = append(files, m...)
	}
	slices.Sort(files)
	for _, f := range files {
		b, err := fs.ReadFile(fsys, f)
		if err != nil {
			return err
		}
		if err := ex.tw.Record(archive.File{Type: archive.TypeFile, Path: path.Clean(f), Content: string(b)}); err != nil {
			return err
		}
		ex.st.ProjectFiles++
	}
	if len(files) == 0 {
		return nil
	}
	p, err := LoadProjectFS(fsys)
	if err != nil {
		return err
	}
	if len(p.Stores()) == 0 {
		return nil
	}
	db, err := ex.s.documents()
	if err != nil {
		return err
	}
	porter, ok := backend.As[backend.Porter](ex.s.b)
	if !ok {
		return errs.New(errs.ErrInvalidArgument, "this backend cannot list the scopes of its documents (backend.Porter): export without a project")
	}
	for _, store := range p.Stores() {
		scopes, err := porter.DocScopes(ctx, store)
		if err != nil {
			return err
		}
		for _, part := range scopes {
			if ex.o.Scope != "" && part != ex.o.Scope {
				continue
			}
			if err := ex.docs(ctx, p, db, store, part, done); err != nil {
				return err
			}
		}
	}
	return nil
}

// undefinedDocs writes the documents of every store and scope that the
// project did not (every one, without a project): the backend lists its
// stores and their keys, so a backup or export made without the project
// directory still holds every document. They are written as stored, by
// key, expired ones included.
func (ex *exporter) undefinedDocs(ctx context.Context, done map[backend.DocID]bool) error {
	porter, ok := backend.As[backend.Porter](ex.s.b)
	if !ok {
		return nil
	}
	stores, err := porter.DocStores(ctx)
	if err != nil || len(stores) == 0 {
		return err
	}
	db, err := ex.s.documents()
	if err != nil {
		return err
	}
	for _, store := range stores {
		scopes, err := porter.DocScopes(ctx, store)
		if err != nil {
			return err
		}
		for _, part := range scopes {
			if done[backend.DocID{Store: store, Scope: part}] || ex.o.Scope != "" && part != ex.o.Scope {
				continue
			}
			after := ""
			for {
				page, err := db.QueryDocs(ctx, keysAfter(store, part, after, 100))
				if err != nil {
					return err
				}
				for _, d := range page {
					if err := ex.doc(ctx, db, store, part, d.Key); err != nil {
						return err
					}
				}
				if len(page) < 100 {
					break
				}
				after = page[len(page)-1].Key
			}
		}
	}
	return nil
}

// keysAfter is the query of the next limit documents of a store's scope
// after the key after, in key order, expired ones included.
func keysAfter(store, part, after string, limit int) backend.DocQuery {
	return backend.DocQuery{
		Store: store, Scope: part, Limit: limit, IncludeExpired: true,
		SQL: func(dialect, jsonCol, keyCol string, argStart int) (string, string, []any) {
			ph := "?"
			if dialect == "postgres" {
				ph = fmt.Sprintf("$%d", argStart)
			}
			return keyCol + " > " + ph, keyCol, []any{after}
		},
		Match:    func(key string, _ map[string]any) bool { return key > after },
		Compare:  func(a string, _ map[string]any, b string, _ map[string]any) int { return strings.Compare(a, b) },
		KeyOrder: 1, After: after,
	}
}

func (ex *exporter) docs(ctx context.Context, p *Project, db backend.Documents, store, part string, done map[backend.DocID]bool) error {
	scope := part
	if scope == "" {
		scope = "default" // a shared store: any scope names its one collection
	}
	c, err := ex.s.Collection(ctx, p, scope, store, IncludeExpired(), Force())
	if err != nil {
		return err
	}
	if c.part != part {
		return nil // documents of a store that is no longer (or not yet) shared: written as stored
	}
	done[backend.DocID{Store: store, Scope: part}] = true
	cursor := ""
	for {
		page, err := c.List(ctx, 100, cursor)
		if err != nil {
			return err
		}
		for _, d := range page.Documents {
			if err := ex.doc(ctx, db, store, part, d.Key); err != nil {
				return err
			}
		}
		if page.NextCursor == "" {
			return nil
		}
		cursor = page.NextCursor
	}
}

// doc writes one document with its history.
func (ex *exporter) doc(ctx context.Context, db backend.Documents, store, part, key string) error {
	cur, hist, ok, err := db.GetDoc(ctx, backend.DocID{Store: store, Scope: part, Key: key}, true) // expired or not
	if err != nil || !ok {
		return err // !ok: removed since the page was read
	}
	rd := archive.Doc{Type: archive.TypeDoc, Store: store, Scope: part, Key: key}
	for i, v := range append([]backend.Doc{cur}, hist...) {
		dv := document(v)
		rv := archive.Version{Version: dv.Version, Updated: archive.Time(dv.Updated), JSON: string(dv.JSON)}
		if i == 0 && !dv.Expires.IsZero() {
			rv.Expires = archive.Time(dv.Expires)
		}
		rd.Versions = append(rd.Versions, rv)
	}
	if err := ex.tw.Record(rd); err != nil {
		return err
	}
	ex.st.Documents++
	return nil
}

func (ex *exporter) tokens(ctx context.Context) error {
	m, err := ex.s.b.Settings(ctx, "", "", tokenKey)
	if err != nil {
		return err
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		var r tokenRecord
		if err := json.Unmarshal(m[k], &r); err != nil {
			return fmt.Errorf("reading token %s: %w", strings.TrimPrefix(k, tokenKey), err)
		}
		if ex.o.Scope != "" && r.Scope != ex.o.Scope {
			continue
		}
		if err := ex.tw.Record(archive.Token{Type: archive.TypeToken, ID: strings.TrimPrefix(k, tokenKey), Scope: r.Scope, Record: string(m[k])}); err != nil {
			return err
		}
		ex.st.Tokens++
	}
	return nil
}

// reviews writes the reviews' records (of the exported scope), in ID
// order.
func (ex *exporter) reviews(ctx context.Context) error {
	m, err := ex.s.b.Settings(ctx, "", "", reviewKey)
	if err != nil {
		return err
	}
	keys := slices.Sorted(maps.Keys(m))
	for _, k := range keys {
		var r reviewRecord
		if err := json.Unmarshal(m[k], &r); err != nil {
			return fmt.Errorf("reading review %s: %w", strings.TrimPrefix(k, reviewKey), err)
		}
		if ex.o.Scope != "" && r.Scope != ex.o.Scope {
			continue
		}
		if err := ex.tw.Record(archive.Review{Type: archive.TypeReview, ID: strings.TrimPrefix(k, reviewKey), Scope: r.Scope, Record: string(m[k])}); err != nil {
			return err
		}
		ex.st.Reviews++
	}
	return nil
}
