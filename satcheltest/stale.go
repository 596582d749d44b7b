package satcheltest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/backendof"
)

// tracked opens a workspace of main that tracks reads, as agent.
func tracked(t *testing.T, st *satchel.Store, agent, via string) *satchel.Workspace {
	t.Helper()
	ws, err := st.Workspace(bg, "default", "main", satchel.TrackReads(), satchel.WorkspaceActor(satchel.Actor{Agent: agent, Via: via}))
	must(t, "tracked workspace", err)
	return ws
}

// changedMsg is the refusal of a change to path, last changed by the
// newest commit of ws's thread.
func changedMsg(t *testing.T, ws *satchel.Workspace, path string) string {
	t.Helper()
	h, err := ws.History(bg, 0, 1)
	must(t, "history", err)
	c := h[0]
	by := "an operator"
	if c.Agent != "" {
		by = "agent " + c.Agent
	}
	tool := c.Via
	if len(tool) > 4 && tool[:4] == "mcp:" {
		tool = tool[4:]
	}
	if tool == "" {
		tool = c.Op // a commit that names no tool: its operation
	}
	return fmt.Sprintf("%s changed since you last read it: commit %d by %s (%s, %s); read it again before changing it",
		path, c.Seq, by, tool, c.Time.UTC().Format(time.RFC3339))
}

func notReadMsg(path string) string {
	return path + " exists and you have not read it; read it before changing it"
}

// staleWrites: the read ledger's refusals, word for word, and every case
// that must not be refused.
func (s *suite) staleWrites(t *testing.T, st *satchel.Store, op *satchel.Workspace) {
	write(t, op, "notes/plan.md", "one\ntwo\n", "notes/other.md", "other\n", "notes/dest.md", "dest\n")
	a := tracked(t, st, "research", "mcp:edit_file")
	b := tracked(t, st, "writer", "lua:summarize.lua")

	// Never read: every changing operation on an existing file is refused.
	msg := notReadMsg("notes/plan.md")
	_, err := b.StrReplace(bg, "notes/plan.md", "one", "ONE", false)
	refused(t, "edit unread", err, satchel.ErrStale, msg)
	refused(t, "write over unread", b.Write(bg, "notes/plan.md", "x"), satchel.ErrStale, msg)
	refused(t, "delete unread", b.Delete(bg, "notes/plan.md"), satchel.ErrStale, msg)
	refused(t, "move unread", b.Move(bg, "notes/plan.md", "notes/moved.md"), satchel.ErrStale, msg)
	var se *satchel.StaleError
	if !errors.As(err, &se) || se.Path != "notes/plan.md" || !se.NotRead {
		t.Errorf("edit unread: error %#v is not a StaleError naming the path", err)
	}
	// New files and appends never are.
	must(t, "new file", b.Write(bg, "notes/new.md", "new\n"))
	must(t, "append to unread", b.Append(bg, "notes/other.md", "more\n"))

	// A read of one line is a read of the file.
	_, err = b.ReadNumbered(bg, "notes/plan.md", 2, 2)
	must(t, "b reads a line", err)
	_, err = a.Read(bg, "notes/plan.md")
	must(t, "a reads", err)
	_, err = b.StrReplace(bg, "notes/plan.md", "one", "ONE", false)
	must(t, "b edits what it read", err)
	// b's own changes never refuse b.
	_, err = b.StrReplace(bg, "notes/plan.md", "two", "TWO", false)
	must(t, "b edits its own change", err)

	// a saw the file before b's edits.
	msg = changedMsg(t, b, "notes/plan.md")
	_, err = a.StrReplace(bg, "notes/plan.md", "ONE", "1", false)
	refused(t, "a's stale edit", err, satchel.ErrStale, msg)
	if errors.As(err, &se) {
		h, _ := b.History(bg, 0, 1)
		if se.Commit != h[0].Seq || se.Agent != "writer" || se.Tool != "lua:summarize.lua" || !se.Time.Equal(h[0].Time) {
			t.Errorf("StaleError %+v does not name commit %d by writer", se, h[0].Seq)
		}
	}
	refused(t, "a's stale write", a.Write(bg, "notes/plan.md", "x"), satchel.ErrStale, msg)
	refused(t, "a's stale delete", a.Delete(bg, "notes/plan.md"), satchel.ErrStale, msg)
	got, _ := op.Read(bg, "notes/plan.md")
	equal(t, "refusals change nothing", got, "ONE\nTWO\n")

	// A re-read clears it.
	_, err = a.Read(bg, "notes/plan.md")
	must(t, "a reads again", err)
	_, err = a.StrReplace(bg, "notes/plan.md", "ONE", "1", false)
	must(t, "a edits after reading again", err)
	// The refusal names a tool as the commit recorded it, without "mcp:".
	msg = changedMsg(t, a, "notes/plan.md")
	refused(t, "b after a's mcp edit", b.Write(bg, "notes/plan.md", "x"), satchel.ErrStale, msg)
	equal(t, "mcp: is not shown", msg, fmt.Sprintf("notes/plan.md changed since you last read it: commit %d by agent research (edit_file, %s); read it again before changing it", mustSeq(t, a), mustTime(t, a)))

	// An operator's change (no agent).
	_, err = b.Read(bg, "notes/plan.md")
	must(t, "b reads", err)
	must(t, "operator writes", op.Write(bg, "notes/plan.md", "op\n"))
	_, err = b.StrReplace(bg, "notes/plan.md", "op", "b", false)
	refused(t, "after an operator's write", err, satchel.ErrStale, changedMsg(t, op, "notes/plan.md"))

	// Moves: the source, and a destination that exists.
	_, err = a.Read(bg, "notes/plan.md")
	must(t, "a reads", err)
	refused(t, "move over an unread destination", a.Move(bg, "notes/plan.md", "notes/dest.md", satchel.Overwrite()), satchel.ErrStale, notReadMsg("notes/dest.md"))
	_, err = a.Read(bg, "notes/dest.md")
	must(t, "a reads the destination", err)
	must(t, "move over a read destination", a.Move(bg, "notes/plan.md", "notes/dest.md", satchel.Overwrite()))
	_, err = a.StrReplace(bg, "notes/dest.md", "op", "moved", false)
	must(t, "a edits the file it moved", err)
	must(t, "a appends", a.Append(bg, "notes/dest.md", "tail\n"))
	_, err = a.StrReplace(bg, "notes/dest.md", "tail", "end", false)
	must(t, "a edits after its own append", err)
	must(t, "a deletes", a.Delete(bg, "notes/dest.md"))
	must(t, "a makes it anew", a.Write(bg, "notes/dest.md", "anew\n"))

	// An append by someone else is a change like any other.
	must(t, "operator appends", op.Append(bg, "notes/dest.md", "theirs\n"))
	refused(t, "after another's append", a.Write(bg, "notes/dest.md", "x"), satchel.ErrStale, changedMsg(t, op, "notes/dest.md"))

	// Changes to other paths, retention and GC never refuse.
	_, err = a.Read(bg, "notes/dest.md")
	must(t, "a reads", err)
	for i := 0; i < 3; i++ {
		must(t, "operator writes elsewhere", op.Write(bg, "elsewhere.md", fmt.Sprint(i)))
	}
	_, err = op.SetRetention(bg, satchel.Policy{MaxCommits: 1})
	must(t, "retain", err)
	_, err = st.GC(bg, "", satchel.NoGrace)
	must(t, "gc", err)
	must(t, "a writes after others' paths changed and GC ran", a.Write(bg, "notes/dest.md", "after gc\n"))

	// Writing the content a file has changes nothing and is not refused.
	must(t, "operator writes", op.Write(bg, "same.md", "same"))
	must(t, "same content", b.Write(bg, "same.md", "same"))
	must(t, "then it counts as seen", b.Write(bg, "same.md", "changed"))

	// A workspace without TrackReads is not tracked.
	must(t, "untracked write", op.Write(bg, "notes/dest.md", "op again\n"))
}

