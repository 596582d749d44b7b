package satcheltest

import (
	"errors"
	"runtime"
	"testing"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/internal/backendof"
)

// The lifecycle of scopes and threads: usage, purge, archive, default
// retention (docs/operations.md, "Scopes and lifecycle").

// scopesUsage: ScopeUsage lists every scope with threads, with its
// threads, files, live bytes and last activity from the heads.
func (s *suite) scopesUsage(t *testing.T, st *satchel.Store, ws *satchel.Workspace) {
	write(t, ws, "a.md", "12345", "b/c.md", "678")
	other, err := st.Workspace(bg, "default", "other")
	must(t, "other", err)
	write(t, other, "x", "9")
	zw, err := st.Workspace(bg, "zeta", "main")
	must(t, "zeta", err)
	write(t, zw, "z", "zz")
	l, err := st.ScopeUsage(bg)
	must(t, "ScopeUsage", err)
	if len(l) != 2 || l[0].Scope != "default" || l[1].Scope != "zeta" {
		t.Fatalf("ScopeUsage = %+v, want default and zeta", l)
	}
	d := l[0]
	equal(t, "threads", d.Threads, 2)
	equal(t, "files", d.Files, int64(3))
	equal(t, "archived", d.Archived, 0)
	if d.LiveBytes <= 0 || d.LastActivity.IsZero() {
		t.Errorf("usage of default = %+v", d)
	}
	if d.Documents != nil && *d.Documents != 0 {
		t.Errorf("documents of a scope without any = %d", *d.Documents)
	}
	z, err := st.ScopeInfo(bg, "zeta")
	must(t, "ScopeInfo", err)
	equal(t, "zeta files", z.Files, int64(1))
	if z.LiveBytes >= d.LiveBytes {
		t.Errorf("live bytes of zeta %d, of default %d", z.LiveBytes, d.LiveBytes)
	}
	none, err := st.ScopeInfo(bg, "never-used")
	must(t, "ScopeInfo of an unused scope", err)
	if none.Threads != 0 || none.Files != 0 || !none.LastActivity.IsZero() {
		t.Errorf("usage of an unused scope = %+v", none)
	}
}

// purge: Purge removes a scope's threads, history, storage and tokens, says
// what it removed, and leaves other scopes and a clean store.
func (s *suite) purge(t *testing.T, st *satchel.Store, ws *satchel.Workspace) {
	b := backendof.Store(st)
	pw, err := st.Workspace(bg, "doomed", "main")
	must(t, "doomed", err)
	write(t, pw, "a.md", "one", "b.md", "two")
	write(t, pw, "a.md", "one more")
	_, err = pw.Checkpoint(bg, "cp")
	must(t, "checkpoint", err)
	_, err = pw.Fork(bg, "", "fork")
	must(t, "fork", err)
	must(t, "spill", pw.SaveSpill(bg, "spill/s1", "spilled"))
	write(t, ws, "kept.md", "kept")
	_, _, err = st.CreateToken(bg, satchel.TokenSpec{Agent: "a", Scope: "doomed"})
	must(t, "token", err)
	_, _, err = st.CreateToken(bg, satchel.TokenSpec{Agent: "a", Scope: "default"})
	must(t, "other token", err)
	_, _, err = st.CreateToken(bg, satchel.TokenSpec{Operator: true})
	must(t, "operator token", err)

	var packs []int64
	ts, err := b.Threads(bg, "doomed")
	must(t, "threads", err)
	for _, th := range ts {
		cs, err := b.Log(bg, th.ID, 0, 0)
		must(t, "log", err)
		for _, c := range cs {
			packs = append(packs, c.ID)
		}
	}
	rep, err := st.Purge(bg, "doomed")
	must(t, "purge", err)
	// main: 3 commits; fork: 1; the spill area: 1.
	want := satchel.PurgeReport{Scope: "doomed", Threads: 2, Commits: 5, Files: 5, Tokens: 1, Bytes: rep.Bytes}
	if rep != want || rep.Bytes <= 0 {
		t.Errorf("Purge = %+v, want %+v", rep, want)
	}
	for _, id := range packs {
		if _, err := b.Pack(bg, id); !errors.Is(err, backend.ErrNoPack) {
			t.Errorf("pack %d of a purged scope: %v", id, err)
		}
	}
	scopes, err := st.ScopeNames(bg)
	must(t, "scopes", err)
	equal(t, "scopes after purge", len(scopes), 1)
	toks, err := st.Tokens(bg)
	must(t, "tokens", err)
	for _, tk := range toks {
		if tk.Scope == "doomed" {
			t.Errorf("token %s of the purged scope survived", tk.ID)
		}
	}
	equal(t, "tokens left", len(toks), 2)
	if _, err := st.GC(bg, "", satchel.NoGrace); err != nil {
		t.Fatal(err)
	}
	chk, err := st.Check(bg)
	must(t, "check", err)
	if len(chk.Faults) != 0 {
		t.Errorf("check after purge: %+v", chk.Faults)
	}
	got, _ := ws.Read(bg, "kept.md")
	equal(t, "another scope's file", got, "kept")
	// A workspace opened before the purge starts the scope anew.
	write(t, pw, "new.md", "fresh")
	h, err := pw.History(bg, 0, 0)
	must(t, "history", err)
	equal(t, "history of a scope purged, then written", len(h), 1)
	ok, _ := pw.Exists(bg, "a.md")
	equal(t, "a purged file", ok, false)
	rep, err = st.Purge(bg, "never-existed")
	must(t, "purge of an unknown scope", err)
	equal(t, "purge of an unknown scope", rep, satchel.PurgeReport{Scope: "never-existed"})
	_, err = st.Purge(bg, "bad scope")
	refused(t, "purge of an invalid scope", err, satchel.ErrInvalidArgument, "")
}

