package inspector

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/satchel-dev/satchel"
)

// collection opens a store of the project in scope as the viewer: an
// agent's token reads with that agent's access, an operator (or the local
// user) as an operator, who may also ask for expired documents.
func (in *Inspector) collection(r *http.Request, scope, store string, expired bool) (*satchel.Collection, error) {
	if in.cfg.Project == nil {
		return nil, refusal(satchel.ErrNotFound, "no collections: the inspector was started without a project directory (--dir)")
	}
	v := viewerOf(r.Context())
	var opts []satchel.CollectionOption
	if !v.all {
		opts = append(opts, satchel.AsAgent(v.agent))
	} else if expired {
		opts = append(opts, satchel.IncludeExpired())
	}
	return in.cfg.Store.Collection(r.Context(), in.cfg.Project, scope, store, opts...)
}

type storeRow struct {
	Name   string
	Shared bool
	Error  string
}

type storesData struct {
	Scope  string
	Stores []storeRow
}

// storesPage lists the project's stores the viewer can read.
func (in *Inspector) storesPage(w http.ResponseWriter, r *http.Request) {
	scope, err := in.scopeOf(r)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	if in.cfg.Project == nil {
		in.fail(w, r, refusal(satchel.ErrNotFound, "no collections: the inspector was started without a project directory (--dir)"))
		return
	}
	d := storesData{Scope: scope}
	for _, name := range in.cfg.Project.Stores() {
		c, err := in.collection(r, scope, name, false)
		if err != nil {
			continue // not granted to this agent
		}
		d.Stores = append(d.Stores, storeRow{Name: name, Shared: c.Shared()})
	}
	in.render(w, r, http.StatusOK, "stores", pageData{Title: "Collections of " + scope,
		Crumbs: append(scopeCrumbs(scope), crumb{"collections", ""}), Data: d})
}

type docRow struct {
	satchel.Document
	URL    string
	Fields []string // the values of the chosen fields, as text
}

// maxFields bounds the field columns a document list shows.
const maxFields = 8

// parseFields reads ?fields=: field names, a nested one with dots
// (author.name), separated by commas.
func parseFields(s string) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	var out []string
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if len(f) > 200 {
			return nil, badRequest("a field name is at most 200 bytes")
		}
		out = append(out, f)
	}
	if len(out) > maxFields {
		return nil, badRequest("fields names at most %d fields, was %d", maxFields, len(out))
	}
	return out, nil
}

// fieldText is the value at a dotted path of a document, as text: a
// string as it is, anything else as compact JSON, cut at 200 characters
// ("" when the document has no such field).
func fieldText(doc json.RawMessage, field string) string {
	var v any
	if json.Unmarshal(doc, &v) != nil {
		return ""
	}
	for part := range strings.SplitSeq(field, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		if v, ok = m[part]; !ok {
			return ""
		}
	}
	s, ok := v.(string)
	if !ok {
		b, _ := json.Marshal(v)
		s = string(b)
	}
	if r := []rune(s); len(r) > 200 {
		s = string(r[:199]) + "…"
	}
	return s
}

type documentsData struct {
	Scope, Store     string
	Where, Sort      string
	FieldList        string   // ?fields= as given
	Fields           []string // the chosen field columns
	Expired, CanSeeX bool
	Docs             []docRow
	Next             string
	Error            string
}

