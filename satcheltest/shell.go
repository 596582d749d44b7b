package satcheltest

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel"
)

// shell checks Workspace.Shell (docs/shell.md): a run that changed files
// is one commit summarized by its first line, one that changed nothing
// makes none, bounds and path rules apply to its writes, and an atomic
// run publishes by compare-and-swap.
func (s *suite) shell(t *testing.T, st *satchel.Store, ws *satchel.Workspace) {
	write(t, ws, "a.txt", "one\ntwo\n", "src/x.go", "// TODO\n")
	before, err := ws.Head(bg)
	must(t, "head", err)

	res, err := ws.Shell(bg, "grep -rn TODO . | wc -l\ncat a.txt")
	must(t, "read-only run", err)
	equal(t, "stdout", res.Stdout, "1\none\ntwo\n")
	if res.Commit != nil {
		t.Errorf("a run that changed nothing made commit %d", res.Commit.Seq)
	}
	head, _ := ws.Head(bg)
	equal(t, "no commit", head.Seq, before.Seq)

	long := "sed -i s/one/ONE/ a.txt && echo new > b.txt && rm src/x.go && mv b.txt c.txt # and a comment that runs past sixty characters"
	res, err = ws.Shell(bg, "\n"+long+"\necho done")
	must(t, "writing run", err)
	equal(t, "stdout", res.Stdout, "done\n")
	if res.Commit == nil {
		t.Fatal("a run that changed files reported no commit")
	}
	equal(t, "one commit", res.Commit.Seq, before.Seq+1)
	equal(t, "summary", res.Commit.Summary, "sh: "+long[:60])
	equal(t, "op", res.Commit.Op, "sh")
	got, _ := ws.Read(bg, "a.txt")
	equal(t, "sed -i", got, "ONE\ntwo\n")
	got, _ = ws.Read(bg, "c.txt")
	equal(t, "mv", got, "new\n")
	if ok, _ := ws.Exists(bg, "src/x.go"); ok {
		t.Error("rm left src/x.go")
	}

	// A failing script keeps what it wrote, as bash does, and says so
	// by its status; a command that does not exist exits 127.
	res, err = ws.Shell(bg, "echo kept > k.txt; curl https://example.com")
	must(t, "failing run", err)
	equal(t, "status", res.ExitStatus, 127)
	equal(t, "stderr", res.Stderr, "sh: curl: command not found (satchel sh has only its built-in commands; see satchel sh --help)\n")
	got, _ = ws.Read(bg, "k.txt")
	equal(t, "kept", got, "kept\n")

	// Path rules: an invalid path is refused at the redirect.
	res, err = ws.Shell(bg, `echo x > 'bad\name'; echo status $?`)
	must(t, "invalid path run", err)
	equal(t, "refused write", res.Stdout, "status 1\n")
	if !strings.Contains(res.Stderr, `invalid path "bad\\name"`) {
		t.Errorf("stderr %q does not name the invalid path", res.Stderr)
	}

	// Bounds: a file over the per-file limit stops the run; nothing of
	// it is committed.
	must(t, "limits", st.SetLimits(bg, "default", "small", satchel.Limits{MaxFileBytes: 100}))
	small, err := st.Workspace(bg, "default", "small")
	must(t, "workspace", err)
	_, err = small.Shell(bg, "echo ok > fine.txt; seq 1000 > big.txt")
	refused(t, "over the per-file limit", err, satchel.ErrLimitExceeded, "sh: file big.txt is over the largest file size (100 bytes): the run was stopped")
	if ok, _ := small.Exists(bg, "fine.txt"); ok {
		t.Error("a stopped run committed fine.txt")
	}

	// Atomic: published by compare-and-swap; refused when the thread
	// moved during the run, its work kept on the fork the error names.
	res, err = ws.Shell(bg, "echo atomic > at.txt", satchel.ShellOptions{Atomic: true})
	must(t, "atomic run", err)
	if res.Commit == nil || res.Commit.Op != "publish" {
		t.Fatalf("atomic run reported %+v, want the publish commit", res.Commit)
	}
	got, _ = ws.Read(bg, "at.txt")
	equal(t, "published", got, "atomic\n")
	mover := &moveDuringRun{ws: ws}
	_, err = ws.Shell(bg, "read line; echo \"$line\" > late.txt", satchel.ShellOptions{Atomic: true, Stdin: mover})
	var se *satchel.Error
	if !errors.As(err, &se) || !errors.Is(err, satchel.ErrConflict) || !strings.HasPrefix(se.Msg, "thread main changed during the run; nothing was published (the run's work is kept on thread main-sh-") {
		t.Fatalf("atomic run on a moving thread: %v", err)
	}
	if ok, _ := ws.Exists(bg, "late.txt"); ok {
		t.Error("a refused atomic run published late.txt")
	}

	// A script that does not parse is refused before it runs.
	_, err = ws.Shell(bg, "if then fi")
	if !errors.Is(err, satchel.ErrInvalidArgument) {
		t.Errorf("unparsable script: %v", err)
	}
}

// moveDuringRun is a script's standard input that commits to the thread
// when the script first reads it.
type moveDuringRun struct {
	ws    *satchel.Workspace
	moved bool
}

func (m *moveDuringRun) Read(b []byte) (int, error) {
	if !m.moved {
		m.moved = true
		if err := m.ws.Write(bg, "mover.txt", "moved"); err != nil {
			return 0, err
		}
		return copy(b, "line\n"), nil
	}
	return 0, io.EOF
}
