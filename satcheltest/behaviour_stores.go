package satcheltest

import (
	"fmt"
	"testing"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/internal/backendof"
)

func (s *suite) threadsAndScopes(t *testing.T, st *satchel.Store, ws *satchel.Workspace) {
	write(t, ws, "a.md", "main")
	other, err := st.Workspace(bg, "tenant-2", "main")
	must(t, "other scope", err)
	ok, _ := other.Exists(bg, "a.md")
	equal(t, "scopes do not share files", ok, false)
	write(t, other, "a.md", "tenant 2")
	got, _ := ws.Read(bg, "a.md")
	equal(t, "scope isolation", got, "main")
	_, err = st.Workspace(bg, "default", "123")
	refused(t, "numeric thread name", err, satchel.ErrInvalidArgument, "")
	_, err = st.Workspace(bg, "bad scope", "main")
	refused(t, "bad scope", err, satchel.ErrInvalidArgument, "")
	tw, _ := st.Workspace(bg, "default", "t2")
	write(t, tw, "x", "y")
	ts, _ := st.Threads(bg, "default")
	equal(t, "threads", len(ts), 2)
	must(t, "delete thread", st.DeleteThread(bg, "default", "t2"))
	ts, _ = st.Threads(bg, "default")
	equal(t, "threads after delete", len(ts), 1)
	refused(t, "delete missing thread", st.DeleteThread(bg, "default", "t2"), satchel.ErrNotFound, "thread not found: t2")
	tw2, _ := st.Workspace(bg, "default", "t2")
	ok, _ = tw2.Exists(bg, "x")
	equal(t, "a recreated thread starts empty", ok, false)
	_, err = st.Purge(bg, "tenant-2")
	must(t, "purge", err)
	ok, _ = other.Exists(bg, "a.md")
	equal(t, "purged", ok, false)
}

// twoStores: two Stores on one backend stand for two processes sharing a
// database. Each sees the other's commits, and neither acts on a stale
// view of the head: an edit of text only the other wrote succeeds, and a
// write after the other collected old commits succeeds.
// idempotencyKeys: a keyed append retried lands once, from another store
// over the same database too, and its key with other text is refused; a
// backend without backend.Keys refuses keys.
func (s *suite) idempotencyKeys(t *testing.T, st *satchel.Store, ws *satchel.Workspace) {
	key := satchel.IdempotencyKey("k-1")
	if _, ok := backend.As[backend.Keys](backendof.Store(st)); !ok {
		refused(t, "a key without backend.Keys", ws.Append(bg, "log", "x", key), satchel.ErrInvalidArgument, "this backend keeps no idempotency keys")
		return
	}
	must(t, "append", ws.Append(bg, "log", "one\n", key))
	other := satchel.New(backendof.Store(st), satchel.WithCacheBytes(1))
	wo, err := other.Workspace(bg, "default", "main")
	must(t, "workspace", err)
	must(t, "retry from another store", wo.Append(bg, "log", "one\n", key))
	must(t, "retry", ws.Append(bg, "log", "one\n", key))
	got, err := ws.Read(bg, "log")
	must(t, "read", err)
	if got != "one\n" {
		t.Errorf("log = %q after retries, want the text once", got)
	}
	refused(t, "other text", ws.Append(bg, "log", "two\n", key), satchel.ErrIdempotencyKeyReused, "idempotency key k-1 was already used with different arguments")
}

// idempotencyKeysPerThread: a key claimed on one thread does not exist
// for another thread of the scope (an agent bound to t3 used to make
// main's write under the same key fail as "already used with different
// arguments"); on each thread it still means one call.
func (s *suite) idempotencyKeysPerThread(t *testing.T, st *satchel.Store, ws *satchel.Workspace) {
	if _, ok := backend.As[backend.Keys](backendof.Store(st)); !ok {
		t.Skip("the backend keeps no idempotency keys")
	}
	key := satchel.IdempotencyKey("K9")
	t3, err := st.Workspace(bg, ws.Scope(), "t3")
	must(t, "workspace t3", err)
	must(t, "t3 claims K9", t3.Write(bg, "squat.md", "first", key))
	must(t, "main writes under K9", ws.Write(bg, "real.md", "mine", key))
	got, err := ws.Read(bg, "real.md")
	must(t, "read", err)
	equal(t, "main's write", got, "mine")
	must(t, "main's retry", ws.Write(bg, "real.md", "mine", key))
	refused(t, "main, other arguments", ws.Write(bg, "real.md", "other", key), satchel.ErrIdempotencyKeyReused, "idempotency key K9 was already used with different arguments")
	refused(t, "t3, other arguments", t3.Write(bg, "squat.md", "second", key), satchel.ErrIdempotencyKeyReused, "idempotency key K9 was already used with different arguments")
	if ok, _ := ws.Exists(bg, "squat.md"); ok {
		t.Error("t3's write reached main")
	}
}

func (s *suite) twoStores(t *testing.T, a *satchel.Store, wa *satchel.Workspace) {
	b := satchel.New(backendof.Store(a), satchel.WithCacheBytes(1))
	wb, err := b.Workspace(bg, "default", "main")
	must(t, "workspace b", err)
	must(t, "a writes", wa.Write(bg, "f.md", "from a\n"))
	must(t, "b appends", wb.Append(bg, "f.md", "from b\n"))
	n, err := wa.StrReplace(bg, "f.md", "from b", "edited by a", false)
	must(t, "a edits what b wrote", err)
	equal(t, "replaced", n, 1)
	got, _ := wb.Read(bg, "f.md")
	equal(t, "b reads a's edit", got, "from a\nedited by a\n")
	must(t, "b writes g", wb.Write(bg, "g.md", "g"))
	must(t, "a deletes what b wrote", wa.Delete(bg, "g.md"))
	ok, _ := wb.Exists(bg, "g.md")
	equal(t, "deleted", ok, false)
	for i := 0; i < 3; i++ {
		must(t, "b writes", wb.Write(bg, "h.md", fmt.Sprint(i)))
	}
	_, err = wb.SetRetention(bg, satchel.Policy{MaxCommits: 1})
	must(t, "retain", err)
	_, err = b.GC(bg, "", satchel.NoGrace)
	must(t, "gc", err)
	must(t, "a writes after b collected the commits a knew", wa.Write(bg, "i.md", "i"))
	got, _ = wb.Read(bg, "h.md")
	equal(t, "b's last write", got, "2")
	got, _ = wb.Read(bg, "f.md")
	equal(t, "a's edit survives", got, "from a\nedited by a\n")
}
