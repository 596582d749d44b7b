package satcheltest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/backendof"
)

func (s *suite) versions(t *testing.T, _ *satchel.Store, ws *satchel.Workspace) {
	write(t, ws, "a.md", "v1\n", "b.md", "b\n")
	c, err := ws.Checkpoint(bg, "first")
	must(t, "checkpoint", err)
	equal(t, "checkpoint names the head", c.Seq, int64(2))
	_, err = ws.Checkpoint(bg, "first")
	refused(t, "duplicate checkpoint", err, satchel.ErrExists, "checkpoint first already exists in thread main")
	for _, bad := range []string{"", "123", strings.Repeat("x", 129), "a b", "a/b"} {
		_, err = ws.Checkpoint(bg, bad)
		refused(t, "checkpoint name "+bad, err, satchel.ErrInvalidArgument, "")
	}
	must(t, "edit", ws.Write(bg, "a.md", "v2\n"))
	must(t, "delete", ws.Delete(bg, "b.md"))
	write(t, ws, "c.md", "c\n")
	_, err = ws.Checkpoint(bg, "second")
	must(t, "checkpoint 2", err)
	h, err := ws.History(bg, 0, 0)
	must(t, "history", err)
	var seqs []string
	for _, c := range h {
		seqs = append(seqs, fmt.Sprint(c.Seq))
	}
	equal(t, "history newest first", strings.Join(seqs, ","), "5,4,3,2,1")
	equal(t, "checkpoint in history", strings.Join(h[0].Checkpoints, ","), "second")
	equal(t, "op recorded", h[1].Op, "delete")
	h2, _ := ws.History(bg, 0, 2)
	equal(t, "history limit", len(h2), 2)
	for _, ref := range []string{"first", "2"} {
		old, err := ws.At(bg, ref)
		must(t, "at "+ref, err)
		got, err := old.Read(bg, "a.md")
		must(t, "read at", err)
		equal(t, "read at "+ref, got, "v1\n")
		files, _ := old.Glob(bg, "*.md")
		equalSlice(t, "glob at "+ref, files, []string{"a.md", "b.md"})
		r, _ := old.Grep(bg, "^b", "", satchel.GrepOptions{})
		equal(t, "grep at "+ref, len(r.Matches), 1)
	}
	empty, err := ws.At(bg, "0")
	must(t, "at 0", err)
	files, _ := empty.Glob(bg, "**")
	equal(t, "empty before the first commit", len(files), 0)
	_, err = ws.At(bg, "99")
	refused(t, "at unknown seq", err, satchel.ErrNotFound, "")
	_, err = ws.At(bg, "nope")
	refused(t, "at unknown checkpoint", err, satchel.ErrNotFound, "checkpoint not found: nope")
	// A mutation can name its own commit, in one transaction.
	must(t, "write with checkpoint", ws.Write(bg, "d.md", "d\n", satchel.WithCheckpoint("with-d")))
	withD, err := ws.At(bg, "with-d")
	must(t, "at with-d", err)
	equal(t, "with-d is the write's commit", withD.Commit().Seq, int64(6))
	refused(t, "taken name", ws.Write(bg, "e.md", "e", satchel.WithCheckpoint("with-d")), satchel.ErrExists, "checkpoint with-d already exists in thread main")
	ok, _ := ws.Exists(bg, "e.md")
	equal(t, "a refused checkpoint name commits nothing", ok, false)
	refused(t, "bad name", ws.Delete(bg, "d.md", satchel.WithCheckpoint("12")), satchel.ErrInvalidArgument, "")
	must(t, "delete d", ws.Delete(bg, "d.md"))
	d, err := ws.Diff(bg, "first", "second")
	must(t, "diff", err)
	equal(t, "diff", fmt.Sprint(d), "[{a.md changed} {b.md removed} {c.md added}]")
	d, _ = ws.Diff(bg, "second", "second")
	equal(t, "diff of a commit with itself", len(d), 0)
	u, err := ws.DiffFile(bg, "first", "second", "a.md")
	must(t, "diff file", err)
	if !strings.Contains(u, "-v1") || !strings.Contains(u, "+v2") {
		t.Errorf("unified diff lacks the change:\n%s", u)
	}
}

func (s *suite) forkAndRestore(t *testing.T, st *satchel.Store, ws *satchel.Workspace) {
	write(t, ws, "a.md", "v1")
	_, _ = ws.Checkpoint(bg, "cp")
	write(t, ws, "a.md", "v2")
	fk, err := ws.Fork(bg, "cp", "side")
	must(t, "fork", err)
	got, _ := fk.Read(bg, "a.md")
	equal(t, "fork sees the checkpoint", got, "v1")
	write(t, fk, "a.md", "side change")
	got, _ = ws.Read(bg, "a.md")
	equal(t, "the source is untouched", got, "v2")
	_, err = ws.Fork(bg, "cp", "side")
	refused(t, "fork onto an existing thread", err, satchel.ErrExists, "thread side already exists")
	_, err = ws.Fork(bg, "nope", "other")
	refused(t, "fork from unknown ref", err, satchel.ErrNotFound, "")
	ghost, _ := st.Workspace(bg, "default", "ghost")
	_, err = ghost.Fork(bg, "", "other")
	refused(t, "fork from a missing thread", err, satchel.ErrNotFound, "thread not found: ghost")
	c, err := ws.Restore(bg, "cp")
	must(t, "restore", err)
	equal(t, "restore is a new commit", c.Seq, int64(3))
	got, _ = ws.Read(bg, "a.md")
	equal(t, "restored", got, "v1")
	old, _ := ws.At(bg, "2")
	got, _ = old.Read(bg, "a.md")
	equal(t, "nothing lost", got, "v2")
	threads, _ := st.Threads(bg, "default")
	equal(t, "threads", len(threads), 2)
}

