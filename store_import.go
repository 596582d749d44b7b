package satchel

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/internal/archive"
	"github.com/satchel-dev/satchel/internal/engine"
	"github.com/satchel-dev/satchel/internal/errs"
)

// ImportOptions says how Import loads a file.
type ImportOptions struct {
	// Replace lets the import overwrite threads, documents, tokens,
	// reviews and scope settings that exist in the store; without it such an import
	// is refused, before anything is written.
	Replace bool
	// Progress, when set, is called as the file is checked (stage
	// "checking", in bytes) and loaded (stage "importing", in records).
	Progress func(stage string, done, total int64)
	// Tokens says which of the file's tokens are imported: TokensSafe
	// (the zero value), TokensAll or TokensNone.
	Tokens TokenImport
	// CheckProject, when set, is called after the file is checked and
	// before anything is written, with the paths of the project files
	// the file holds; an error refuses the import.
	CheckProject func(paths []string) error
}

// TokenImport says which of an export file's tokens Import brings in.
type TokenImport string

const (
	// TokensSafe imports the agent tokens of the scopes the file holds
	// (a scope's settings, a thread or a document of it) and refuses the
	// whole import if the file has any other token: an operator token
	// (it would read every scope) or a token of a scope the file does
	// not hold, with kind ErrAccessDenied. It is the zero value.
	TokensSafe TokenImport = "safe"
	// TokensAll imports every token of the file, operator tokens and
	// tokens of other scopes included.
	TokensAll TokenImport = "all"
	// TokensNone leaves every token of the file out.
	TokensNone TokenImport = "none"
)

// ParseTokenImport reads "safe", "all" or "none".
func ParseTokenImport(s string) (TokenImport, error) {
	switch t := TokenImport(s); t {
	case TokensSafe, TokensAll, TokensNone:
		return t, nil
	}
	return "", errs.New(errs.ErrInvalidArgument, "tokens must be safe, all or none, was %q", s)
}

// ImportResult is what an import loaded.
type ImportResult struct {
	ExportStats
	// ProjectFiles are the project's definition files the file holds
	// (stores/*.json, agents/*/agent.json): Import does not write them
	// anywhere; the caller puts them in a project directory.
	ProjectFiles []ProjectFile `json:"-"`
	// TokenList describes every token imported, in the file's order.
	TokenList []Token `json:"-"`
}

// ProjectFile is one file of a project directory.
type ProjectFile struct {
	Path    string
	Content []byte
}

// Import loads an export file (Export's format), size bytes read from r,
// into the store, as it was: the same sequence numbers, commit times and
// metadata, files with their bytes and modified times, checkpoints, forks
// (pointing at their source, nothing copied), settings, documents with
// their versions and times, tokens, and reviews (a file of format
// version 1 has none).
//
// The whole file is checked before anything is written: its format
// version (a newer one is refused), every record's checksum and every
// blob's hash, that it is complete, and that it overwrites nothing
// unless o.Replace. If writing then fails (the database fails), what the
// import wrote is removed again; what o.Replace had deleted stays deleted.
// Restoring times exactly needs a backend.Porter (every backend of satchel
// is one): Import refuses the file on another backend.
func (s *Store) Import(ctx context.Context, r io.ReaderAt, size int64, o ImportOptions) (ImportResult, error) {
	var res ImportResult
	// An export's log is written as it was, archive entries and the
	// commits after an unarchive entry included.
	ctx = engine.Unguarded(ctx)
	porter, _ := backend.As[backend.Porter](s.b)
	plan := newImportPlan()
	sr := io.NewSectionReader(r, 0, size)
	var in io.Reader = sr
	if o.Progress != nil {
		in = &progressReader{r: sr, f: func(n int64) { o.Progress("checking", n, size) }}
	}
	blobs, err := archive.Read(in, true, plan.blobs, plan.check)
	if err != nil {
		return res, err
	}
	if err := plan.finish(); err != nil {
		return res, err
	}
	if err := plan.checkTokens(o.Tokens); err != nil {
		return res, err
	}
	if o.CheckProject != nil {
		paths := make([]string, 0, len(plan.files))
		for p := range plan.files {
			paths = append(paths, p)
		}
		slices.Sort(paths)
		if err := o.CheckProject(paths); err != nil {
			return res, err
		}
	}
	if porter == nil && (len(plan.threads) > 0 || plan.docs > 0) {
		return res, errs.New(errs.ErrInvalidArgument, "this backend cannot keep an export's commit times and document versions (it is not a backend.Porter)")
	}
	if plan.docs > 0 {
		if _, err := s.documents(); err != nil {
			return res, err
		}
	}
	im := &importer{s: s, o: o, porter: porter, plan: plan, blobs: blobs, r: r, res: &res,
		bases: map[scopedRef]backend.Commit{}, oldSettings: map[settingKey][]byte{}}
	if err := im.conflicts(ctx); err != nil {
		return res, err
	}
	apply := func(typ string, b []byte) error { return im.apply(ctx, typ, b) }
	if _, err := archive.Read(io.NewSectionReader(r, 0, size), false, map[string]archive.BlobLoc{}, apply); err != nil {
		im.undo()
		return ImportResult{}, err
	}
	if err := im.endThread(ctx); err != nil {
		im.undo()
		return ImportResult{}, err
	}
	res.Blobs = int64(len(blobs))
	return res, nil
}