func mustSeq(t *testing.T, ws *satchel.Workspace) int64 {
	h, err := ws.History(bg, 0, 1)
	must(t, "history", err)
	return h[0].Seq
}

func mustTime(t *testing.T, ws *satchel.Workspace) string {
	h, err := ws.History(bg, 0, 1)
	must(t, "history", err)
	return h[0].Time.UTC().Format(time.RFC3339)
}

// staleWarn: WarnStale applies the change and reports the sentence.
func (s *suite) staleWarn(t *testing.T, st *satchel.Store, op *satchel.Workspace) {
	write(t, op, "a.md", "a\n")
	w := tracked(t, st, "research", "mcp:write_file")
	var warned []error
	must(t, "warned write", w.Write(bg, "a.md", "mine\n", satchel.WarnStale(func(err error) { warned = append(warned, err) })))
	if len(warned) != 1 {
		t.Fatalf("warnings %v, want one", warned)
	}
	refused(t, "the warning", warned[0], satchel.ErrStale, notReadMsg("a.md"))
	got, _ := op.Read(bg, "a.md")
	equal(t, "the change applied", got, "mine\n")
	warned = nil
	must(t, "own change", w.Write(bg, "a.md", "again\n", satchel.WarnStale(func(err error) { warned = append(warned, err) })))
	equal(t, "no warning for an own change", len(warned), 0)
}

// staleRace: two writers, each in a store of its own (as two processes),
// with the same stale view race to change one file: exactly one wins.
func (s *suite) staleRace(t *testing.T, a *satchel.Store, op *satchel.Workspace) {
	b := satchel.New(backendof.Store(a), satchel.WithCacheBytes(1))
	t.Cleanup(func() { b.Close() })
	for round := 0; round < 8; round++ {
		path := fmt.Sprintf("race-%d.md", round)
		write(t, op, path, "base\n")
		wa := tracked(t, a, "a", "mcp:write_file")
		wb := tracked(t, b, "b", "mcp:write_file")
		_, err := wa.Read(bg, path)
		must(t, "a reads", err)
		_, err = wb.Read(bg, path)
		must(t, "b reads", err)
		var wg sync.WaitGroup
		errsOut := make([]error, 2)
		start := make(chan struct{})
		for i, ws := range []*satchel.Workspace{wa, wb} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				errsOut[i] = ws.Write(bg, path, fmt.Sprintf("from %d\n", i))
			}()
		}
		close(start)
		wg.Wait()
		wins := 0
		for _, err := range errsOut {
			switch {
			case err == nil:
				wins++
			case errors.Is(err, satchel.ErrStale):
			default:
				t.Fatalf("round %d: %v", round, err)
			}
		}
		equal(t, fmt.Sprintf("round %d: winners", round), wins, 1)
	}
}

