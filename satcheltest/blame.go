package satcheltest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel"
)

// blame: each line is given to the commit that last changed it, across a
// fork into its source thread, never to the fork's own commit; bounds
// pick lines; retention and OnlyThread cut the walk, marked Before.
func (s *suite) blame(t *testing.T, st *satchel.Store, main *satchel.Workspace) {
	write(t, main, "f.txt", "a\nb\nc\n")                        // 1
	must(t, "append", main.Append(bg, "f.txt", "d\n"))          // 2
	_, err := main.StrReplace(bg, "f.txt", "b\n", "B\n", false) // 3
	must(t, "edit", err)
	write(t, main, "other.txt", "x\n")         // 4: f.txt unchanged
	fork, err := main.Fork(bg, "head", "fork") // fork@1
	must(t, "fork", err)
	_, err = fork.StrReplace(bg, "f.txt", "c\n", "c2\nc3\n", false) // fork@2
	must(t, "edit in the fork", err)
	must(t, "delete", fork.Delete(bg, "other.txt")) // fork@3

	describe := func(ls []satchel.BlameLine) string {
		var b strings.Builder
		for _, l := range ls {
			fmt.Fprintf(&b, "%d %s %s@%d", l.Line, l.Text, l.Thread, l.Commit.Seq)
			if l.Before {
				b.WriteString(" before")
			}
			b.WriteString("\n")
		}
		return b.String()
	}
	got, err := fork.Blame(bg, "f.txt", "")
	must(t, "blame in the fork", err)
	equal(t, "blame across the fork", describe(got), "1 a main@1\n2 B main@3\n3 c2 fork@2\n4 c3 fork@2\n5 d main@2\n")
	if len(got) > 0 && got[0].Commit.Op != "write" {
		t.Errorf("blame: line 1's commit has op %q, want write", got[0].Commit.Op)
	}
	got, err = fork.Blame(bg, "f.txt", "head", 2, 3)
	must(t, "blame lines 2 to 3", err)
	equal(t, "blame of lines 2 to 3", describe(got), "2 B main@3\n3 c2 fork@2\n")
	got, err = main.Blame(bg, "f.txt", "2")
	must(t, "blame at 2", err)
	equal(t, "blame at commit 2", describe(got), "1 a main@1\n2 b main@1\n3 c main@1\n4 d main@2\n")

	confined, err := st.Workspace(bg, main.Scope(), "fork", satchel.OnlyThread())
	must(t, "open confined", err)
	got, err = confined.Blame(bg, "f.txt", "", 1, 1)
	must(t, "blame confined", err)
	equal(t, "blame confined to the fork", describe(got), "1 a fork@1 before\n")

	_, err = main.Blame(bg, "missing.txt", "")
	refused(t, "blame of a missing file", err, satchel.ErrNotFound, "file not found: missing.txt")
	_, err = main.Blame(bg, "f.txt", "", 3, 2)
	refused(t, "blame 3 to 2", err, satchel.ErrInvalidRange, "invalid blame range 3 to 2: lines are numbered from 1 and the end is not before the start (0: to the last line)")
	write(t, main, "bin.dat", "\x00\x01")
	_, err = main.Blame(bg, "bin.dat", "")
	refused(t, "blame of binary", err, satchel.ErrInvalidArgument, "cannot blame bin.dat: its content is binary")
	_, err = main.Blame(bg, "f.txt", "fork@2")
	if !errors.Is(err, satchel.ErrInvalidArgument) {
		t.Errorf("blame at another thread's commit: %v, want a refusal", err)
	}

	// A moved file's lines are the move's (blame does not follow a
	// rename); commits that name other paths are passed over.
	mv, err := st.Workspace(bg, main.Scope(), "mover")
	must(t, "open", err)
	write(t, mv, "d/x.txt", "x\n", "other.txt", "o\n")
	must(t, "move d/x.txt", mv.Move(bg, "d/x.txt", "e/x.txt"))
	write(t, mv, "other.txt", "p\n")
	got, err = mv.Blame(bg, "e/x.txt", "")
	must(t, "blame after a move", err)
	equal(t, "blame of a moved file", describe(got), "1 x mover@3\n")
	got, err = mv.Blame(bg, "other.txt", "")
	must(t, "blame of other.txt", err)
	equal(t, "blame of a file written twice", describe(got), "1 p mover@4\n")

	// Retention drops the first commits: what they wrote is "before".
	r, err := st.Workspace(bg, main.Scope(), "kept")
	must(t, "open", err)
	write(t, r, "g.txt", "1\n")
	must(t, "append", r.Append(bg, "g.txt", "2\n"))
	must(t, "append", r.Append(bg, "g.txt", "3\n"))
	_, err = r.SetRetention(bg, satchel.Policy{MaxCommits: 2})
	must(t, "retention", err)
	hist, _ := r.History(bg, 0, 0)
	oldest := hist[len(hist)-1].Seq
	got, err = r.Blame(bg, "g.txt", "")
	must(t, "blame after retention", err)
	want := fmt.Sprintf("1 1 kept@%d before\n2 2 kept@%d before\n3 3 kept@%d\n", oldest, oldest, hist[0].Seq)
	if oldest == 2 {
		want = "1 1 kept@2 before\n2 2 kept@2 before\n3 3 kept@3\n"
	}
	equal(t, "blame after retention", describe(got), want)

	blameHidden(t, st, main.Scope())
}

