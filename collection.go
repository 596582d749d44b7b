package satchel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"strings"
	"sync"
	"time"
	"weak"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/internal/collection"
	"github.com/satchel-dev/satchel/internal/docengine"
	"github.com/satchel-dev/satchel/internal/engine"
	"github.com/satchel-dev/satchel/internal/errs"
)

// Project is the collection definitions of a project directory: its
// stores (stores/<name>.json) and agents (agents/<name>/agent.json), as
// DESIGN §3 defines them. Load it once with LoadProject and share it: it
// is immutable and safe for concurrent use.
type Project struct {
	p *collection.Project
}

// LoadProject reads the definitions of the project directory dir. Every
// problem of every file is reported at once, as one *ValidationError whose
// violations name the file, the field path and what is wrong. Either
// subdirectory may be missing; a dir that does not exist is ErrNotFound.
func LoadProject(dir string) (*Project, error) {
	p, err := collection.LoadProject(dir)
	if err != nil {
		return nil, err
	}
	return &Project{p: p}, nil
}

// LoadProjectFS is LoadProject over any file system (an embed.FS, a
// testing/fstest.MapFS): fsys holds stores/ and agents/ at its root.
func LoadProjectFS(fsys fs.FS) (*Project, error) {
	p, err := collection.LoadProjectFS(fsys)
	if err != nil {
		return nil, err
	}
	return &Project{p: p}, nil
}

// Stores lists the project's store names, sorted.
func (p *Project) Stores() []string { return append([]string(nil), p.p.StoreNames...) }

// Agents lists the project's agent names, sorted.
func (p *Project) Agents() []string { return append([]string(nil), p.p.AgentNames...) }

// ReviewAgent reports whether agent's agent.json says "review": true: its
// changes wait for review (ForReview).
func (p *Project) ReviewAgent(agent string) bool {
	if p == nil {
		return false
	}
	a, ok := p.p.Agents[agent]
	return ok && a.Review
}

// Skipped says, one line each, which entries of stores/ and agents/ the
// load did not read: special files such as FIFOs, which could block it.
func (p *Project) Skipped() []string { return append([]string(nil), p.p.Skipped...) }

// Warnings lists the problems of the definitions that do not stop the
// load, one a line ("FILE: PATH: message"), such as
// `agents/writer/agent.json: stores.companies: "rw" on a shared store;
// agents only read shared stores`. satchel check prints them.
func (p *Project) Warnings() []string { return append([]string(nil), p.p.Warnings...) }

// AgentFiles returns the file rules of an agent's agent.json ("files"):
// nil when the agent has none, or when there is no such agent (rw on
// every path).
func (p *Project) AgentFiles(agent string) FileRules {
	if p == nil {
		return nil
	}
	if a, ok := p.p.Agents[agent]; ok {
		return a.Files
	}
	return nil
}

// agentReads reports whether the project grants agent read access to
// store, as Collection with AsAgent checks it (no project: no store).
func (p *Project) agentReads(agent, store string) bool {
	return p != nil && p.p.Authorize(agent, store, collection.OpGet) == nil
}

// StoreDefinitionSchema returns a JSON Schema of the store definition
// format (stores/<name>.json), for editors.
func StoreDefinitionSchema() []byte { return collection.StoreDefinitionSchema() }

// AgentDefinitionSchema returns a JSON Schema of agents/<name>/agent.json,
// for editors.
func AgentDefinitionSchema() []byte { return collection.AgentDefinitionSchema() }

// Document is one version of a document of a collection.
type Document struct {
	Key     string `json:"key"`
	Version int64  `json:"version"`
	// Updated is when this version was set; Expires when it expires (the
	// zero time: never). An operator's IncludeExpired can show documents
	// whose Expires is past.
	Updated time.Time `json:"updated_at"`
	Expires time.Time `json:"expires_at,omitzero"`
	// JSON is the document, as set, with its datetimes in UTC, in their
	// shortest RFC 3339 form ("2026-01-02T01:04:05Z").
	JSON json.RawMessage `json:"document"`
	// History holds the previous versions, newest first, when Get was asked
	// for them.
	History []Document `json:"history,omitempty"`
}

// Decode unmarshals the document into v. Into a map or an interface,
// numbers are json.Number, exactly as they were set.
func (d Document) Decode(v any) error {
	dec := json.NewDecoder(strings.NewReader(string(d.JSON)))
	dec.UseNumber()
	return dec.Decode(v)
}

