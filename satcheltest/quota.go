package satcheltest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/internal/backendof"
)

// RunQuotas checks scope quotas (Store.SetQuota) through the satchel API:
// each quota refuses at its limit with its exact message and nothing
// half-written, the counters of a scope that existed before its quota are
// right, deletes, restores, retention and collection lower them so that
// they agree with a count from storage, and two stores racing to a limit
// cannot both pass it.
func RunQuotas(t *testing.T, open func(t *testing.T) backend.Backend) {
	store := func(t *testing.T) *satchel.Store {
		st := satchel.New(open(t))
		t.Cleanup(func() { st.Close() })
		return st
	}
	t.Run("Refusals", func(t *testing.T) { quotaRefusals(t, store(t)) })
	t.Run("Counters", func(t *testing.T) { quotaCounters(t, store(t)) })
	t.Run("Race", func(t *testing.T) { quotaRace(t, store(t)) })
}

func usageOf(t *testing.T, st *satchel.Store, scope string) satchel.Usage {
	t.Helper()
	q, err := st.Quota(bg, scope)
	must(t, "quota", err)
	return q.Used
}

// agrees checks that the counters kept for scope are what storage holds.
func agrees(t *testing.T, st *satchel.Store, scope, when string) {
	t.Helper()
	rep, err := st.Check(bg, satchel.InScope(scope))
	must(t, "check", err)
	for _, f := range rep.Faults {
		t.Errorf("%s: check: %s", when, f)
	}
	kept := usageOf(t, st, scope)
	must(t, "lift quota", st.SetQuota(bg, scope, satchel.Quota{}))
	counted := usageOf(t, st, scope)
	if kept != counted {
		t.Errorf("%s: counters %+v, storage holds %+v", when, kept, counted)
	}
	must(t, "quota again", st.SetQuota(bg, scope, satchel.Quota{Bytes: 1 << 40}))
}

func quotaRefusals(t *testing.T, st *satchel.Store) {
	ws, _ := st.Workspace(bg, "acme", "main")
	// Bytes count as DESIGN §2.4 counts them: "a" is 3, content "1" is 3.
	must(t, "set", st.SetQuota(bg, "acme", satchel.Quota{Bytes: 20}))
	write(t, ws, "a", "1", "b", "2") // 12
	refused(t, "bytes", ws.Write(bg, "c", "1234567"), satchel.ErrQuotaExceeded,
		"quota exceeded: scope acme would hold 24 B of files, over its quota of 20 B")
	must(t, "up to the limit", ws.Write(bg, "c", "12")) // 19
	refused(t, "bytes by append", ws.Append(bg, "b", "xy"), satchel.ErrQuotaExceeded,
		"quota exceeded: scope acme would hold 21 B of files, over its quota of 20 B")
	got, _ := ws.Read(bg, "b")
	equal(t, "nothing half-written", got, "2")

	must(t, "set files", st.SetQuota(bg, "acme", satchel.Quota{Files: 3}))
	refused(t, "files", ws.Write(bg, "d", ""), satchel.ErrQuotaExceeded, "quota exceeded: scope acme would hold 4 files, over its quota of 3")
	ok, _ := ws.Exists(bg, "d")
	equal(t, "no file half-written", ok, false)
	// A fork is charged every file of its source (decision 0139), and
	// the refusal says so.
	_, err0 := ws.Fork(bg, "head", "files-fork")
	refused(t, "files by fork", err0, satchel.ErrQuotaExceeded, "quota exceeded: scope acme would hold 6 files, over its quota of 3; a fork counts every file of its source, as the files and bytes quotas count what each thread's head holds (the history-bytes quota counts what is stored)")

	must(t, "set threads", st.SetQuota(bg, "acme", satchel.Quota{Threads: 2}))
	other, _ := st.Workspace(bg, "acme", "other")
	must(t, "second thread", other.Write(bg, "x", ""))
	third, _ := st.Workspace(bg, "acme", "third")
	refused(t, "threads", third.Write(bg, "x", ""), satchel.ErrQuotaExceeded, "quota exceeded: scope acme would hold 3 threads, over its quota of 2")
	_, err := ws.Checkpoint(bg, "cp")
	must(t, "checkpoint", err)
	_, err = ws.Fork(bg, "cp", "fork")
	refused(t, "threads by fork", err, satchel.ErrQuotaExceeded, "quota exceeded: scope acme would hold 3 threads, over its quota of 2")
	equal(t, "threads after the refusals", usageOf(t, st, "acme").Threads, int64(2))
	ths, err := st.Threads(bg, "acme")
	must(t, "threads", err)
	equal(t, "no thread half-made", len(ths), 2)

	h := usageOf(t, st, "acme").HistoryBytes
	must(t, "set history", st.SetQuota(bg, "acme", satchel.Quota{HistoryBytes: h + 100}))
	err = ws.Write(bg, "big", strings.Repeat("z", 4096))
	refused(t, "history", err, satchel.ErrQuotaExceeded, "")
	if err != nil && !strings.Contains(err.Error(), "of history, over its quota of ") {
		t.Errorf("history: %q", err)
	}
	ok, _ = ws.Exists(bg, "big")
	equal(t, "no history half-written", ok, false)
	must(t, "small history", ws.Write(bg, "small", ""))
	agrees(t, st, "acme", "after the refusals")
}