// documentsPage lists a store's documents a page at a time, or the
// answer to a query (?where=&sort=), showing a refused query's message
// as the Go API words it.
func (in *Inspector) documentsPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	scope, err := in.scopeOf(r)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	q := r.URL.Query()
	store := r.PathValue("store")
	d := documentsData{Scope: scope, Store: store, Where: q.Get("where"), Sort: q.Get("sort"),
		Expired: q.Get("expired") == "1", CanSeeX: viewerOf(ctx).all}
	c, err := in.collection(r, scope, store, d.Expired)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	d.FieldList = q.Get("fields")
	if d.Fields, err = parseFields(d.FieldList); err != nil {
		in.fail(w, r, err)
		return
	}
	var page satchel.DocumentPage
	if d.Where != "" || d.Sort != "" {
		page, err = c.Query(ctx, satchel.QueryRequest{Where: d.Where, Sort: d.Sort, Limit: documentsPerPage, Cursor: q.Get("cursor")})
	} else {
		page, err = c.List(ctx, documentsPerPage, q.Get("cursor"))
	}
	code := http.StatusOK
	if err != nil {
		var refusal *satchel.Error
		if !errors.As(err, &refusal) && !errors.Is(err, satchel.ErrValidation) {
			in.fail(w, r, err)
			return
		}
		d.Error, code = err.Error(), http.StatusBadRequest
	}
	base := "/s/" + pathSeg(scope) + "/docs/" + url.PathEscape(store) + "/"
	for _, doc := range page.Documents {
		v := url.Values{"key": {doc.Key}}
		if d.Expired {
			v.Set("expired", "1")
		}
		row := docRow{Document: doc, URL: base + "doc?" + v.Encode()}
		for _, f := range d.Fields {
			row.Fields = append(row.Fields, fieldText(doc.JSON, f))
		}
		d.Docs = append(d.Docs, row)
	}
	if page.NextCursor != "" {
		v := url.Values{"cursor": {page.NextCursor}}
		for k, s := range map[string]string{"where": d.Where, "sort": d.Sort, "fields": d.FieldList} {
			if s != "" {
				v.Set(k, s)
			}
		}
		if d.Expired {
			v.Set("expired", "1")
		}
		d.Next = base + "?" + v.Encode()
	}
	in.render(w, r, code, "documents", pageData{Title: "Store " + store,
		Crumbs: append(scopeCrumbs(scope), crumb{"collections", "/s/" + pathSeg(scope) + "/docs/"}, crumb{store, ""}), Data: d})
}

type documentData struct {
	Scope, Store string
	Doc          satchel.Document
	Pretty       string
	History      []versionRow
	// Who set the current version, and its diff from the one before.
	Who  *satchel.Actor
	Diff []diffRow
}

type versionRow struct {
	satchel.Document
	Pretty string
	Who    *satchel.Actor // who set it, when the audit trail has it
	Diff   []diffRow      // its change from the version before it
}

// versionDiff is the diff of two pretty-printed versions, words marked.
func versionDiff(older, newer string) []diffRow {
	rows, _ := parseUnified(satchel.DiffText("a", "b", older, newer), maxDiffRows)
	return markWords(rows)
}

// documentPage shows one document with its history and expiry.
func (in *Inspector) documentPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	scope, err := in.scopeOf(r)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	store := r.PathValue("store")
	c, err := in.collection(r, scope, store, r.URL.Query().Get("expired") == "1")
	if err != nil {
		in.fail(w, r, err)
		return
	}
	doc, err := c.Get(ctx, r.URL.Query().Get("key"), true)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	d := documentData{Scope: scope, Store: store, Doc: doc, Pretty: pretty(doc.JSON)}
	for _, h := range doc.History {
		d.History = append(d.History, versionRow{Document: h, Pretty: pretty(h.JSON)})
	}
	who := map[int64]satchel.Actor{}
	if page, err := in.cfg.Store.Audit(ctx, satchel.AuditQuery{Scope: scope, Collection: store, Key: doc.Key, Limit: 1000}); err == nil {
		for _, e := range page.Entries {
			if e.Op == "set" {
				if _, ok := who[e.Version]; !ok {
					who[e.Version] = e.Actor
				}
			}
		}
	}
	if a, ok := who[doc.Version]; ok {
		d.Who = &a
	}
	if len(d.History) > 0 {
		d.Diff = versionDiff(d.History[0].Pretty, d.Pretty)
	}
	for i := range d.History {
		if a, ok := who[d.History[i].Version]; ok {
			d.History[i].Who = &a
		}
		if i+1 < len(d.History) {
			d.History[i].Diff = versionDiff(d.History[i+1].Pretty, d.History[i].Pretty)
		}
	}
	in.render(w, r, http.StatusOK, "document", pageData{Title: "Document " + doc.Key,
		Crumbs: append(scopeCrumbs(scope), crumb{"collections", "/s/" + pathSeg(scope) + "/docs/"},
			crumb{store, "/s/" + pathSeg(scope) + "/docs/" + url.PathEscape(store) + "/"}, crumb{doc.Key, ""}), Data: d})
}

func pretty(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return string(raw)
	}
	return b.String()
}