type progressReader struct {
	r io.Reader
	n int64
	f func(int64)
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.n += int64(n)
	p.f(p.n)
	return n, err
}

type scopedRef struct {
	scope string
	archive.Ref
}

type threadKey struct{ scope, name string }

type settingKey struct{ scope, thread, key string }

type docKey struct{ store, scope, key string }

// importPlan is what the first pass learns and checks.
type importPlan struct {
	threads map[threadKey]*planThread
	order   []threadKey
	cur     *planThread
	bases   map[scopedRef]bool
	scopes  map[string]map[string][]byte
	docKeys map[docKey]bool
	tokens  map[string][]byte
	toks    []planToken // the token records, in the file's order
	reviews map[string][]byte
	files   map[string]bool
	docs    int
	records int64
	blobs   map[string]archive.BlobLoc // filled by archive.Read as it meets them
}

type planToken struct {
	record int64 // its number in the file
	tok    Token
}

type planThread struct {
	rec     archive.Thread
	commits map[int64]bool
	last    int64
	cps     map[string]bool
}

func newImportPlan() *importPlan {
	return &importPlan{threads: map[threadKey]*planThread{}, bases: map[scopedRef]bool{},
		blobs: map[string]archive.BlobLoc{}, scopes: map[string]map[string][]byte{}, docKeys: map[docKey]bool{}, tokens: map[string][]byte{}, reviews: map[string][]byte{}, files: map[string]bool{}}
}