func quotaCounters(t *testing.T, st *satchel.Store) {
	ws, _ := st.Workspace(bg, "acme", "main")
	write(t, ws, "a.md", strings.Repeat("a", 1000), "b.md", "b")
	// Usage existing before the quota is counted when it is set.
	must(t, "set on an existing scope", st.SetQuota(bg, "acme", satchel.Quota{Bytes: 1 << 40}))
	u := usageOf(t, st, "acme")
	equal(t, "files counted", u.Files, int64(2))
	equal(t, "threads counted", u.Threads, int64(1))
	if u.Bytes < 1000 || u.HistoryBytes < 1000 {
		t.Errorf("usage %+v: the existing files are not counted", u)
	}
	agrees(t, st, "acme", "after set")
	_, err := ws.Checkpoint(bg, "two")
	must(t, "checkpoint", err)
	write(t, ws, "c.md", "c")
	must(t, "delete", ws.Delete(bg, "a.md"))
	agrees(t, st, "acme", "after delete")
	_, err = ws.Restore(bg, "two")
	must(t, "restore", err)
	agrees(t, st, "acme", "after restore")
	fk, err := ws.Fork(bg, "two", "fork")
	must(t, "fork", err)
	head, err := ws.Head(bg)
	must(t, "head", err)
	write(t, fk, "f.md", "f", "g.md", strings.Repeat("g", 100))
	agrees(t, st, "acme", "after fork")
	_, err = fk.PublishTo(bg, ws, head.Seq)
	must(t, "publish", err)
	agrees(t, st, "acme", "after publish")
	_, err = ws.SetRetention(bg, satchel.Policy{MaxCommits: 1})
	must(t, "retain", err)
	agrees(t, st, "acme", "after retention")
	_, err = st.GC(bg, "acme", satchel.NoGrace)
	must(t, "gc", err)
	agrees(t, st, "acme", "after gc")
	before := usageOf(t, st, "acme")
	must(t, "delete thread", st.DeleteThread(bg, "acme", "fork"))
	after := usageOf(t, st, "acme")
	equal(t, "a deleted thread leaves the count", after.Threads, before.Threads-1)
	agrees(t, st, "acme", "after thread deletion")
	_, err = st.GC(bg, "acme", satchel.NoGrace)
	must(t, "gc", err)
	agrees(t, st, "acme", "after the deleted thread's collection")
	// A limit lowered below the usage refuses growth, never shrinking.
	must(t, "lower", st.SetQuota(bg, "acme", satchel.Quota{Files: 1}))
	refused(t, "over a lowered limit", ws.Write(bg, "z.md", ""), satchel.ErrQuotaExceeded, "")
	must(t, "shrinking is allowed", ws.Delete(bg, "b.md"))
	refused(t, "negative", st.SetQuota(bg, "acme", satchel.Quota{Files: -1}), satchel.ErrInvalidArgument, "")
	qs, err := st.Quotas(bg)
	must(t, "quotas", err)
	equal(t, "listed", len(qs), 1)
	equal(t, "its limit", qs[0].Limits, satchel.Quota{Files: 1})
}

// RunQuotaRace has writers of two stores over a and b, two backends on
// one database (as two processes would open it), race to a scope's files
// quota and threads quota: exactly the quotas' numbers pass.
func RunQuotaRace(t *testing.T, a, b backend.Backend) {
	sa, sb := satchel.New(a), satchel.New(b)
	t.Run("Files", func(t *testing.T) { raceFiles(t, sa, sb) })
	t.Run("Threads", func(t *testing.T) { raceThreads(t, sa, sb) })
}

func raceThreads(t *testing.T, a, b *satchel.Store) {
	const limit = 6
	must(t, "set", a.SetQuota(bg, "threads", satchel.Quota{Threads: limit}))
	var wg sync.WaitGroup
	var mu sync.Mutex
	passed := 0
	for w := 0; w < 4; w++ {
		st := a
		if w%2 == 1 {
			st = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < limit; i++ {
				ws, _ := st.Workspace(bg, "threads", fmt.Sprintf("w%d-%d", w, i))
				err := ws.Write(bg, "f", "x")
				if err == nil {
					mu.Lock()
					passed++
					mu.Unlock()
				} else if !errors.Is(err, satchel.ErrQuotaExceeded) {
					t.Errorf("write: %v", err)
				}
			}
		}()
	}
	wg.Wait()
	equal(t, "threads made", passed, limit)
	ths, err := a.Threads(bg, "threads")
	must(t, "threads", err)
	equal(t, "threads stored", len(ths), limit)
	agrees(t, a, "threads", "after the race")
}

// quotaRace has writers of two stores on one backend race to a scope's
// files quota, each in its own thread: exactly the quota's number pass.
func quotaRace(t *testing.T, a *satchel.Store) {
	raceFiles(t, a, satchel.New(backendof.Store(a), satchel.WithCacheBytes(1)))
}

func raceFiles(t *testing.T, a, b *satchel.Store) {
	const limit = 10
	must(t, "set", a.SetQuota(bg, "race", satchel.Quota{Files: limit}))
	var wg sync.WaitGroup
	var mu sync.Mutex
	passed := 0
	for w := 0; w < 4; w++ {
		st := a
		if w%2 == 1 {
			st = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ws, _ := st.Workspace(bg, "race", fmt.Sprintf("t%d", w))
			for i := 0; i < limit; i++ {
				err := ws.Write(bg, fmt.Sprintf("f%d", i), "x")
				if err == nil {
					mu.Lock()
					passed++
					mu.Unlock()
				} else if !errors.Is(err, satchel.ErrQuotaExceeded) {
					t.Errorf("write: %v", err)
				}
			}
		}()
	}
	wg.Wait()
	equal(t, "writes that passed", passed, limit)
	equal(t, "files counted", usageOf(t, a, "race").Files, int64(limit))
	agrees(t, a, "race", "after the race")
}