// DocumentPage is one page of a query or a list.
type DocumentPage struct {
	Documents []Document `json:"documents"`
	// NextCursor, when not empty, fetches the next page: pass it back with
	// the same where and sort.
	NextCursor string `json:"next_cursor,omitempty"`
}

// QueryRequest is a query of a collection (DESIGN §3): Where is conditions
// joined by AND ("" matches every document), Sort a field or -field
// ("" is the key), Limit the page size (0: 20; at most 100), Cursor the
// previous page's NextCursor.
type QueryRequest struct {
	Where  string
	Sort   string
	Limit  int
	Cursor string
}

// CollectionOption configures Store.Collection.
type CollectionOption func(*collOpts)

type collOpts struct {
	agent          string
	thread         string
	actor          *Actor
	includeExpired bool
	force          bool
}

// CollectionActor makes the collection record a as the actor of every
// change it makes, in the log of document changes that Store.Audit lists
// (without it: the agent of AsAgent, or an operator). WorkspaceActor is
// the same for a workspace's commits.
func CollectionActor(a Actor) CollectionOption { return func(o *collOpts) { o.actor = &a } }

// AsAgent makes the collection act for an agent of the project: its
// access applies (read grants Get, Query and List; rw adds Set and
// Remove; never on a shared store), and a store it was not granted is
// refused with ErrAccessDenied. Without AsAgent the caller is an operator.
func AsAgent(name string) CollectionOption { return func(o *collOpts) { o.agent = name } }

// CallerThread names the thread of the collection's caller (an agent's
// session, a script's run): the idempotency keys of its changes are
// claimed in that thread, as a workspace's are in its own, so that a key
// claimed on one thread does not exist for another. Without it they are
// claimed for a caller bound to no thread.
func CallerThread(name string) CollectionOption { return func(o *collOpts) { o.thread = name } }

// IncludeExpired makes Get, Query and List show documents that have
// expired but not yet been swept. It is for operators: with AsAgent it is
// refused.
func IncludeExpired() CollectionOption { return func(o *collOpts) { o.includeExpired = true } }

// Force lets an operator Remove from a store that is not deletable (the
// CLI's --force). With AsAgent it is refused.
func Force() CollectionOption { return func(o *collOpts) { o.force = true } }

// Collection is one store of a project in one scope (or the one shared
// collection of a shared store). It is safe for concurrent use, and cheap
// to make: open one per request if that is convenient.
type Collection struct {
	s     *Store
	st    *collection.Store
	proj  *Project
	docs  *docengine.Engine // the store's
	scope string            // the caller's scope
	part  string            // the partition: scope, or "" for a shared store
	o     collOpts
	refs  bool // the schema has ref fields, which a set checks
}

// hasRefs reports whether fields (or fields below them) are refs.
func hasRefs(fields map[string]*collection.Field) bool {
	for _, f := range fields {
		for f.Type == collection.TypeArray && f.Item != nil {
			f = f.Item
		}
		if f.Type == collection.TypeRef || f.Type == collection.TypeObject && hasRefs(f.Fields) {
			return true
		}
	}
	return false
}

// documents returns the backend's collections storage.
func (s *Store) documents() (backend.Documents, error) {
	d, ok := backend.As[backend.Documents](s.b)
	if !ok {
		return nil, errs.New(errs.ErrInvalidArgument, "this backend (%T) does not store collections: it does not implement backend.Documents", s.b)
	}
	s.docs.Init(s.b, d)
	return d, nil
}

// Collection returns a store of the project, in scope. Agents' access is
// checked here (a store the agent was not granted: ErrAccessDenied) and
// again by each operation.
func (s *Store) Collection(ctx context.Context, p *Project, scope, store string, opts ...CollectionOption) (*Collection, error) {
	if p == nil {
		return nil, errs.New(errs.ErrInvalidArgument, "no project: load one with LoadProject")
	}
	if err := ValidScope(scope); err != nil {
		return nil, err
	}
	var o collOpts
	for _, opt := range opts {
		opt(&o)
	}
	st, err := p.p.Store(store)
	if err != nil {
		return nil, err
	}
	if o.agent != "" {
		if o.includeExpired {
			return nil, errs.New(errs.ErrAccessDenied, "agent %q cannot see expired documents: IncludeExpired is for operators", o.agent)
		}
		if o.force {
			return nil, errs.New(errs.ErrAccessDenied, "agent %q cannot force a remove: Force is for operators", o.agent)
		}
		if err := p.p.Authorize(o.agent, store, collection.OpGet); err != nil {
			return nil, err
		}
	}
	if _, err := s.documents(); err != nil {
		return nil, err
	}
	if err := s.ensureIndexes(ctx, st); err != nil {
		return nil, err
	}
	c := &Collection{s: s, st: st, proj: p, docs: &s.docs, scope: scope, part: scope, o: o, refs: hasRefs(st.Fields)}
	if st.Shared {
		c.part = ""
	}
	return c, nil
}