// check validates one record against the file so far (first pass).
func (p *importPlan) check(typ string, b []byte) error {
	p.records++
	bad := func(format string, args ...any) error {
		return archive.Corrupt("record %d (%s): %s", p.records, typ, fmt.Sprintf(format, args...))
	}
	if typ != archive.TypeCommit {
		if err := p.endThread(); err != nil {
			return err
		}
	}
	switch typ {
	case archive.TypeScope:
		var r archive.Scope
		if err := json.Unmarshal(b, &r); err != nil {
			return bad("%v", err)
		}
		if err := ValidScope(r.Scope); err != nil {
			return bad("%v", err)
		}
		if _, dup := p.scopes[r.Scope]; dup {
			return bad("scope %s twice", r.Scope)
		}
		p.scopes[r.Scope] = r.Settings
	case archive.TypeThread:
		var r archive.Thread
		if err := json.Unmarshal(b, &r); err != nil {
			return bad("%v", err)
		}
		if err := ValidScope(r.Scope); err != nil {
			return bad("%v", err)
		}
		// A thread's spill area is exported as a thread of its own.
		if err := ValidThreadName(strings.TrimSuffix(r.Name, spillThreadSuffix)); err != nil {
			return bad("%v", err)
		}
		if _, err := archive.ParseTime(r.Created); err != nil {
			return bad("%v", err)
		}
		k := threadKey{r.Scope, r.Name}
		if p.threads[k] != nil {
			return bad("thread %s/%s twice", r.Scope, r.Name)
		}
		if r.Head < 0 {
			return bad("negative head")
		}
		t := &planThread{rec: r, commits: map[int64]bool{}, cps: map[string]bool{}}
		p.threads[k] = t
		p.order = append(p.order, k)
		p.cur = t
	case archive.TypeCommit:
		var r archive.Commit
		if err := json.Unmarshal(b, &r); err != nil {
			return bad("%v", err)
		}
		t := p.cur
		if t == nil || t.rec.Scope != r.Scope || t.rec.Name != r.Thread {
			return bad("commit %d of %s/%s outside its thread's records", r.Seq, r.Scope, r.Thread)
		}
		if r.Seq <= t.last || r.Seq > t.rec.Head {
			return bad("commit %d of %s out of order (after %d, head %d)", r.Seq, r.Thread, t.last, t.rec.Head)
		}
		if _, err := archive.ParseTime(r.Time); err != nil {
			return bad("%v", err)
		}
		if !json.Valid([]byte(r.Meta)) {
			return bad("commit %d: metadata is not JSON", r.Seq)
		}
		for _, cp := range r.Checkpoints {
			if err := ValidCheckpointName(cp); err != nil {
				return bad("%v", err)
			}
			if t.cps[cp] {
				return bad("checkpoint %s twice in %s", cp, r.Thread)
			}
			t.cps[cp] = true
		}
		if r.Base != nil {
			ref := scopedRef{r.Scope, *r.Base}
			src := p.threads[threadKey{r.Scope, r.Base.Thread}]
			if r.Seq != 1 || t.last != 0 || len(r.Changes) > 0 || src == nil || src == t || !src.commits[r.Base.Seq] {
				return bad("commit %d of %s: base %s@%d is not an earlier commit of the file", r.Seq, r.Thread, r.Base.Thread, r.Base.Seq)
			}
			p.bases[ref] = true
		}
		prevPath := ""
		for i, c := range r.Changes {
			if err := ValidPath(c.Path); err != nil {
				return bad("%v", err)
			}
			if i > 0 && c.Path <= prevPath {
				return bad("commit %d: changes not in path order", r.Seq)
			}
			prevPath = c.Path
			if c.Deleted {
				if c.Blob != "" {
					return bad("commit %d: %s both deleted and written", r.Seq, c.Path)
				}
				continue
			}
			loc, ok := p.blobs[c.Blob]
			size := loc.Size
			if !ok {
				return bad("commit %d: %s names blob %q, not stored before it", r.Seq, c.Path, c.Blob)
			}
			if size != c.Size {
				return bad("commit %d: %s is %d bytes, its blob %d", r.Seq, c.Path, c.Size, size)
			}
		}
		t.commits[r.Seq] = true
		t.last = r.Seq
	case archive.TypeFile:
		var r archive.File
		if err := json.Unmarshal(b, &r); err != nil {
			return bad("%v", err)
		}
		if !projectFilePath(r.Path) || p.files[r.Path] {
			return bad("project file %q is not stores/NAME.json or agents/NAME/agent.json, or comes twice", r.Path)
		}
		p.files[r.Path] = true
	case archive.TypeDoc:
		var r archive.Doc
		if err := json.Unmarshal(b, &r); err != nil {
			return bad("%v", err)
		}
		if r.Scope != "" {
			if err := ValidScope(r.Scope); err != nil {
				return bad("%v", err)
			}
		}
		if err := checkKey(r.Key); err != nil || r.Store == "" {
			return bad("document %q of store %q: invalid key or store", r.Key, r.Store)
		}
		k := docKey{r.Store, r.Scope, r.Key}
		if p.docKeys[k] || len(r.Versions) == 0 {
			return bad("document %s of %s comes twice, or has no versions", r.Key, r.Store)
		}
		for i, v := range r.Versions {
			if _, err := archive.ParseTime(v.Updated); err != nil {
				return bad("%v", err)
			}
			if v.Expires != "" {
				if _, err := archive.ParseTime(v.Expires); err != nil || i > 0 {
					return bad("document %s: bad expiry", r.Key)
				}
			}
			if i > 0 && v.Version >= r.Versions[i-1].Version || v.Version < 1 {
				return bad("document %s: versions not newest first", r.Key)
			}
			if _, err := decodeDoc([]byte(v.JSON)); err != nil {
				return bad("document %s version %d: %v", r.Key, v.Version, err)
			}
		}
		p.docKeys[k] = true
		p.docs++
	case archive.TypeToken:
		var r archive.Token
		if err := json.Unmarshal(b, &r); err != nil {
			return bad("%v", err)
		}
		var tr tokenRecord
		if err := json.Unmarshal([]byte(r.Record), &tr); err != nil || tr.ID != r.ID || r.ID == "" || tr.Hash == "" {
			return bad("token %q: not a token record", r.ID)
		}
		if _, dup := p.tokens[r.ID]; dup {
			return bad("token %s twice", r.ID)
		}
		if !tokenID(r.ID) || r.Scope != tr.Scope {
			return bad("token %q: not a token's id, or its scope is not its record's", r.ID)
		}
		spec := TokenSpec{Agent: tr.Agent, Scope: tr.Scope, Thread: tr.Thread, Operator: tr.Operator}
		if err := spec.check(); err != nil {
			return bad("token %s: %v", r.ID, err)
		}
		p.tokens[r.ID] = []byte(r.Record)
		p.toks = append(p.toks, planToken{record: p.records, tok: tr.Token})
	case archive.TypeReview:
		var r archive.Review
		if err := json.Unmarshal(b, &r); err != nil {
			return bad("%v", err)
		}
		if err := ValidReviewID(r.ID); err != nil {
			return bad("%v", err)
		}
		var rr reviewRecord
		if err := json.Unmarshal([]byte(r.Record), &rr); err != nil || rr.ID != r.ID || rr.Scope != r.Scope {
			return bad("review %s: not a review record, or its id or scope is not its record's", r.ID)
		}
		if err := ValidScope(r.Scope); err != nil {
			return bad("review %s: %v", r.ID, err)
		}
		if rr.ReviewThread != reviewThreadPrefix+r.ID || ValidThreadName(rr.Thread) != nil {
			return bad("review %s: its threads are not a review's", r.ID)
		}
		switch rr.State {
		case ReviewOpen, ReviewApproved, ReviewRejected:
		default:
			return bad("review %s: unknown state %q", r.ID, rr.State)
		}
		if _, dup := p.reviews[r.ID]; dup {
			return bad("review %s twice", r.ID)
		}
		p.reviews[r.ID] = []byte(r.Record)
	default:
		return bad("unknown record type %q", typ)
	}
	return nil
}