func (s *suite) retention(t *testing.T, _ *satchel.Store, ws *satchel.Workspace) {
	for i := 1; i <= 10; i++ {
		write(t, ws, "a.md", fmt.Sprint(i))
		if i == 3 || i == 6 {
			_, err := ws.Checkpoint(bg, fmt.Sprintf("cp%d", i))
			must(t, "checkpoint", err)
		}
	}
	for _, bad := range []struct {
		in  satchel.PolicyInput
		msg string
	}{
		{satchel.PolicyInput{MaxCommits: ptr(0)}, "maxCommits must be at least 1, was 0"},
		{satchel.PolicyInput{MaxCheckpoints: ptr(-2)}, "maxCheckpoints must be at least 1, was -2"},
		{satchel.PolicyInput{MaxAge: ptr(-time.Second)}, "maxAge must be positive, was -1s"},
		{satchel.PolicyInput{MaxAge: ptr(time.Duration(0))}, "maxAge must be positive, was 0s"},
	} {
		_, err := bad.in.Valid()
		refused(t, "policy", err, satchel.ErrInvalidArgument, bad.msg)
	}
	n, err := ws.SetRetention(bg, satchel.Policy{MaxCommits: 2})
	must(t, "retain", err)
	// Kept: 10, 9 (last two) and the checkpoints 3 and 6.
	equal(t, "dropped", n, 6)
	h, _ := ws.History(bg, 0, 0)
	var seqs []string
	for _, c := range h {
		seqs = append(seqs, fmt.Sprint(c.Seq))
	}
	equal(t, "retained", strings.Join(seqs, ","), "10,9,6,3")
	_, err = ws.At(bg, "5")
	refused(t, "dropped commit", err, satchel.ErrNotFound, "")
	n, _ = ws.SetRetention(bg, satchel.Policy{MaxCommits: 1, MaxCheckpoints: 1})
	equal(t, "dropped with maxCheckpoints", n, 2)
	h, _ = ws.History(bg, 0, 0)
	equal(t, "head and newest checkpoint", len(h), 2)
	p, _ := ws.Retention(bg)
	equal(t, "stored policy", p.MaxCommits, 1)
	// maxAge: nothing is old enough yet.
	n, _ = ws.SetRetention(bg, satchel.Policy{MaxAge: time.Hour})
	equal(t, "young commits stay", n, 0)
}

func ptr[T any](v T) *T { return &v }

func (s *suite) gc(t *testing.T, st *satchel.Store, ws *satchel.Workspace) {
	big := strings.Repeat("0123456789abcdef", 1<<12) // 64 KiB
	for i := 0; i < 20; i++ {
		write(t, ws, "big.txt", fmt.Sprintf("%d %s", i, big))
	}
	write(t, ws, "keep.md", "keep")
	_, _ = ws.Checkpoint(bg, "keep")
	fk, err := ws.Fork(bg, "keep", "fork")
	must(t, "fork", err)
	_ = fk
	_, err = ws.SetRetention(bg, satchel.Policy{MaxCommits: 1})
	must(t, "retain", err)
	stats, err := st.GC(bg, "", satchel.NoGrace)
	must(t, "gc", err)
	if stats.PacksDeleted == 0 {
		t.Errorf("gc deleted nothing after 19 commits were dropped: %+v", stats)
	}
	// Everything a retained commit reaches is still readable: the head, the
	// checkpoint and the fork that shares its tree.
	got, err := ws.Read(bg, "big.txt")
	must(t, "read head after gc", err)
	equal(t, "head after gc", got, "19 "+big)
	old, err := ws.At(bg, "keep")
	must(t, "at checkpoint after gc", err)
	got, _ = old.Read(bg, "keep.md")
	equal(t, "checkpoint after gc", got, "keep")
	got, err = fk.Read(bg, "big.txt")
	must(t, "read fork after gc", err)
	equal(t, "fork after gc", got, "19 "+big)
	// A fresh store (no cache) reads the same.
	st2 := satchel.New(backendof.Store(st))
	ws2, _ := st2.Workspace(bg, "default", "main")
	got, err = ws2.Read(bg, "big.txt")
	must(t, "uncached read after gc", err)
	equal(t, "uncached head after gc", got, "19 "+big)
	again, err := st.GC(bg, "", satchel.NoGrace)
	must(t, "second gc", err)
	equal(t, "second gc deletes nothing", again.PacksDeleted, 0)
}