// ensured remembers, per Store, the stores whose indexes are in place.
var ensured sync.Map // weak.Pointer[Store] → *sync.Map of store name + signature

func (s *Store) ensureIndexes(ctx context.Context, st *collection.Store) error {
	wp := weak.Make(s)
	v, ok := ensured.Load(wp)
	if !ok {
		var loaded bool
		v, loaded = ensured.LoadOrStore(wp, &sync.Map{})
		if !loaded {
			runtime.AddCleanup(s, func(wp weak.Pointer[Store]) { ensured.Delete(wp) }, wp)
		}
	}
	done := v.(*sync.Map)
	sig := st.Name + "\x00" + strings.Join(st.IndexExprs(collection.SQLite, "doc"), "\x00") + "\x00" + strings.Join(st.IndexExprs(collection.Postgres, "doc"), "\x00")
	if _, ok := done.Load(sig); ok {
		return nil
	}
	var ixs []backend.DocIndex
	for i, f := range st.Indexes {
		ixs = append(ixs, backend.DocIndex{Field: f, Expr: func(dialect, col string) string {
			return st.IndexExprs(dialectOf(dialect), col)[i]
		}})
	}
	if err := s.docs.EnsureIndexes(ctx, st.Name, ixs); err != nil {
		return err
	}
	done.Store(sig, true)
	return nil
}

func dialectOf(name string) collection.Dialect {
	switch name {
	case "sqlite":
		return collection.SQLite
	case "postgres":
		return collection.Postgres
	}
	panic("satchel: unknown SQL dialect " + name)
}

// Name returns the store's name.
func (c *Collection) Name() string { return c.st.Name }

// Shared reports whether the store is shared: one collection for every
// scope, read-only to agents.
func (c *Collection) Shared() bool { return c.st.Shared }

// authorize checks an operation against the agent's access; operators may
// do anything but remove from a store that is not deletable, which needs
// Force.
func (c *Collection) authorize(op string) error {
	if c.o.agent != "" {
		return c.proj.p.Authorize(c.o.agent, c.st.Name, op)
	}
	if op == collection.OpRemove {
		return c.st.CheckRemove(c.o.force)
	}
	return nil
}

// toDoc turns a caller's document into a map. owned says that no one
// else holds it (it was decoded here); otherwise it is the caller's map,
// which Set must not keep.
func toDoc(doc any) (m map[string]any, owned bool, err error) {
	var v any
	switch x := doc.(type) {
	case json.RawMessage:
		m, err = decodeDoc(x)
		return m, true, err
	case []byte:
		m, err = decodeDoc(x)
		return m, true, err
	case string:
		m, err = decodeDoc([]byte(x))
		return m, true, err
	case map[string]any:
		if plainDoc(x) {
			return x, false, nil
		}
		if c, ok := copyDoc(x); ok {
			return c.(map[string]any), true, nil
		}
		v = x
	default:
		v = x
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, false, errs.New(errs.ErrInvalidArgument, "document cannot be encoded as JSON: %v", err)
	}
	m, err = decodeDoc(b)
	return m, true, err
}

func decodeDoc(b []byte) (map[string]any, error) {
	v, err := decodeJSON(b)
	if err != nil {
		return nil, &errs.ValidationError{What: "document", Violations: []errs.Violation{{Msg: "not valid JSON: " + err.Error()}}}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, &errs.ValidationError{What: "document", Violations: []errs.Violation{{Msg: "must be a JSON object, not " + jsonKind(v)}}}
	}
	return m, nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case []any:
		return "an array"
	}
	return "an object"
}

// epoch is the reference time of ttl computations: collection.Store.ExpiresAt
// gives a time, the backend wants a duration from its own clock.
var epoch = time.Unix(0, 0).UTC()