// endThread checks that the thread just read ended at its head.
func (p *importPlan) endThread() error {
	t := p.cur
	p.cur = nil
	if t != nil && t.last != t.rec.Head {
		return archive.Corrupt("thread %s/%s: its head %d is not in the file (truncated?)", t.rec.Scope, t.rec.Name, t.rec.Head)
	}
	return nil
}

func (p *importPlan) finish() error { return p.endThread() }

// tokenID reports whether id is a token's id: 16 lowercase hex digits.
func tokenID(id string) bool {
	if len(id) != 16 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// checkTokens applies the token policy to the checked file: TokensNone
// drops its tokens; TokensSafe refuses an operator token and a token of
// a scope the file does not hold, naming the first such record.
func (p *importPlan) checkTokens(policy TokenImport) error {
	switch policy {
	case "", TokensSafe:
	case TokensAll:
		return nil
	case TokensNone:
		p.tokens = map[string][]byte{}
		p.toks = nil
		return nil
	default:
		_, err := ParseTokenImport(string(policy))
		return err
	}
	held := map[string]bool{}
	for sc := range p.scopes {
		held[sc] = true
	}
	for k := range p.threads {
		held[k.scope] = true
	}
	for k := range p.docKeys {
		held[k.scope] = true
	}
	for _, t := range p.toks {
		why := ""
		switch {
		case t.tok.Operator:
			why = "it is an operator token, which reads every scope"
		case !held[t.tok.Scope]:
			why = fmt.Sprintf("it is a token of scope %s, which the file does not hold", t.tok.Scope)
		default:
			continue
		}
		return errs.New(errs.ErrAccessDenied, "import refused: record %d (token %s): %s; nothing was imported (give --tokens all to import it, or --tokens none to leave the file's tokens out)", t.record, t.tok.ID, why)
	}
	return nil
}

func projectFilePath(p string) bool {
	if ValidPath(p) != nil {
		return false
	}
	parts := strings.Split(p, "/")
	switch {
	case len(parts) == 2 && parts[0] == "stores":
		return strings.HasSuffix(parts[1], ".json") && len(parts[1]) > len(".json")
	case len(parts) == 3 && parts[0] == "agents":
		return parts[2] == "agent.json"
	}
	return false
}

// importer writes a checked file (second pass).
type importer struct {
	s      *Store
	o      ImportOptions
	porter backend.Porter
	plan   *importPlan
	blobs  map[string]archive.BlobLoc
	r      io.ReaderAt
	res    *ImportResult
	done   int64

	// bases are the imported commits that forks point at.
	bases map[scopedRef]backend.Commit
	// cur is the thread being written.
	cur *importThread

	// What to undo if writing fails.
	created     []int64
	docsWritten []backend.DocID
	oldSettings map[settingKey][]byte // nil value: was unset
	settingsPut []settingKey
}

type importThread struct {
	rec  archive.Thread
	id   int64
	prev backend.Commit // the last commit made (zero: none)
	gaps []int64
	cps  map[string]int64
}

// conflicts refuses an import that would overwrite something, unless
// Replace; it reads what Replace overwrites, to restore settings on undo.
func (im *importer) conflicts(ctx context.Context) error {
	b := im.s.b
	var over []string
	for _, k := range im.plan.order {
		_, err := b.Thread(ctx, k.scope, k.name, false)
		switch {
		case err == nil:
			over = append(over, fmt.Sprintf("thread %s of scope %s", k.name, k.scope))
		case !errors.Is(err, backend.ErrNoThread):
			return err
		}
	}
	if im.plan.docs > 0 {
		db, _ := im.s.documents()
		for k := range im.plan.docKeys {
			_, _, ok, err := db.GetDoc(ctx, backend.DocID{Store: k.store, Scope: k.scope, Key: k.key}, false) // expired or not
			if err != nil {
				return err
			}
			if ok {
				over = append(over, fmt.Sprintf("document %s of store %s", k.key, k.store))
			}
		}
	}
	check := func(sk settingKey, v []byte, what string) error {
		old, ok, err := b.Setting(ctx, sk.scope, sk.thread, sk.key)
		if err != nil {
			return err
		}
		if ok {
			im.oldSettings[sk] = old
			if string(old) != string(v) {
				over = append(over, what)
			}
		} else {
			im.oldSettings[sk] = nil
		}
		return nil
	}
	for id, v := range im.plan.tokens {
		if err := check(settingKey{"", "", tokenKey + id}, v, "token "+id); err != nil {
			return err
		}
	}
	for id, v := range im.plan.reviews {
		if err := check(settingKey{"", "", reviewKey + id}, v, "review "+id); err != nil {
			return err
		}
	}
	for sc, set := range im.plan.scopes {
		for k, v := range set {
			if err := check(settingKey{sc, "", k}, v, fmt.Sprintf("setting %s of scope %s", k, sc)); err != nil {
				return err
			}
		}
	}
	if len(over) == 0 || im.o.Replace {
		return nil
	}
	msg := strings.Join(over[:min(len(over), 5)], ", ")
	if len(over) > 5 {
		msg += fmt.Sprintf(" and %d more", len(over)-5)
	}
	return errs.New(errs.ErrExists, "import refused: it would overwrite %s (replace them with --replace)", msg)
}

func (im *importer) tick() {
	im.done++
	if im.o.Progress != nil {
		im.o.Progress("importing", im.done, im.plan.records)
	}
}

// apply writes one record (second pass).
func (im *importer) apply(ctx context.Context, typ string, b []byte) error {
	defer im.tick()
	if typ != archive.TypeCommit {
		if err := im.endThread(ctx); err != nil {
			return err
		}
	}
	switch typ {
	case archive.TypeScope:
		var r archive.Scope
		if err := json.Unmarshal(b, &r); err != nil {
			return err
		}
		for k, v := range r.Settings {
			if err := im.putSetting(ctx, settingKey{r.Scope, "", k}, v); err != nil {
				return err
			}
		}
	case archive.TypeThread:
		var r archive.Thread
		if err := json.Unmarshal(b, &r); err != nil {
			return err
		}
		return im.thread(ctx, r)
	case archive.TypeCommit:
		var r archive.Commit
		if err := json.Unmarshal(b, &r); err != nil {
			return err
		}
		return im.commit(ctx, r)
	case archive.TypeFile:
		var r archive.File
		if err := json.Unmarshal(b, &r); err != nil {
			return err
		}
		im.res.ProjectFiles = append(im.res.ProjectFiles, ProjectFile{Path: r.Path, Content: []byte(r.Content)})
		im.res.ExportStats.ProjectFiles++
	case archive.TypeDoc:
		var r archive.Doc
		if err := json.Unmarshal(b, &r); err != nil {
			return err
		}
		return im.doc(ctx, r)
	case archive.TypeToken:
		var r archive.Token
		if err := json.Unmarshal(b, &r); err != nil {
			return err
		}
		if _, ok := im.plan.tokens[r.ID]; !ok { // left out (TokensNone)
			return nil
		}
		var tr tokenRecord
		if err := json.Unmarshal([]byte(r.Record), &tr); err != nil {
			return err
		}
		im.res.Tokens++
		im.res.TokenList = append(im.res.TokenList, tr.Token)
		return im.putSetting(ctx, settingKey{"", "", tokenKey + r.ID}, []byte(r.Record))
	case archive.TypeReview:
		var r archive.Review
		if err := json.Unmarshal(b, &r); err != nil {
			return err
		}
		im.res.Reviews++
		return im.putSetting(ctx, settingKey{"", "", reviewKey + r.ID}, []byte(r.Record))
	}
	return nil
}

func (im *importer) putSetting(ctx context.Context, k settingKey, v []byte) error {
	if err := im.s.b.PutSetting(ctx, k.scope, k.thread, k.key, v); err != nil {
		return err
	}
	im.settingsPut = append(im.settingsPut, k)
	return nil
}

func (im *importer) thread(ctx context.Context, r archive.Thread) error {
	b := im.s.b
	if im.o.Replace {
		if old, err := b.Thread(ctx, r.Scope, r.Name, false); err == nil {
			if err := b.DeleteThread(ctx, old.ID); err != nil {
				return err
			}
		} else if !errors.Is(err, backend.ErrNoThread) {
			return err
		}
	}
	t, err := b.CreateThread(ctx, r.Scope, r.Name)
	if errors.Is(err, backend.ErrThreadExists) {
		return errs.New(errs.ErrExists, "import refused: thread %s of scope %s was created while the import ran", r.Name, r.Scope)
	}
	if err != nil {
		return err
	}
	im.created = append(im.created, t.ID)
	im.cur = &importThread{rec: r, id: t.ID, cps: map[string]int64{}}
	if strings.HasSuffix(r.Name, spillThreadSuffix) {
		im.res.SpillAreas++
	} else {
		im.res.Threads++
	}
	return nil
}

// gapMeta is the metadata of the commits an import makes in place of
// those retention had dropped; they are dropped again at once.
var gapMeta = []byte(`{"op":"import","summary":"dropped by retention"}`)

func (im *importer) commit(ctx context.Context, r archive.Commit) error {
	t := im.cur
	for seq := t.prev.Seq + 1; seq < r.Seq; seq++ {
		c, err := im.sameTree(ctx, t, gapMeta)
		if err != nil {
			return err
		}
		t.prev = c
		t.gaps = append(t.gaps, seq)
	}
	meta := []byte(r.Meta)
	var c backend.Commit
	var err error
	switch {
	case r.Base != nil:
		src, ok := im.bases[scopedRef{r.Scope, *r.Base}]
		if !ok {
			return fmt.Errorf("satchel: import: base %s@%d was not imported", r.Base.Thread, r.Base.Seq)
		}
		c, err = im.s.eng.Point(ctx, t.id, src, meta, "", nil)
	case len(r.Changes) == 0:
		c, err = im.sameTree(ctx, t, meta)
	default:
		c, err = im.changed(ctx, t, r.Changes, meta)
	}
	if err != nil {
		return err
	}
	if c.Seq != r.Seq {
		return fmt.Errorf("satchel: import: commit %d of %s landed as %d: another writer used the thread", r.Seq, r.Thread, c.Seq)
	}
	tm, _ := archive.ParseTime(r.Time)
	if err := im.porter.SetCommitTime(ctx, t.id, c.Seq, tm); err != nil {
		return err
	}
	c.Time = tm
	t.prev = c
	for _, cp := range r.Checkpoints {
		t.cps[cp] = c.Seq
	}
	if ref := (scopedRef{r.Scope, archive.Ref{Thread: r.Thread, Seq: r.Seq}}); im.plan.bases[ref] {
		im.bases[ref] = c
	}
	im.res.Commits++
	return nil
}

// sameTree appends a commit whose tree is that of the thread's last one.
func (im *importer) sameTree(ctx context.Context, t *importThread, meta []byte) (backend.Commit, error) {
	if t.prev.ID != 0 {
		return im.s.eng.Point(ctx, t.id, t.prev, meta, "", nil)
	}
	res, err := im.s.b.Append(ctx, []backend.NewCommit{{Thread: t.id, Seq: 1, Meta: meta}})
	if err == nil {
		err = res[0].Err
	}
	if err != nil {
		return backend.Commit{}, err
	}
	return res[0].Commit, nil
}

// changed applies a commit's changes to the thread's last tree.
func (im *importer) changed(ctx context.Context, t *importThread, changes []archive.Change, meta []byte) (backend.Commit, error) {
	contents := make([]string, len(changes))
	for i, ch := range changes {
		if ch.Deleted {
			continue
		}
		var err error
		if contents[i], err = im.blob(ch.Blob); err != nil {
			return backend.Commit{}, err
		}
	}
	c, changed, err := im.s.eng.Update(ctx, t.id, func(tx *engine.Tx) (engine.CommitInfo, error) {
		for i, ch := range changes {
			var err error
			if ch.Deleted {
				err = tx.Delete(ctx, ch.Path)
			} else {
				err = tx.PutAt(ctx, ch.Path, contents[i], ch.ModTime)
			}
			if err != nil {
				return engine.CommitInfo{}, err
			}
		}
		return engine.CommitInfo{Meta: meta}, nil
	})
	if err == nil && !changed {
		return im.sameTree(ctx, t, meta)
	}
	return c, err
}

// blob reads a blob's bytes, checking them again (the file may have
// changed since the first pass).
func (im *importer) blob(name string) (string, error) {
	loc := im.blobs[name]
	b := make([]byte, loc.Size)
	if _, err := im.r.ReadAt(b, loc.Off); err != nil {
		return "", archive.Corrupt("reading blob %s: %v", name, err)
	}
	sum := sha256.Sum256(b)
	if hex.EncodeToString(sum[:]) != name {
		return "", archive.Corrupt("blob %s changed while it was imported", name)
	}
	return string(b), nil
}

// endThread completes the thread being written: drops what retention had
// dropped, names the checkpoints, sets its settings and creation time.
func (im *importer) endThread(ctx context.Context) error {
	t := im.cur
	if t == nil {
		return nil
	}
	im.cur = nil
	b := im.s.b
	if len(t.gaps) > 0 {
		if err := b.Drop(ctx, t.id, t.gaps); err != nil {
			return err
		}
	}
	for name, seq := range t.cps {
		if err := b.SetCheckpoint(ctx, t.id, name, seq); err != nil {
			return err
		}
	}
	for k, v := range t.rec.Settings {
		if err := b.PutSetting(ctx, t.rec.Scope, t.rec.Name, k, v); err != nil {
			return err
		}
	}
	created, _ := archive.ParseTime(t.rec.Created)
	return im.porter.SetThreadCreated(ctx, t.id, created)
}

func (im *importer) doc(ctx context.Context, r archive.Doc) error {
	_, maps := backend.As[backend.DocMaps](im.s.b)
	vs := make([]backend.Doc, len(r.Versions))
	for i, v := range r.Versions {
		d := backend.Doc{Key: r.Key, Version: v.Version, JSON: []byte(v.JSON)}
		d.Updated, _ = archive.ParseTime(v.Updated)
		if v.Expires != "" {
			d.Expires, _ = archive.ParseTime(v.Expires)
		}
		if maps {
			m, err := decodeDoc(d.JSON)
			if err != nil {
				return err
			}
			d.Map = m
		}
		vs[i] = d
	}
	id := backend.DocID{Store: r.Store, Scope: r.Scope, Key: r.Key}
	if err := im.porter.PutDocVersions(ctx, id, vs); err != nil {
		return err
	}
	im.docsWritten = append(im.docsWritten, id)
	im.res.Documents++
	return nil
}

// undo removes what a failed import wrote. It runs on a fresh context:
// the caller's may be what failed.
func (im *importer) undo() {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(context.Background()), time.Minute)
	defer cancel()
	b := im.s.b
	for _, id := range im.created {
		_ = b.DeleteThread(ctx, id)
	}
	if db, err := im.s.documents(); err == nil {
		for _, id := range im.docsWritten {
			im.s.docs.Forget(id)
			_, _, _ = db.DeleteDoc(ctx, id)
		}
	}
	for _, k := range im.settingsPut {
		_ = b.PutSetting(ctx, k.scope, k.thread, k.key, im.oldSettings[k])
	}

}