// blameHidden: for a caller whose file rules hide secrets/, blame finds no
// hidden file, and no line's commit summary names a hidden path or
// carries what a summary may quote of one (free text, a shell line).
func blameHidden(t *testing.T, st *satchel.Store, scope string) {
	w, err := st.Workspace(bg, scope, "hiding")
	must(t, "open", err)
	must(t, "batch", w.Batch(bg, func(ctx context.Context, b *satchel.Batch) error { // 1
		if err := b.Write(ctx, "pub.txt", "p\n"); err != nil {
			return err
		}
		return b.Write(ctx, "secrets/key.md", "TOKEN-SECRET\n")
	}))
	write(t, w, "secrets/old.txt", "o\n")                                                       // 2
	must(t, "move", w.Move(bg, "secrets/old.txt", "moved.txt"))                                 // 3
	must(t, "summarized batch", w.Batch(bg, func(ctx context.Context, b *satchel.Batch) error { // 4
		b.Summarize("copied TOKEN-SECRET from secrets/key.md")
		return b.Write(ctx, "pub.txt", "p\nq\n")
	}))
	_, err = w.Shell(bg, "echo TOKEN-SECRET-SH >> pub.txt") // 5
	must(t, "sh", err)
	hiding, err := st.Workspace(bg, scope, "hiding", satchel.WithFileRules(mustRules(t, "secrets/**=none,**=read")))
	must(t, "open with rules", err)
	var lines []satchel.BlameLine
	for _, p := range []string{"pub.txt", "moved.txt"} {
		got, err := hiding.Blame(bg, p, "")
		must(t, "blame "+p, err)
		lines = append(lines, got...)
	}
	if len(lines) != 4 {
		t.Fatalf("blame with rules: %d lines, want 4", len(lines))
	}
	for _, l := range lines {
		if s := l.Commit.Summary; strings.Contains(s, "secrets") || strings.Contains(s, "TOKEN") {
			t.Errorf("blame with rules: line %d %q of commit %d has summary %q", l.Line, l.Text, l.Commit.Seq, s)
		}
	}
	equal(t, "the batch's summary, redacted", lines[0].Commit.Summary, "write pub.txt")
	// The summarized batch wrote line 2 (its summary does not list its
	// operations, so blame does not pass it over); its text is dropped.
	equal(t, "line 2's commit", lines[1].Commit.Seq, 4)
	equal(t, "the summarized batch's summary, redacted", lines[1].Commit.Summary, "")
	equal(t, "the shell commit's summary, redacted", lines[2].Commit.Summary, "sh")
	snap, err := hiding.At(bg, "1")
	must(t, "at 1", err)
	equal(t, "a snapshot's commit summary, redacted", snap.Commit().Summary, "write pub.txt")
	_, err = hiding.Blame(bg, "secrets/key.md", "")
	refused(t, "blame of a hidden file", err, satchel.ErrNotFound, "file not found: secrets/key.md")
	// Without rules, the same blame names them.
	got, err := w.Blame(bg, "moved.txt", "")
	must(t, "blame without rules", err)
	equal(t, "the move's summary", got[0].Commit.Summary, "move secrets/old.txt -> moved.txt")
}
