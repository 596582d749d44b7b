package satchel_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/backend/postgres/postgrestest"
	"github.com/satchel-dev/satchel/internal/sqlitetest"
	"github.com/satchel-dev/satchel/internal/testenv"
)

var exportProject = fstest.MapFS{
	"stores/notes.json": {Data: []byte(`{
  "key": "{id}",
  "schema": {"id": {"type": "string"}, "text": {"type": "string"}, "n": {"type": "number", "nullable": true}},
  "history": {"versions": 2},
  "ttl": {"default": 31536000, "override": [{"condition": "text = 'brief'", "ttl": 3600}]},
  "indexes": ["n"]
}`)},
	"stores/facts.json": {Data: []byte(`{
  "key": "{id}", "shared": true,
  "schema": {"id": {"type": "string"}, "v": {"type": "number"}}
}`)},
	"agents/research/agent.json": {Data: []byte(`{"stores": {"notes": "rw", "facts": "read"}}`)},
}

// exportBackends opens an empty store of each backend (PostgreSQL when
// SATCHEL_TEST_POSTGRES is set).
func exportBackends(t *testing.T) map[string]func(t *testing.T) *satchel.Store {
	m := map[string]func(t *testing.T) *satchel.Store{
		"memory": func(t *testing.T) *satchel.Store {
			s, err := satchel.Open(t.Context(), "memory:")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
		"sqlite": func(t *testing.T) *satchel.Store {
			s, err := satchel.Open(t.Context(), sqlitetest.NewFileAt(t, filepath.Join(t.TempDir(), "s.db")))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
		"postgres": func(t *testing.T) *satchel.Store {
			url := testenv.PostgresURL(t)
			b, _ := postgrestest.OpenAt(t, url, postgrestest.Name("satchel_export"))
			return satchel.New(b)
		},
	}
	return m
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// populate fills a store with what an export must carry: commits of every
// kind, files text and binary, large and small, checkpoints, forks of
// forks, commits dropped by retention, an empty first commit, settings,
// documents with history and expiry, a shared store and tokens.
func populate(t *testing.T, s *satchel.Store) {
	ctx := t.Context()
	ws, err := s.Workspace(ctx, "acme", "main", satchel.WorkspaceActor(satchel.Actor{Agent: "research", Via: "test"}))
	must(t, err)
	big := strings.Repeat("a line of a large file\n", 20000)
	must(t, ws.Write(ctx, "notes/plan.md", "# Plan\n1. read\n"))
	must(t, ws.Write(ctx, "data/blob.bin", "\x00\x01\xff\xfe binary \x00"))
	must(t, ws.Write(ctx, "big.txt", big))
	_, err = ws.Checkpoint(ctx, "v1")
	must(t, err)
	must(t, ws.Append(ctx, "notes/plan.md", "2. think <&>\n"))
	must(t, ws.Write(ctx, "big.txt", big+"one more\n"))
	must(t, ws.Move(ctx, "data/blob.bin", "data/moved.bin"))
	must(t, ws.Write(ctx, "notes/plan.md", "# Plan\n1. read\n2. think <&>\n")) // same bytes: a new modified time
	must(t, ws.Delete(ctx, "big.txt"))
	_, err = ws.Restore(ctx, "v1")
	must(t, err)
	must(t, ws.Batch(ctx, func(ctx context.Context, b *satchel.Batch) error {
		if err := b.Write(ctx, "a/1", "one"); err != nil {
			return err
		}
		return b.Write(ctx, "a/2", "two")
	}))
	exp, err := ws.Fork(ctx, "v1", "exp")
	must(t, err)
	must(t, exp.Write(ctx, "exp.txt", "experiment\n"))
	exp2, err := exp.Fork(ctx, "", "exp2")
	must(t, err)
	must(t, exp2.Delete(ctx, "notes/plan.md"))
	_, err = ws.Fork(ctx, "0", "empty-fork")
	must(t, err)

	pr, err := s.Workspace(ctx, "acme", "pruned")
	must(t, err)
	for i := 1; i <= 10; i++ {
		must(t, pr.Write(ctx, fmt.Sprintf("f%d", i%3), fmt.Sprintf("v%d\n", i)))
		if i == 2 {
			_, err = pr.Checkpoint(ctx, "keep")
			must(t, err)
		}
	}
	_, err = pr.SetRetention(ctx, satchel.Policy{MaxCommits: 3})
	must(t, err)
	must(t, s.SetLimits(ctx, "acme", "", satchel.Limits{MaxFiles: 5000}))
	must(t, s.SetLimits(ctx, "acme", "pruned", satchel.Limits{MaxFileBytes: 1 << 20}))

	cp, err := s.Workspace(ctx, "beta", "only-a-checkpoint")
	must(t, err)
	_, err = cp.Checkpoint(ctx, "start")
	must(t, err)
	bw, err := s.Workspace(ctx, "beta", "main")
	must(t, err)
	must(t, bw.Write(ctx, "x", "beta's x"))

	p, err := satchel.LoadProjectFS(exportProject)
	must(t, err)
	notes, err := s.Collection(ctx, p, "acme", "notes")
	must(t, err)
	for i := range 4 {
		_, _, err := notes.Set(ctx, map[string]any{"id": "n1", "text": fmt.Sprintf("version %d", i), "n": i})
		must(t, err)
	}
	_, _, err = notes.Set(ctx, map[string]any{"id": "n2", "text": "brief", "n": nil})
	must(t, err)
	betaNotes, err := s.Collection(ctx, p, "beta", "notes")
	must(t, err)
	_, _, err = betaNotes.Set(ctx, map[string]any{"id": "b", "text": "é \u2028", "n": 1.5e3})
	must(t, err)
	facts, err := s.Collection(ctx, p, "acme", "facts")
	must(t, err)
	_, _, err = facts.Set(ctx, map[string]any{"id": "pi", "v": 3.14159})
	must(t, err)

	_, _, err = s.CreateToken(ctx, satchel.TokenSpec{Agent: "research", Scope: "acme", Expires: time.Hour})
	must(t, err)
	_, tok, err := s.CreateToken(ctx, satchel.TokenSpec{Agent: "research", Scope: "beta", Thread: "main"})
	must(t, err)
	must(t, s.RevokeToken(ctx, tok.ID))

	// Two reviews: one open, one rejected (its thread archived).
	for _, key := range []string{"k-open", "k-rejected"} {
		rw, err := s.Workspace(ctx, "acme", "main", satchel.ForReview(key), satchel.WorkspaceActor(satchel.Actor{Agent: "research", Via: "test"}))
		must(t, err)
		must(t, rw.Write(ctx, "notes/"+key+".md", key+"\n"))
	}
	rs, err := s.ListReviews(ctx, satchel.ReviewQuery{})
	must(t, err)
	for _, r := range rs {
		if r.ReviewThread == "" {
			continue
		}
		if w, _ := s.Workspace(ctx, "acme", r.ReviewThread); w != nil {
			if ok, _ := w.Exists(ctx, "notes/k-rejected.md"); ok {
				_, err := s.RejectReview(ctx, r.ID, "not now", satchel.Actor{Via: "test"})
				must(t, err)
			}
		}
	}
	if rs, _ := s.ListReviews(ctx, satchel.ReviewQuery{State: satchel.ReviewRejected}); len(rs) != 1 {
		t.Fatalf("%d rejected reviews, want 1", len(rs))
	}
}

// continueReview checks that the open review of populate goes on in s:
// its key's next change joins it.
func continueReview(t *testing.T, s *satchel.Store) {
	ctx := t.Context()
	rw, err := s.Workspace(ctx, "acme", "main", satchel.ForReview("k-open"), satchel.WorkspaceActor(satchel.Actor{Agent: "research", Via: "test"}))
	must(t, err)
	must(t, rw.Write(ctx, "notes/more.md", "more\n"))
	rs, err := s.ListReviews(ctx, satchel.ReviewQuery{State: satchel.ReviewOpen})
	must(t, err)
	if len(rs) != 1 || rs[0].Files != 2 {
		t.Errorf("open reviews after a change of the imported one's key: %+v", rs)
	}
}

func export(t *testing.T, s *satchel.Store, o satchel.ExportOptions) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := s.Export(t.Context(), &buf, o); err != nil {
		t.Fatalf("export: %v", err)
	}
	return buf.Bytes()
}

func importBytes(t *testing.T, s *satchel.Store, b []byte, o satchel.ImportOptions) (satchel.ImportResult, error) {
	return s.Import(t.Context(), bytes.NewReader(b), int64(len(b)), o)
}

// TestExportRoundTrip exports a store from each backend, imports it into
// each backend and exports it again: the files are the same bytes, and
// what the Go API shows of the two stores is the same at every commit.
func TestExportRoundTrip(t *testing.T) {
	backends := exportBackends(t)
	names := []string{"memory", "sqlite", "postgres"}
	for _, from := range names {
		t.Run(from, func(t *testing.T) {
			src := backends[from](t)
			populate(t, src)
			file := export(t, src, satchel.ExportOptions{Project: exportProject})
			if again := export(t, src, satchel.ExportOptions{Project: exportProject}); !bytes.Equal(file, again) {
				t.Fatal("two exports of one store differ")
			}
			for _, to := range names {
				t.Run(to, func(t *testing.T) {
					dst := backends[to](t)
					res, err := importBytes(t, dst, file, satchel.ImportOptions{})
					if err != nil {
						t.Fatalf("import: %v", err)
					}
					if res.Threads != 9 || res.Documents != 4 || res.Tokens != 2 || res.Reviews != 2 || len(res.ProjectFiles) != 3 {
						t.Errorf("imported %+v, %d project files", res.ExportStats, len(res.ProjectFiles))
					}
					back := export(t, dst, satchel.ExportOptions{Project: exportProject})
					if !bytes.Equal(file, back) {
						t.Fatalf("the export of the imported store differs (%d and %d bytes)", len(file), len(back))
					}
					compareStores(t, src, dst)
					continueReview(t, dst)
				})
			}
		})
	}
}

// TestExportChain moves a store SQLite → PostgreSQL → memory through two
// exports: the last store shows what the first held, and the three
// exports are the same bytes.
func TestExportChain(t *testing.T) {
	backends := exportBackends(t)
	sqlite := backends["sqlite"](t)
	populate(t, sqlite)
	pg := backends["postgres"](t)
	mem := backends["memory"](t)
	first := export(t, sqlite, satchel.ExportOptions{Project: exportProject})
	if _, err := importBytes(t, pg, first, satchel.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	second := export(t, pg, satchel.ExportOptions{Project: exportProject})
	if _, err := importBytes(t, mem, second, satchel.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	third := export(t, mem, satchel.ExportOptions{Project: exportProject})
	if !bytes.Equal(first, second) || !bytes.Equal(second, third) {
		t.Fatal("the exports along the chain differ")
	}
	compareStores(t, sqlite, mem)
}

// compareStores checks, through the Go API, that two stores hold the same
// threads, logs, checkpoints, files at every retained commit, documents
// and tokens (times to the microsecond, what the file keeps).
func compareStores(t *testing.T, a, b *satchel.Store) {
	t.Helper()
	ctx := t.Context()
	us := func(x time.Time) string { return x.UTC().Truncate(time.Microsecond).Format(time.RFC3339Nano) }
	scopes, err := a.ScopeNames(ctx)
	must(t, err)
	scopesB, err := b.ScopeNames(ctx)
	must(t, err)
	slices.Sort(scopes)
	slices.Sort(scopesB)
	if !slices.Equal(scopes, scopesB) {
		t.Fatalf("scopes %v and %v", scopes, scopesB)
	}
	for _, sc := range scopes {
		ta, err := a.Threads(ctx, sc)
		must(t, err)
		tb, err := b.Threads(ctx, sc)
		must(t, err)
		if len(ta) != len(tb) {
			t.Fatalf("scope %s: %d and %d threads", sc, len(ta), len(tb))
		}
		la, _ := a.LimitsOf(ctx, sc, "pruned")
		lb, _ := b.LimitsOf(ctx, sc, "pruned")
		if la != lb {
			t.Errorf("limits %+v and %+v", la, lb)
		}
		for i := range ta {
			if ta[i].Name != tb[i].Name || ta[i].Head != tb[i].Head || us(ta[i].Created) != us(tb[i].Created) || us(ta[i].HeadTime) != us(tb[i].HeadTime) {
				t.Errorf("thread %+v and %+v", ta[i], tb[i])
			}
			wa, _ := a.Workspace(ctx, sc, ta[i].Name)
			wb, _ := b.Workspace(ctx, sc, ta[i].Name)
			pa, _ := wa.Retention(ctx)
			pb, _ := wb.Retention(ctx)
			if pa != pb {
				t.Errorf("%s: retention %+v and %+v", ta[i].Name, pa, pb)
			}
			ha, err := wa.History(ctx, 0, 0)
			must(t, err)
			hb, err := wb.History(ctx, 0, 0)
			must(t, err)
			if len(ha) != len(hb) {
				t.Fatalf("%s: %d and %d commits", ta[i].Name, len(ha), len(hb))
			}
			for j := range ha {
				ca, cb := ha[j], hb[j]
				ca.Time, cb.Time = time.Time{}, time.Time{}
				if fmt.Sprint(ca) != fmt.Sprint(cb) || us(ha[j].Time) != us(hb[j].Time) {
					t.Errorf("%s: commit %+v and %+v", ta[i].Name, ha[j], hb[j])
				}
				compareSnapshots(t, wa, wb, fmt.Sprint(ha[j].Seq))
			}
		}
	}
	ra, err := a.ListReviews(ctx, satchel.ReviewQuery{})
	must(t, err)
	rb, err := b.ListReviews(ctx, satchel.ReviewQuery{})
	must(t, err)
	if fmt.Sprint(ra) != fmt.Sprint(rb) {
		t.Errorf("reviews %+v and %+v", ra, rb)
	}
	pa, _ := satchel.LoadProjectFS(exportProject)
	for _, k := range []struct{ scope, store, key string }{{"acme", "notes", "n1"}, {"acme", "notes", "n2"}, {"beta", "notes", "b"}, {"acme", "facts", "pi"}} {
		ca, err := a.Collection(ctx, pa, k.scope, k.store)
		must(t, err)
		cb, err := b.Collection(ctx, pa, k.scope, k.store)
		must(t, err)
		da, err := ca.Get(ctx, k.key, true)
		must(t, err)
		db, err := cb.Get(ctx, k.key, true)
		must(t, err)
		if fmt.Sprint(docStrings(da, us)) != fmt.Sprint(docStrings(db, us)) {
			t.Errorf("document %s: %v and %v", k.key, docStrings(da, us), docStrings(db, us))
		}
	}
	toksA, _ := a.Tokens(ctx)
	toksB, _ := b.Tokens(ctx)
	if fmt.Sprint(toksA) != fmt.Sprint(toksB) {
		t.Errorf("tokens %v and %v", toksA, toksB)
	}
}

func docStrings(d satchel.Document, us func(time.Time) string) []string {
	out := []string{fmt.Sprint(d.Key, d.Version, us(d.Updated), us(d.Expires), string(d.JSON))}
	for _, h := range d.History {
		out = append(out, fmt.Sprint(h.Version, us(h.Updated), string(h.JSON)))
	}
	return out
}

func compareSnapshots(t *testing.T, wa, wb *satchel.Workspace, ref string) {
	t.Helper()
	ctx := t.Context()
	sa, err := wa.At(ctx, ref)
	must(t, err)
	sb, err := wb.At(ctx, ref)
	must(t, err)
	fa, err := sa.List(ctx, "", satchel.ListOptions{})
	must(t, err)
	fb, err := sb.List(ctx, "", satchel.ListOptions{})
	must(t, err)
	if !slices.Equal(fa, fb) {
		t.Fatalf("%s@%s: files %v and %v", wa.Thread(), ref, fa, fb)
	}
	for _, p := range fa {
		ca, err := sa.Read(ctx, p)
		must(t, err)
		cb, err := sb.Read(ctx, p)
		must(t, err)
		ia, _ := sa.Stat(ctx, p)
		ib, _ := sb.Stat(ctx, p)
		if ca != cb || fmt.Sprint(ia) != fmt.Sprint(ib) {
			t.Errorf("%s@%s %s: %d bytes %+v and %d bytes %+v", wa.Thread(), ref, p, len(ca), ia, len(cb), ib)
		}
	}
}

// TestImportRefuses checks each refusal: a newer format, a corrupt or
// truncated file, an overwrite without Replace. None leaves anything.
func TestImportRefuses(t *testing.T) {
	ctx := t.Context()
	src, _ := satchel.Open(ctx, "memory:")
	defer src.Close()
	populate(t, src)
	file := export(t, src, satchel.ExportOptions{Project: exportProject})

	empty := func(t *testing.T, s *satchel.Store) {
		t.Helper()
		sc, err := s.ScopeNames(ctx)
		must(t, err)
		toks, err := s.Tokens(ctx)
		must(t, err)
		p, _ := satchel.LoadProjectFS(exportProject)
		c, _ := s.Collection(ctx, p, "acme", "notes", satchel.IncludeExpired())
		page, err := c.List(ctx, 10, "")
		must(t, err)
		rs, err := s.ListReviews(ctx, satchel.ReviewQuery{})
		must(t, err)
		if len(sc) != 0 || len(toks) != 0 || len(page.Documents) != 0 || len(rs) != 0 {
			t.Fatalf("a refused import left scopes %v, %d tokens, %d documents, %d reviews", sc, len(toks), len(page.Documents), len(rs))
		}
	}
	refuse := func(t *testing.T, b []byte, want string) {
		t.Helper()
		dst, _ := satchel.Open(ctx, "memory:")
		defer dst.Close()
		_, err := importBytes(t, dst, b, satchel.ImportOptions{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("import: %v, want an error with %q", err, want)
		}
		if !errors.Is(err, satchel.ErrInvalidArgument) {
			t.Errorf("%v is not ErrInvalidArgument", err)
		}
		empty(t, dst)
	}
	t.Run("newer", func(t *testing.T) {
		b := bytes.Replace(file, []byte(`"version":2}`), []byte(`"version":3}`), 1)
		refuse(t, b, "export format version 3 is newer")
	})
	t.Run("record", func(t *testing.T) {
		i := bytes.Index(file, []byte(`version 3`))
		b := slices.Clone(file)
		b[i+8] = '4'
		refuse(t, b, "checksum mismatch")
	})
	t.Run("blob", func(t *testing.T) {
		i := bytes.Index(file, []byte("a line of a large file"))
		b := slices.Clone(file)
		b[i] = 'A'
		refuse(t, b, "does not match its hash")
	})
	t.Run("truncated", func(t *testing.T) {
		for _, n := range []int{0, 100, 512, len(file) / 3, len(file) / 2, len(file) - 2048, len(file) - 1536, len(file) - 1536 + 10, len(file) - 1} {
			t.Run(fmt.Sprint(n), func(t *testing.T) { refuse(t, file[:n], "corrupt export file") })
		}
	})
	t.Run("overwrite", func(t *testing.T) {
		dst, _ := satchel.Open(ctx, "memory:")
		defer dst.Close()
		w, _ := dst.Workspace(ctx, "acme", "main")
		must(t, w.Write(ctx, "mine", "keep me"))
		_, err := importBytes(t, dst, file, satchel.ImportOptions{})
		if !errors.Is(err, satchel.ErrExists) || !strings.Contains(err.Error(), "thread main of scope acme") {
			t.Fatalf("import over a thread: %v", err)
		}
		if got, err := w.Read(ctx, "mine"); err != nil || got != "keep me" {
			t.Fatalf("the thread changed: %q %v", got, err)
		}
		if ts, _ := dst.Threads(ctx, "acme"); len(ts) != 1 {
			t.Fatalf("a refused import made threads: %v", ts)
		}
		if _, err := importBytes(t, dst, file, satchel.ImportOptions{Replace: true}); err != nil {
			t.Fatalf("import with Replace: %v", err)
		}
		compareStores(t, src, dst)
	})
}

// TestExportThread exports one thread only.
func TestExportThread(t *testing.T) {
	ctx := t.Context()
	src, _ := satchel.Open(ctx, "memory:")
	defer src.Close()
	populate(t, src)
	file := export(t, src, satchel.ExportOptions{Scope: "acme", Thread: "exp2"})
	dst, _ := satchel.Open(ctx, "memory:")
	defer dst.Close()
	res, err := importBytes(t, dst, file, satchel.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Threads != 1 || res.Documents != 0 || res.Tokens != 0 || res.Reviews != 0 {
		t.Fatalf("imported %+v", res.ExportStats)
	}
	wa, _ := src.Workspace(ctx, "acme", "exp2")
	wb, _ := dst.Workspace(ctx, "acme", "exp2")
	compareSnapshots(t, wa, wb, "head")
	compareSnapshots(t, wa, wb, "1")
}

// TestExportScopeReviews: an export of one scope carries that scope's
// reviews only.
func TestExportScopeReviews(t *testing.T) {
	src, _ := satchel.Open(t.Context(), "memory:")
	defer src.Close()
	populate(t, src)
	for scope, want := range map[string]int{"acme": 2, "beta": 0} {
		st, err := src.Export(t.Context(), io.Discard, satchel.ExportOptions{Scope: scope})
		must(t, err)
		if st.Reviews != want {
			t.Errorf("the export of scope %s holds %d reviews, want %d", scope, st.Reviews, want)
		}
	}
}

// FuzzImport imports arbitrary bytes: refused with ErrInvalidArgument
// (leaving the store empty) or imported, never a panic.
func FuzzImport(f *testing.F) {
	ctx := context.Background()
	src, _ := satchel.Open(ctx, "memory:")
	w, _ := src.Workspace(ctx, "s", "t")
	_ = w.Write(ctx, "a", "x")
	_, _ = w.Checkpoint(ctx, "c")
	_ = w.Write(ctx, "b", "\x00y")
	var buf bytes.Buffer
	if _, err := src.Export(ctx, &buf, satchel.ExportOptions{}); err != nil {
		f.Fatal(err)
	}
	file := buf.Bytes()
	f.Add(file)
	f.Add(file[:len(file)/2])
	f.Add([]byte{})
	// With tokens: an agent's of the file's scope, one of another scope
	// and an operator's (refused by default, naming the record).
	_, _, _ = src.CreateToken(ctx, satchel.TokenSpec{Agent: "a", Scope: "s", Thread: "t"})
	_, _, _ = src.CreateToken(ctx, satchel.TokenSpec{Agent: "a", Scope: "other"})
	_, _, _ = src.CreateToken(ctx, satchel.TokenSpec{Operator: true})
	buf.Reset()
	if _, err := src.Export(ctx, &buf, satchel.ExportOptions{}); err != nil {
		f.Fatal(err)
	}
	f.Add(bytes.Clone(buf.Bytes()))
	f.Fuzz(func(t *testing.T, b []byte) {
		dst, _ := satchel.Open(ctx, "memory:")
		defer dst.Close()
		_, err := dst.Import(ctx, bytes.NewReader(b), int64(len(b)), satchel.ImportOptions{})
		if err == nil {
			return
		}
		if !errors.Is(err, satchel.ErrInvalidArgument) && !errors.Is(err, satchel.ErrAccessDenied) {
			t.Fatalf("import: %v", err)
		}
		if sc, _ := dst.ScopeNames(ctx); len(sc) != 0 {
			t.Fatalf("a refused import left scopes %v", sc)
		}
	})
}

// TestExportWithoutProject: an export made without the project directory
// still holds every document, with its history: the backend lists its
// stores and their keys. The store it is imported into holds what the
// source held.
func TestExportWithoutProject(t *testing.T) {
	backends := exportBackends(t)
	for _, from := range []string{"memory", "sqlite", "postgres"} {
		t.Run(from, func(t *testing.T) {
			src := backends[from](t)
			populate(t, src)
			file := export(t, src, satchel.ExportOptions{})
			dst := backends["memory"](t)
			res, err := importBytes(t, dst, file, satchel.ImportOptions{})
			if err != nil {
				t.Fatalf("import: %v", err)
			}
			if res.Documents != 4 {
				t.Errorf("an export without a project holds %d documents, want 4", res.Documents)
			}
			want := export(t, src, satchel.ExportOptions{Project: exportProject})
			if got := export(t, dst, satchel.ExportOptions{Project: exportProject}); !bytes.Equal(got, want) {
				t.Errorf("the imported store differs from its source (%d and %d bytes)", len(got), len(want))
			}
			// With the project, the documents of a store it does not
			// define are written too, once.
			partial := fstest.MapFS{"stores/facts.json": exportProject["stores/facts.json"]}
			var buf bytes.Buffer
			st, err := src.Export(t.Context(), &buf, satchel.ExportOptions{Project: partial})
			if err != nil || st.Documents != 4 {
				t.Errorf("export with a project defining one store: %d documents, %v", st.Documents, err)
			}
		})
	}
}

// TestImportVersion1 imports an export of format version 1, made before
// reviews were exported (testdata/export-v1.satchel), on each backend: it
// loads as it did, with no review, and its export again is of the
// current version and imports the same.
func TestImportVersion1(t *testing.T) {
	file, err := os.ReadFile(filepath.Join("testdata", "export-v1.satchel"))
	must(t, err)
	for name, open := range exportBackends(t) {
		t.Run(name, func(t *testing.T) {
			dst := open(t)
			res, err := importBytes(t, dst, file, satchel.ImportOptions{})
			if err != nil {
				t.Fatalf("import of a version 1 file: %v", err)
			}
			if res.Threads != 2 || res.Commits != 4 || res.Documents != 1 || res.Tokens != 1 || res.Reviews != 0 || len(res.ProjectFiles) != 2 {
				t.Errorf("imported %+v, %d project files", res.ExportStats, len(res.ProjectFiles))
			}
			ws, err := dst.Workspace(t.Context(), "acme", "main")
			must(t, err)
			got, err := ws.Read(t.Context(), "notes/plan.md")
			must(t, err)
			if got != "# Plan\n1. read\n2. think\n" {
				t.Errorf("notes/plan.md = %q", got)
			}
			again := export(t, dst, satchel.ExportOptions{})
			if !bytes.Contains(again, []byte(fmt.Sprintf(`{"format":"satchel-export","version":%d}`, satchel.ExportFormatVersion))) {
				t.Errorf("the export of the imported store is not of version %d", satchel.ExportFormatVersion)
			}
			other := open(t)
			if _, err := importBytes(t, other, again, satchel.ImportOptions{}); err != nil {
				t.Fatalf("import of its export: %v", err)
			}
			if back := export(t, other, satchel.ExportOptions{}); !bytes.Equal(back, again) {
				t.Errorf("the export of the store imported again differs")
			}
		})
	}
}