// Set validates a document and stores it: it creates the document, or
// replaces the one with the same key, whose current version moves into
// the history (newest first, up to the store's history.versions). doc is
// a JSON object (json.RawMessage, []byte or string), a map[string]any, or
// any value encoding/json turns into an object. It returns the document's
// key and new version (1 for a new key).
//
// Refusals: a *ValidationError listing every violation with its field
// path (unknown or missing fields, types, ranges, enum values, datetimes,
// refs to documents that do not exist, key fields missing or null); for an
// agent, ErrAccessDenied without rw, and ErrReadOnly on a shared store.
func (c *Collection) Set(ctx context.Context, doc any, opts ...WriteOption) (key string, version int64, err error) {
	if err := c.authorize(collection.OpSet); err != nil {
		return "", 0, err
	}
	c.docs.Begin()
	defer c.docs.End()
	var refs collection.RefExists
	if c.refs {
		refs = c.refExists(ctx)
	}
	p, err := c.prepare(doc, refs)
	if err != nil {
		return "", 0, err
	}
	var js []byte
	if !c.docs.Maps() {
		js, err = appendJSON(make([]byte, 0, 512), p.Doc)
		if err != nil {
			return "", 0, errs.New(errs.ErrInvalidArgument, "document cannot be encoded as JSON: %v", err)
		}
	}
	var ttl time.Duration
	if !p.ExpiresAt.IsZero() {
		ttl = p.ExpiresAt.Sub(epoch)
	}
	r := backend.DocReplace{
		DocID: backend.DocID{Store: c.st.Name, Scope: c.part, Key: p.Key},
		Doc:   p.Doc,
		JSON:  js,
		TTL:   ttl,
	}
	var args []string
	if len(opts) > 0 {
		var docJSON []byte
		if docJSON, err = appendJSON(nil, p.Doc); err != nil {
			return "", 0, errs.New(errs.ErrInvalidArgument, "document cannot be encoded as JSON: %v", err)
		}
		args = []string{c.st.Name, p.Key, string(docJSON), ttl.String()}
	}
	kc, ch, err := c.change("set", p.Key, opts, args)
	if err != nil {
		return "", 0, err
	}
	for attempt := 0; ; attempt++ {
		if kc != nil {
			if ok, err := kc.lookup(ctx, c.s, c.scope); err != nil {
				return "", 0, err
			} else if ok {
				return p.Key, kc.replayed.Seq, nil
			}
		}
		r.Change = ch
		// Each set is validated, keyed and versioned alone (above and in
		// the document engine); only the storing of its replacement may
		// share a transaction with other sets (its group commit).
		d, err := c.docs.Put(ctx, r, c.st.HistoryVersions)
		if errors.Is(err, backend.ErrKeyUsed) && attempt < maxKeyAttempts {
			continue
		}
		if err != nil {
			return "", 0, err
		}
		return p.Key, d.Version, nil
	}
}

// prepare validates, keys and normalizes a caller's document (see toDoc)
// into one that the caller cannot change afterwards.
func (c *Collection) prepare(doc any, refs collection.RefExists) (collection.Prepared, error) {
	if m, ok := doc.(map[string]any); ok {
		// Most maps hold only what JSON decodes to: the walk that
		// validates copies them. A valid document holds nothing else
		// (JSON values, and numbers of Go types, which copyDoc would keep
		// as they are), so what it returns is what toDoc's path returns.
		p, err := c.st.PrepareCopy(m, refs, epoch)
		if err == nil || plainDoc(m) {
			return p, err
		}
		// Go values ([]string, structs, ...) that toDoc converts.
	}
	m, owned, err := toDoc(doc)
	if err != nil {
		return collection.Prepared{}, err
	}
	if !owned {
		return c.st.PrepareCopy(m, refs, epoch)
	}
	p, err := c.st.Prepare(m, refs, epoch)
	if err != nil {
		return collection.Prepared{}, err
	}
	return *p, nil
}

// refExists answers whether a ref names a visible document: in the same
// scope, or in the shared collection of a shared store.
func (c *Collection) refExists(ctx context.Context) collection.RefExists {
	return func(store, key string) (bool, error) {
		part := c.scope
		if st, err := c.proj.p.Store(store); err == nil && st.Shared {
			part = ""
		}
		_, _, ok, err := c.docs.Get(ctx, backend.DocID{Store: store, Scope: part, Key: key}, false, false)
		return ok, err
	}
}

func checkKey(key string) error {
	switch {
	case key == "":
		return errs.New(errs.ErrInvalidArgument, "key must not be empty")
	case len(key) > collection.MaxKeyLen:
		return errs.New(errs.ErrInvalidArgument, "key is %d bytes, more than the %d allowed", len(key), collection.MaxKeyLen)
	}
	return collection.CheckNoNUL("key", key)
}

func notFound(key string) error { return errs.New(errs.ErrNotFound, "document not found: %s", key) }