// archive: an archived thread reads as before and refuses every write
// with ErrArchived, until it is unarchived.
func (s *suite) archive(t *testing.T, st *satchel.Store, ws *satchel.Workspace) {
	write(t, ws, "a.md", "one\n")
	_, err := ws.Checkpoint(bg, "before")
	must(t, "checkpoint", err)
	write(t, ws, "a.md", "two\n")
	res, err := st.ArchiveThread(bg, "default", "main")
	must(t, "archive", err)
	equal(t, "archive", res, satchel.ArchiveResult{Thread: "main", Archived: true, Changed: true, Head: 3})
	res, err = st.ArchiveThread(bg, "default", "main")
	must(t, "archive again", err)
	equal(t, "archive again", res.Changed, false)

	got, err := ws.Read(bg, "a.md")
	must(t, "read an archived thread", err)
	equal(t, "read an archived thread", got, "two\n")
	on, err := ws.Archived(bg)
	must(t, "archived", err)
	equal(t, "archived", on, true)
	ts, err := st.Threads(bg, "default")
	must(t, "threads", err)
	equal(t, "listing shows archived", ts[0].Archived, true)

	const msg = "thread main of scope default is archived: it can be read, not written; satchel threads unarchive main --scope default makes it writable"
	refused(t, "write", ws.Write(bg, "b.md", "x"), satchel.ErrArchived, msg)
	refused(t, "append", ws.Append(bg, "a.md", "x"), satchel.ErrArchived, msg)
	refused(t, "delete", ws.Delete(bg, "a.md"), satchel.ErrArchived, msg)
	_, err = ws.Restore(bg, "before")
	refused(t, "restore", err, satchel.ErrArchived, msg)
	_, err = ws.Checkpoint(bg, "after")
	refused(t, "checkpoint", err, satchel.ErrArchived, msg)
	refused(t, "spill", ws.SaveSpill(bg, "spill/s", "x"), satchel.ErrArchived, msg)
	// A workspace opened afresh (another process's, say) is refused too.
	fresh := satchel.New(backendof.Store(st))
	fw, err := fresh.Workspace(bg, "default", "main")
	must(t, "fresh workspace", err)
	refused(t, "write through another store", fw.Write(bg, "b.md", "x"), satchel.ErrArchived, msg)
	// A fork of an archived thread is a new thread, writable.
	fk, err := ws.Fork(bg, "", "fork")
	must(t, "fork an archived thread", err)
	write(t, fk, "f.md", "forked")
	_, err = fk.PublishTo(bg, ws, 3)
	refused(t, "publish onto an archived thread", err, satchel.ErrArchived, msg)
	_, err = fk.PublishTo(bg, ws, 2)
	refused(t, "publish onto an archived thread from before its archive", err, satchel.ErrConflict, "")
	h, err := ws.History(bg, 0, 0)
	must(t, "history", err)
	equal(t, "history records the archive", h[0].Op, "archive")

	res, err = st.UnarchiveThread(bg, "default", "main")
	must(t, "unarchive", err)
	equal(t, "unarchive", res, satchel.ArchiveResult{Thread: "main", Archived: false, Changed: true, Head: 4})
	// The other store's cached head is the archive entry: the write reads
	// the head again and lands.
	must(t, "write after unarchive", fw.Write(bg, "b.md", "x"))
	write(t, ws, "c.md", "y")
	must(t, "spill after unarchive", ws.SaveSpill(bg, "spill/s", "x"))
	res, err = st.UnarchiveThread(bg, "default", "main")
	must(t, "unarchive again", err)
	equal(t, "unarchive again", res.Changed, false)

	_, err = st.ArchiveThread(bg, "default", "missing")
	refused(t, "archive a missing thread", err, satchel.ErrNotFound, "")
	// An archived thread can still be deleted.
	_, err = st.ArchiveThread(bg, "default", "fork")
	must(t, "archive the fork", err)
	must(t, "delete an archived thread", st.DeleteThread(bg, "default", "fork"))
}

