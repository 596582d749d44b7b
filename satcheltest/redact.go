package satcheltest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel"
)

// summaryRedaction: for a caller whose file rules hide secrets/, a
// commit's summary is shown only as far as the store wrote it from the
// commit's own changes. A caller's text that reads as a list of
// operations (Batch.Summarize's, a git subject, a publish's summary) is
// never shown, whichever paths it seems to name; the commit is listed
// (what it changed is not known from its summary), with summary "". The
// history, a file's history, a snapshot, blame and the audit agree.
func (s *suite) summaryRedaction(t *testing.T, st *satchel.Store, ws *satchel.Workspace) {
	scope := ws.Scope()
	w, err := st.Workspace(bg, scope, "sums")
	must(t, "open", err)
	write(t, w, "pub.txt", "p\n") // 1
	text := func(what, sum string, path string) {
		must(t, what, w.Batch(bg, func(ctx context.Context, b *satchel.Batch) error {
			b.Summarize(sum)
			return b.Write(ctx, path, what+"\n")
		}))
	}
	text("hidden only", "write pub-launch-on-may-5.txt", "secrets/plan.md")        // 2: names a path the caller sees
	text("seen", "write secrets/plan.md", "seen.txt")                              // 3: names a hidden path
	text("both", "write pub.txt; write secrets/plan-b.md", "secrets/plan.md")      // 4
	text("cut", strings.Repeat("x", 300)+" secrets/plan.md", "secrets/plan.md")    // 5
	must(t, "git", w.Batch(bg, func(ctx context.Context, b *satchel.Batch) error { // 6
		b.SetGit(satchel.GitOrigin{Hash: "0123456789abcdef0123456789abcdef01234567", Author: "Ada <ada@example.com>"}, "write pub-git-subject.txt")
		return b.Write(ctx, "secrets/git.md", "g\n")
	}))
	must(t, "listed batch", w.Batch(bg, func(ctx context.Context, b *satchel.Batch) error { // 7
		if err := b.Write(ctx, "pub.txt", "p\nq\n"); err != nil {
			return err
		}
		return b.Write(ctx, "secrets/plan.md", "listed\n")
	}))
	must(t, "hidden batch", w.Batch(bg, func(ctx context.Context, b *satchel.Batch) error { // 8
		return b.Write(ctx, "secrets/only.md", "h\n")
	}))
	fork, err := w.Fork(bg, "", "sums-fork")
	must(t, "fork", err)
	write(t, fork, "secrets/forked.md", "f\n")
	_, err = fork.PublishTo(bg, w, 8, satchel.PublishSummary("write pub-published-secret.txt"))
	must(t, "publish with a summary", err) // 9
	write(t, fork, "secrets/forked2.md", "f\n")
	_, err = fork.PublishTo(bg, w, 9)
	must(t, "publish", err) // 10

	rules := []satchel.WorkspaceOption{satchel.WithFileRules(mustRules(t, "secrets/**=none,**=read"))}
	hiding, err := st.Workspace(bg, scope, "sums", rules...)
	must(t, "open with rules", err)
	hist, err := hiding.History(bg, 0, 0)
	must(t, "history", err)
	var got []string
	for _, c := range hist {
		got = append(got, fmt.Sprintf("%d %s %q", c.Seq, c.Op, c.Summary))
	}
	want := []string{
		`10 publish "publish sums-fork@3"`,
		`9 publish ""`,
		// 8 wrote hidden files only, as its list says: left out.
		`7 batch "write pub.txt"`,
		`6 batch ""`,
		`5 batch ""`,
		`4 batch ""`,
		`3 batch ""`,
		`2 batch ""`,
		`1 write "write pub.txt"`,
	}
	equal(t, "history with rules", strings.Join(got, "\n"), strings.Join(want, "\n"))

	// The other views of commits redact as the history does.
	fh, err := hiding.FileHistory(bg, "seen.txt", 0, 0)
	must(t, "file history", err)
	if len(fh.Changes) != 1 || fh.Changes[0].Commit.Seq != 3 || fh.Changes[0].Commit.Summary != "" {
		t.Errorf("file history with rules: %+v, want commit 3 with summary \"\"", fh.Changes)
	}
	snap, err := hiding.At(bg, "2")
	must(t, "at 2", err)
	equal(t, "a snapshot's summary", snap.Commit().Summary, "")
	bl, err := hiding.Blame(bg, "seen.txt", "")
	must(t, "blame", err)
	if len(bl) != 1 || bl[0].Commit.Seq != 3 || bl[0].Commit.Summary != "" {
		t.Errorf("blame with rules: %+v, want line 1 of commit 3, summary \"\"", bl)
	}
	page, err := st.Audit(bg, satchel.AuditQuery{Scope: scope, Thread: "sums", Files: rules})
	must(t, "audit", err)
	for _, e := range page.Entries {
		if strings.Contains(e.Summary, "secrets") || strings.Contains(e.Summary, "pub-") {
			t.Errorf("audit with rules: commit %d has summary %q", e.Seq, e.Summary)
		}
	}
	for _, c := range hist {
		if strings.Contains(c.Summary, "secrets") || strings.Contains(c.Summary, "pub-") {
			t.Errorf("history with rules: commit %d has summary %q", c.Seq, c.Summary)
		}
	}

	// Without rules every summary is whole.
	all, err := w.History(bg, 0, 0)
	must(t, "history without rules", err)
	equal(t, "a summary without rules", all[len(all)-2].Summary, "write pub-launch-on-may-5.txt")
	equal(t, "a publish's summary without rules", all[1].Summary, "write pub-published-secret.txt")
}