func document(d backend.Doc) Document {
	js := d.JSON
	if js == nil && d.Map != nil {
		js = encodeStored(d.Map)
	}
	return Document{Key: d.Key, Version: d.Version, Updated: d.Updated, Expires: d.Expires, JSON: js}
}

// document returns a stored document as the API returns it: its datetimes
// in their shortest RFC 3339 form in UTC, not the fixed-width form they
// are stored in so that SQL can compare them as text (DESIGN §3).
func (c *Collection) document(d backend.Doc) Document {
	out := document(d)
	if !c.st.HasDatetimes() {
		return out
	}
	m := d.Map
	if m == nil {
		var err error
		if m, err = decodeDoc(out.JSON); err != nil {
			return out
		}
	}
	if short, changed := c.st.Shorten(m); changed {
		out.JSON = encodeStored(short)
	}
	return out
}

func encodeStored(m map[string]any) []byte {
	js, err := appendJSON(make([]byte, 0, 512), m)
	if err != nil {
		// The document was encoded once already, to be validated.
		panic("satchel: stored document cannot be encoded: " + err.Error())
	}
	return js
}

// Get returns the document with key, and with withHistory its previous
// versions (Document.History, newest first). A missing or expired
// document is ErrNotFound: `document not found: KEY`.
func (c *Collection) Get(ctx context.Context, key string, withHistory bool) (Document, error) {
	if err := c.authorize(collection.OpGet); err != nil {
		return Document{}, err
	}
	if err := checkKey(key); err != nil {
		return Document{}, err
	}
	d, h, ok, err := c.docs.Get(ctx, backend.DocID{Store: c.st.Name, Scope: c.part, Key: key}, withHistory, c.o.includeExpired)
	if err != nil {
		return Document{}, err
	}
	if !ok {
		return Document{}, notFound(key)
	}
	out := c.document(d)
	if withHistory {
		// A backend may keep a few more versions for a moment (PostgreSQL,
		// under concurrent sets of one key): show the newest.
		h = h[:min(len(h), c.st.HistoryVersions)]
		out.History = make([]Document, len(h))
		for i, v := range h {
			out.History[i] = c.document(v)
		}
	}
	return out, nil
}

// Query returns one page of the documents that match a where clause, in
// the order of Sort (the key by default; the key breaks ties). Errors in
// the request (syntax, unknown fields, values of the wrong type, a limit
// out of 1..100, a cursor of another query) are ErrInvalidArgument.
func (c *Collection) Query(ctx context.Context, q QueryRequest) (DocumentPage, error) {
	if err := c.authorize(collection.OpQuery); err != nil {
		return DocumentPage{}, err
	}
	var limit *int
	if q.Limit != 0 {
		limit = &q.Limit
	}
	return c.page(ctx, collection.PageRequest{Where: q.Where, Sort: q.Sort, Limit: limit, Cursor: q.Cursor})
}

// List returns one page of every document, in key order: limit 0 means
// 20, at most 100; cursor is the previous page's NextCursor.
func (c *Collection) List(ctx context.Context, limit int, cursor string) (DocumentPage, error) {
	if err := c.authorize(collection.OpList); err != nil {
		return DocumentPage{}, err
	}
	var l *int
	if limit != 0 {
		l = &limit
	}
	return c.page(ctx, collection.PageRequest{Limit: l, Cursor: cursor})
}

