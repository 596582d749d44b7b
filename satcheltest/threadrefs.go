package satcheltest

import (
	"strconv"
	"testing"

	"github.com/satchel-dev/satchel"
)

// threadRefs: THREAD@REF and THREAD name commits of other threads of the
// scope wherever a commit is named; OnlyThread confines a workspace.
func (s *suite) threadRefs(t *testing.T, st *satchel.Store, main *satchel.Workspace) {
	write(t, main, "a.md", "main\n")
	tryB, err := main.Fork(bg, "head", "try-b")
	must(t, "fork", err)
	write(t, tryB, "a.md", "b1\n")
	_, err = tryB.Checkpoint(bg, "cp")
	must(t, "checkpoint", err)
	write(t, tryB, "a.md", "b2\n")
	bHead, _ := tryB.Head(bg)

	read := func(ref string) string {
		t.Helper()
		snap, err := main.At(bg, ref)
		must(t, "at "+ref, err)
		got, err := snap.Read(bg, "a.md")
		must(t, "read at "+ref, err)
		return got
	}
	equal(t, "try-b@2", read("try-b@2"), "b1\n")
	equal(t, "try-b@cp", read("try-b@cp"), "b1\n")
	equal(t, "try-b@head", read("try-b@head"), "b2\n")
	equal(t, "try-b", read("try-b"), "b2\n")
	equal(t, "main@1", read("main@1"), "main\n")
	equal(t, "main", read("main"), "main\n")

	cs, err := main.Diff(bg, "main", "try-b")
	must(t, "diff main try-b", err)
	if len(cs) != 1 || cs[0].Path != "a.md" || cs[0].Kind != "changed" {
		t.Errorf("diff main try-b: %+v", cs)
	}
	d, err := tryB.DiffFile(bg, "main", "try-b@cp", "a.md")
	must(t, "diff file", err)
	if d == "" {
		t.Error("diff file between threads is empty")
	}

	// A checkpoint of the workspace's thread wins over a thread's name.
	_, err = main.Checkpoint(bg, "try-b")
	must(t, "checkpoint named as a thread", err)
	equal(t, "the checkpoint", read("try-b"), "main\n")
	equal(t, "the thread, by @head", read("try-b@head"), "b2\n")

	_, err = main.At(bg, "nope@1")
	refused(t, "missing thread", err, satchel.ErrNotFound, "thread not found: nope")
	_, err = main.At(bg, "nope")
	refused(t, "neither", err, satchel.ErrNotFound, "checkpoint not found: nope")
	_, err = main.At(bg, "try-b@")
	refused(t, "empty ref", err, satchel.ErrInvalidArgument, `invalid commit "try-b@": THREAD@REF takes a sequence number, a checkpoint name or head after the @`)
	_, err = main.At(bg, "try-b@99")
	refused(t, "missing commit", err, satchel.ErrNotFound, "commit not found: 99 is not a retained commit of thread try-b")

	// Restore and fork take them too.
	c, err := main.Restore(bg, "try-b@head")
	must(t, "restore to try-b", err)
	equal(t, "restore summary", c.Summary, "restore to try-b@"+itoa(bHead.Seq))
	got, _ := main.Read(bg, "a.md")
	equal(t, "restored", got, "b2\n")
	tryC, err := main.Fork(bg, "try-b@cp", "try-c")
	must(t, "fork from try-b@cp", err)
	got, _ = tryC.Read(bg, "a.md")
	equal(t, "forked from another thread", got, "b1\n")
	o, ok, err := tryC.Origin(bg)
	must(t, "origin", err)
	if !ok || o.Thread != "try-b" || o.Seq != 2 {
		t.Errorf("origin of try-c: %+v %v", o, ok)
	}

	// OnThread keeps the actor and the read ledger.
	tw, err := st.Workspace(bg, "default", "main", satchel.TrackReads())
	must(t, "tracked", err)
	bw, err := tw.OnThread(bg, "try-b")
	must(t, "on try-b", err)
	_, err = bw.Read(bg, "a.md")
	must(t, "read on try-b", err)
	back, err := bw.OnThread(bg, "main")
	must(t, "back on main", err)
	refused(t, "main's a.md, not read", back.Write(bg, "a.md", "x"), satchel.ErrStale, "a.md exists and you have not read it; read it before changing it")
	bw2, err := back.OnThread(bg, "try-b")
	must(t, "on try-b again", err)
	must(t, "try-b's a.md, read", bw2.Write(bg, "a.md", "b3\n"))
	_, err = tw.OnThread(bg, "nope")
	refused(t, "missing thread", err, satchel.ErrNotFound, "thread not found: nope")

	// A confined workspace reaches no other thread.
	cw, err := st.Workspace(bg, "default", "try-b", satchel.OnlyThread())
	must(t, "confined", err)
	const only = "this token can use thread try-b only"
	_, err = cw.At(bg, "main@1")
	refused(t, "confined at", err, satchel.ErrAccessDenied, only)
	_, err = cw.At(bg, "main")
	refused(t, "confined bare thread", err, satchel.ErrAccessDenied, only)
	_, err = cw.Diff(bg, "try-b@1", "main")
	refused(t, "confined diff", err, satchel.ErrAccessDenied, only)
	_, err = cw.Fork(bg, "head", "try-d")
	refused(t, "confined fork", err, satchel.ErrAccessDenied, only)
	_, err = cw.OnThread(bg, "main")
	refused(t, "confined switch", err, satchel.ErrAccessDenied, only)
	_, err = cw.At(bg, "try-b@cp")
	must(t, "its own thread by name", err)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