// defaultRetention: a scope's default retention policy is taken by the
// threads created after it was set; existing threads keep theirs.
func (s *suite) defaultRetention(t *testing.T, st *satchel.Store, ws *satchel.Workspace) {
	write(t, ws, "a", "1")
	own, err := st.Workspace(bg, "default", "own")
	must(t, "own", err)
	write(t, own, "a", "1")
	_, err = own.SetRetention(bg, satchel.Policy{MaxCommits: 5})
	must(t, "own policy", err)
	p, err := st.DefaultRetention(bg, "default")
	must(t, "default", err)
	equal(t, "no default", p, satchel.Policy{})

	def := satchel.Policy{MaxCommits: 2}
	must(t, "set default", st.SetDefaultRetention(bg, "default", def))
	p, _ = st.DefaultRetention(bg, "default")
	equal(t, "default", p, def)
	// A clock that does not move between the setting and a thread's
	// creation still orders them: wait for the backend's clock to pass.
	waitClockPast(t, st)
	nw, err := st.Workspace(bg, "default", "new")
	must(t, "new", err)
	for i := range 4 {
		write(t, nw, "a", string(rune('a'+i)))
		write(t, ws, "a", string(rune('a'+i)))
		write(t, own, "a", string(rune('a'+i)))
	}
	p, _ = nw.Retention(bg)
	equal(t, "a new thread takes the default", p, def)
	p, _ = ws.Retention(bg)
	equal(t, "an existing thread keeps none", p, satchel.Policy{})
	p, _ = own.Retention(bg)
	equal(t, "an existing thread keeps its own", p, satchel.Policy{MaxCommits: 5})
	fk, err := nw.Fork(bg, "", "fork")
	must(t, "fork", err)
	p, _ = fk.Retention(bg)
	equal(t, "a fork takes the default", p, def)
	must(t, "spill", nw.SaveSpill(bg, "spill/s", "x"))
	p, _ = nw.Spills().Retention(bg)
	equal(t, "a spill area keeps its own policy", p, satchel.Policy{MaxCommits: satchel.KeepSpills})

	_, err = st.GC(bg, "", satchel.NoGrace)
	must(t, "gc", err)
	for _, c := range []struct {
		w    *satchel.Workspace
		want int
	}{{nw, 2}, {ws, 5}, {own, 5}} {
		h, err := c.w.History(bg, 0, 0)
		must(t, "history", err)
		equal(t, "commits kept by gc", len(h), c.want)
	}
	// A later default is taken by the threads created after it only.
	must(t, "set another default", st.SetDefaultRetention(bg, "default", satchel.Policy{MaxCommits: 7}))
	p, _ = nw.Retention(bg)
	equal(t, "a thread keeps the default of its creation", p, def)
	must(t, "clear the default", st.SetDefaultRetention(bg, "default", satchel.Policy{}))
	p, _ = st.DefaultRetention(bg, "default")
	equal(t, "cleared", p, satchel.Policy{})
	refused(t, "negative default", st.SetDefaultRetention(bg, "default", satchel.Policy{MaxCommits: -1}), satchel.ErrInvalidArgument, "")
	refused(t, "default of a bad scope", st.SetDefaultRetention(bg, "bad scope", def), satchel.ErrInvalidArgument, "")
}

// waitClockPast waits until the backend's clock has moved past the time it
// reads now.
func waitClockPast(t *testing.T, st *satchel.Store) {
	t.Helper()
	start, err := backendof.Store(st).Now(bg)
	must(t, "now", err)
	for {
		n, err := backendof.Store(st).Now(bg)
		must(t, "now", err)
		if n.After(start) {
			return
		}
		runtime.Gosched()
	}
}

// deleteThreadStorage: the storage of a deleted thread is reclaimed by the
// next gc, but what a fork of it still reaches stays readable.
func (s *suite) deleteThreadStorage(t *testing.T, st *satchel.Store, ws *satchel.Workspace) {
	b := backendof.Store(st)
	gone, err := st.Workspace(bg, "default", "gone")
	must(t, "gone", err)
	write(t, gone, "a.md", "first", "b.md", "second")
	fk, err := gone.Fork(bg, "", "kept-fork")
	must(t, "fork", err)
	write(t, gone, "c.md", "only in gone")
	th, err := b.Thread(bg, "default", "gone", false)
	must(t, "thread", err)
	cs, err := b.Log(bg, th.ID, 0, 0)
	must(t, "log", err)
	must(t, "delete", st.DeleteThread(bg, "default", "gone"))
	gs, err := st.GC(bg, "", satchel.NoGrace)
	must(t, "gc", err)
	if gs.PacksDeleted+gs.PacksRewritten == 0 {
		t.Errorf("gc after deleting a thread reclaimed nothing: %+v", gs)
	}
	// The commit only the deleted thread reached is gone.
	if _, err := b.Pack(bg, cs[0].ID); !errors.Is(err, backend.ErrNoPack) {
		t.Errorf("the pack of the deleted thread's last commit: %v", err)
	}
	got, err := fk.Read(bg, "a.md")
	must(t, "read the fork", err)
	equal(t, "the fork keeps what it reaches", got, "first")
	chk, err := st.Check(bg)
	must(t, "check", err)
	if len(chk.Faults) != 0 {
		t.Errorf("check after deleting a thread: %+v", chk.Faults)
	}
}