func (c *Collection) page(ctx context.Context, req collection.PageRequest) (DocumentPage, error) {
	pg, err := c.st.Page(req)
	if err != nil {
		return DocumentPage{}, err
	}
	q := backend.DocQuery{
		Store:          c.st.Name,
		Scope:          c.part,
		Limit:          pg.Limit + 1,
		IncludeExpired: c.o.includeExpired,
		SQL: func(dialect, jsonCol, keyCol string, argStart int) (string, string, []any) {
			return pg.SQL(dialectOf(dialect), jsonCol, keyCol, argStart)
		},
		Match:   pg.Match,
		Compare: pg.Compare,
	}
	if pg.Sort.Field == "" {
		q.KeyOrder = 1
		if pg.Sort.Desc {
			q.KeyOrder = -1
		}
		if pg.After != nil {
			q.After = pg.After.Key
		}
	}
	for _, cond := range pg.Query.Conds {
		if (cond.Op != "=" && cond.Op != "IN") || !indexed(c.st, cond.Field) {
			continue
		}
		eq := backend.DocEq{Field: cond.Field}
		for _, v := range cond.Values {
			switch v.Kind {
			case collection.KindString:
				eq.Values = append(eq.Values, v.Str)
			case collection.KindNumber:
				eq.Values = append(eq.Values, v.Num)
			case collection.KindBool:
				eq.Values = append(eq.Values, v.Bool)
			default:
				eq.Values = append(eq.Values, nil)
			}
		}
		q.Eq = append(q.Eq, eq)
	}
	ds, err := c.docs.Query(ctx, q)
	if err != nil {
		return DocumentPage{}, err
	}
	out := DocumentPage{Documents: make([]Document, 0, min(len(ds), pg.Limit))}
	for i, d := range ds {
		if i == pg.Limit {
			last := ds[i-1]
			m := last.Map
			if m == nil {
				var err error
				if m, err = decodeDoc(last.JSON); err != nil {
					return DocumentPage{}, fmt.Errorf("satchel: stored document %q: %w", last.Key, err)
				}
			}
			out.NextCursor = pg.Cursor(last.Key, m)
			break
		}
		out.Documents = append(out.Documents, c.document(d))
	}
	return out, nil
}

func indexed(st *collection.Store, field string) bool {
	for _, f := range st.Indexes {
		if f == field {
			return true
		}
	}
	return false
}

// Remove deletes the document with key and its history, and reports
// whether there was one. On a store without "deletable" it is refused
// (`store "x" is not deletable`), unless an operator opened the collection
// with Force; agents need rw, and never remove from a shared store.
func (c *Collection) Remove(ctx context.Context, key string, opts ...WriteOption) (bool, error) {
	if err := c.authorize(collection.OpRemove); err != nil {
		return false, err
	}
	if err := checkKey(key); err != nil {
		return false, err
	}
	id := backend.DocID{Store: c.st.Name, Scope: c.part, Key: key}
	kc, ch, err := c.change("remove", key, opts, []string{c.st.Name, key})
	if err != nil {
		return false, err
	}
	for attempt := 0; ; attempt++ {
		if kc != nil {
			if ok, err := kc.lookup(ctx, c.s, c.scope); err != nil {
				return false, err
			} else if ok {
				return kc.replayed.Seq > 0, nil
			}
		}
		removed, err := c.docs.Remove(ctx, id, ch)
		if errors.Is(err, backend.ErrKeyUsed) && attempt < maxKeyAttempts {
			continue
		}
		return removed, err
	}
}

// change is what a set or remove of key records (nil when the backend
// keeps no log of document changes) and the call under the key opts
// give, whose arguments are args.
func (c *Collection) change(op, key string, opts []WriteOption, args []string) (*keyCall, *backend.DocChange, error) {
	var kc *keyCall
	if len(opts) > 0 {
		var err error
		if kc, err = c.s.newKeyCall(collect(opts), c.scope, c.o.thread, "doc "+op, args...); err != nil {
			return nil, nil, err
		}
	}
	if !c.docs.Logs() {
		return kc, nil, nil
	}
	a := Actor{Agent: c.o.agent}
	if c.o.actor != nil {
		a = *c.o.actor
	}
	var k string
	if kc != nil {
		k = kc.key
	}
	var sum engine.Summary
	sum.Add(op + " " + c.st.Name + "/" + key)
	// A shared store's change belongs to no scope (its partition, ""):
	// the caller's scope would file it under one tenant.
	ch := &backend.DocChange{Op: op, Scope: c.part, Meta: appendMeta(nil, op, sum.Bytes(), a, k)}
	if kc != nil {
		ch.Key = kc.claim(c.s, c.scope)
	}
	return kc, ch, nil
}

// SweepDocuments deletes every expired document of every store and scope,
// with its history, and returns how many it deleted. Expired documents are
// already invisible to agents; the sweep reclaims their space. Servers run
// it periodically (RunSweeper); the CLI runs it with `satchel doc sweep`.
func (s *Store) SweepDocuments(ctx context.Context) (int64, error) {
	if _, err := s.documents(); err != nil {
		return 0, err
	}
	return s.docs.SweepExpired(ctx)
}

// RunSweeper runs SweepDocuments every interval until ctx is done, and
// reports each sweep's error (if any) to onError when it is not nil.
func (s *Store) RunSweeper(ctx context.Context, every time.Duration, onError func(error)) {
	if every <= 0 {
		every = time.Minute
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := s.SweepDocuments(ctx); err != nil && onError != nil && !errors.Is(err, context.Canceled) {
				onError(err)
			}
		}
	}
}