// staleFanout: the arms of a fanout share the caller's ledger.
func (s *suite) staleFanout(t *testing.T, st *satchel.Store, op *satchel.Workspace) {
	write(t, op, "a.md", "a\n", "b.md", "b\n", "c.md", "c\n")
	w := tracked(t, st, "run", "lua:fan.lua")
	_, err := w.Read(bg, "a.md")
	must(t, "run reads a", err)
	err = w.Fanout(bg,
		func(ctx context.Context, ws *satchel.Workspace) error {
			_, err := ws.StrReplace(ctx, "a.md", "a", "A", false) // read before the fanout
			return err
		},
		func(ctx context.Context, ws *satchel.Workspace) error {
			if _, err := ws.Read(ctx, "b.md"); err != nil {
				return err
			}
			return ws.Write(ctx, "b.md", "B\n")
		},
	)
	must(t, "arms change what the run read", err)
	// What the arms did and read is the run's.
	_, err = w.StrReplace(bg, "a.md", "A", "AA", false)
	must(t, "run edits an arm's change", err)
	must(t, "run writes what an arm wrote", w.Write(bg, "b.md", "BB\n"))
	err = w.Fanout(bg, func(ctx context.Context, ws *satchel.Workspace) error {
		return ws.Delete(ctx, "c.md")
	})
	refused(t, "an arm changes what nobody read", err, satchel.ErrStale, notReadMsg("c.md"))
}

// staleAppends: the ledger follows the caller's own appends, in one batch
// or many, after a read or a write, so they never refuse a later change.
func (s *suite) staleAppends(t *testing.T, st *satchel.Store, op *satchel.Workspace) {
	write(t, op, "log.md", "start\n")
	w := tracked(t, st, "run", "lua:log.lua")
	_, err := w.Read(bg, "log.md")
	must(t, "read", err)
	for i := 0; i < 3; i++ {
		must(t, "append", w.Append(bg, "log.md", fmt.Sprintf("line %d\n", i)))
	}
	_, err = w.StrReplace(bg, "log.md", "start", "begin", false)
	must(t, "edit after own appends", err)
	must(t, "batch", w.Batch(bg, func(ctx context.Context, b *satchel.Batch) error {
		if err := b.Write(ctx, "log.md", "fresh\n"); err != nil {
			return err
		}
		if err := b.Append(ctx, "log.md", "more\n"); err != nil {
			return err
		}
		return b.Append(ctx, "log.md", "again\n")
	}))
	_, err = w.StrReplace(bg, "log.md", "again", "end", false)
	must(t, "edit after a batch's write and appends", err)
	got, _ := op.Read(bg, "log.md")
	equal(t, "content", got, "fresh\nmore\nend\n")
	// An append to a file never read leaves it unread.
	write(t, op, "other.md", "x\n")
	must(t, "append unread", w.Append(bg, "other.md", "y\n"))
	refused(t, "still unread", w.Write(bg, "other.md", "z"), satchel.ErrStale, notReadMsg("other.md"))
}

// staleRestore: a restore by the caller counts as its own change of the
// paths it restored, as a write would; another caller's restore makes
// them stale.
func (s *suite) staleRestore(t *testing.T, st *satchel.Store, op *satchel.Workspace) {
	write(t, op, "a.md", "one\n", "gone.md", "gone\n")
	first := mustSeq(t, op)
	write(t, op, "a.md", "two\n", "b.md", "b\n")
	must(t, "delete", op.Delete(bg, "gone.md"))
	a := tracked(t, st, "research", "mcp:restore")
	_, err := a.Restore(bg, fmt.Sprint(first))
	must(t, "restore", err)
	_, err = a.StrReplace(bg, "a.md", "one", "ONE", false)
	must(t, "edit a restored file without reading it", err)
	must(t, "delete a restored file without reading it", a.Delete(bg, "gone.md"))
	// b.md was removed by the restore: writing it anew is a new file.
	must(t, "write a removed file", a.Write(bg, "b.md", "new\n"))

	// Another caller's restore: a.md changed since a read it.
	b := tracked(t, st, "writer", "mcp:restore")
	_, err = a.Read(bg, "a.md")
	must(t, "read", err)
	_, err = b.Restore(bg, fmt.Sprint(first))
	must(t, "restore by another", err)
	_, err = a.StrReplace(bg, "a.md", "one", "uno", false)
	refused(t, "edit after another's restore", err, satchel.ErrStale, changedMsg(t, op, "a.md"))
}
