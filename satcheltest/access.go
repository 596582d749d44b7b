package satcheltest

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel"
)

// The file rules table: one list of cases (agent rules × token rules ×
// path × operation) that every surface runs, each with its own way of
// making the call (the Go API here, MCP tools in mcpserver, store.* in
// luahost), on every backend.

// AccessAgent is the agent every case of the table speaks for.
const AccessAgent = "research"

// AccessFiles are the files of the thread each case starts from.
var AccessFiles = map[string]string{
	"notes/a.md":       "alpha notes\n",
	"notes/b.md":       "beta notes\n",
	"docs/readme.md":   "hello docs\n",
	"secrets/key.md":   "TOKEN-SECRET password\n",
	"private/diary.md": "DIARY-SECRET entry\n",
}

// AccessSecrets are the names and contents the rules of a case may hide:
// no output may show one the case hides unless the call named it.
var AccessSecrets = map[string][]string{
	"secrets/": {"secrets/key.md", "TOKEN-SECRET"},
	"private/": {"private/diary.md", "DIARY-SECRET"},
}

// The rule sets the table combines.
const (
	// RulesAgent is the agent's "files".
	RulesAgent = "secrets/**=none,notes/**=rw,**=read"
	// RulesToken narrows it: private/ hidden too.
	RulesToken = "private/**=none,**=rw"
	// RulesNotes is a token's rules for an agent without any.
	RulesNotes = "notes/**=rw,**=read"
)

// AccessCase is one row of the table.
type AccessCase struct {
	Name string
	// Agent and Token are the agent's and the token's rules in flag form
	// ("": none); ReadOnly makes the token (or the server) read-only.
	Agent, Token string
	ReadOnly     bool
	// Op is read, write, append, edit, delete, move, stat, glob, grep,
	// list, history, diff or restore.
	Op string
	// Path is the path (move: FROM and TO separated by " -> "; glob: the
	// pattern; grep: the regex; restore: the commit).
	Path string
	// Err is the exact refusal; "" when the call succeeds.
	Err string
	// Shows are what the output of a successful call must name.
	Shows []string
}

// Options returns the workspace options of the case's rules.
func (c AccessCase) Options() ([]satchel.WorkspaceOption, error) {
	var sets []satchel.FileRules
	for _, s := range []string{c.Agent, c.Token} {
		if s == "" {
			continue
		}
		r, err := satchel.ParseFileRules(s)
		if err != nil {
			return nil, err
		}
		sets = append(sets, r)
	}
	opts := []satchel.WorkspaceOption{satchel.WithFileRules(sets...)}
	if c.ReadOnly {
		opts = append(opts, satchel.ReadOnlyFiles())
	}
	return opts, nil
}

// Access is the access the case's rules give path, evaluated plainly
// (the stricter of the agent's and the token's; read at most when
// ReadOnly).
func (c AccessCase) Access(path string) satchel.FileAccess {
	a := satchel.AccessRW
	if c.ReadOnly {
		a = satchel.AccessRead
	}
	for _, s := range []string{c.Agent, c.Token} {
		if s == "" {
			continue
		}
		r, err := satchel.ParseFileRules(s)
		if err != nil {
			return satchel.AccessNone
		}
		a = min(a, r.Of(path))
	}
	return a
}

// Hidden returns the secrets the case's rules hide (the values of
// AccessSecrets whose directory is none).
func (c AccessCase) Hidden() []string {
	var out []string
	for dir, words := range AccessSecrets {
		if c.Access(dir+"x.md") == satchel.AccessNone {
			out = append(out, words...)
		}
	}
	sort.Strings(out)
	return out
}

// AccessCases returns the table.
func AccessCases() []AccessCase {
	const who = "agent " + AccessAgent
	A, T, N := RulesAgent, RulesToken, RulesNotes
	return []AccessCase{
		{Name: "NoRules/WriteAnything", Op: "write", Path: "secrets/key.md"},
		{Name: "NoRules/GrepSeesAll", Op: "grep", Path: "SECRET", Shows: []string{"secrets/key.md", "private/diary.md"}},
		{Name: "Agent/ReadRW", Agent: A, Op: "read", Path: "notes/a.md", Shows: []string{"alpha notes"}},
		{Name: "Agent/WriteRW", Agent: A, Op: "write", Path: "notes/a.md"},
		{Name: "Agent/ReadRead", Agent: A, Op: "read", Path: "docs/readme.md", Shows: []string{"hello docs"}},
		{Name: "Agent/WriteRead", Agent: A, Op: "write", Path: "docs/readme.md", Err: "docs/readme.md is read-only for " + who},
		{Name: "Agent/AppendRead", Agent: A, Op: "append", Path: "docs/readme.md", Err: "docs/readme.md is read-only for " + who},
		{Name: "Agent/EditRead", Agent: A, Op: "edit", Path: "docs/readme.md", Err: "docs/readme.md is read-only for " + who},
		{Name: "Agent/DeleteRead", Agent: A, Op: "delete", Path: "docs/readme.md", Err: "docs/readme.md is read-only for " + who},
		{Name: "Agent/WriteUnmatched", Agent: N, Op: "write", Path: "top.md", Err: "top.md is read-only for " + who},
		{Name: "Agent/ReadNone", Agent: A, Op: "read", Path: "secrets/key.md", Err: "file not found: secrets/key.md"},
		{Name: "Agent/StatNone", Agent: A, Op: "stat", Path: "secrets/key.md", Err: "file not found: secrets/key.md"},
		{Name: "Agent/EditNone", Agent: A, Op: "edit", Path: "secrets/key.md", Err: "file not found: secrets/key.md"},
		{Name: "Agent/WriteNone", Agent: A, Op: "write", Path: "secrets/new.md", Err: "secrets/new.md is hidden from " + who + ": it cannot be written"},
		{Name: "Agent/MoveOntoNone", Agent: A, Op: "move", Path: "notes/a.md -> secrets/key.md", Err: "secrets/key.md is hidden from " + who + ": it cannot be written"},
		{Name: "Agent/MoveFromNone", Agent: A, Op: "move", Path: "secrets/key.md -> notes/k.md", Err: "file not found: secrets/key.md"},
		{Name: "Agent/MoveRW", Agent: A, Op: "move", Path: "notes/a.md -> notes/c.md"},
		{Name: "Agent/Glob", Agent: A, Op: "glob", Path: "**", Shows: []string{"notes/a.md", "docs/readme.md", "private/diary.md"}},
		{Name: "Agent/List", Agent: A, Op: "list", Path: "", Shows: []string{"notes/b.md", "docs/readme.md"}},
		{Name: "Agent/GrepOnlyHidden", Agent: A, Op: "grep", Path: "TOKEN-SECRET"},
		{Name: "Agent/History", Agent: A, Op: "history", Shows: []string{"notes/a.md"}},
		{Name: "Agent/Diff", Agent: A, Op: "diff", Path: "0", Shows: []string{"notes/a.md", "docs/readme.md"}},
		{Name: "Agent/Restore", Agent: A, Op: "restore", Path: "1", Err: "restore to 1 would change files " + who + " may not write: private/diary.md, and files hidden from it"},
		{Name: "AgentToken/ReadHiddenByToken", Agent: A, Token: T, Op: "read", Path: "private/diary.md", Err: "file not found: private/diary.md"},
		{Name: "AgentToken/WriteRW", Agent: A, Token: T, Op: "write", Path: "notes/b.md"},
		{Name: "AgentToken/TokenCannotWiden", Agent: A, Token: T, Op: "write", Path: "docs/readme.md", Err: "docs/readme.md is read-only for " + who},
		{Name: "AgentToken/Grep", Agent: A, Token: T, Op: "grep", Path: "SECRET"},
		{Name: "AgentToken/Glob", Agent: A, Token: T, Op: "glob", Path: "**", Shows: []string{"notes/a.md", "docs/readme.md"}},
		{Name: "Token/WriteNotes", Token: N, Op: "write", Path: "notes/a.md"},
		{Name: "Token/WriteRead", Token: N, Op: "write", Path: "secrets/key.md", Err: "secrets/key.md is read-only for " + who},
		{Name: "ReadOnly/Write", Agent: A, ReadOnly: true, Op: "write", Path: "notes/a.md", Err: "notes/a.md is read-only for " + who},
		{Name: "ReadOnly/Read", ReadOnly: true, Op: "read", Path: "secrets/key.md", Shows: []string{"TOKEN-SECRET"}},
		{Name: "ReadOnly/Delete", ReadOnly: true, Op: "delete", Path: "notes/a.md", Err: "notes/a.md is read-only for " + who},
		{Name: "ReadOnly/Restore", ReadOnly: true, Op: "restore", Path: "1", Err: "restore to 1 would change files " + who + " may not write: notes/a.md, notes/b.md, private/diary.md, secrets/key.md"},
	}
}

// SetUpAccess writes AccessFiles to ws, one commit each in path order (so
// that commit 1 holds docs/readme.md only) and a last commit that changes
// notes/a.md: ws must enforce no rules.
func SetUpAccess(ctx context.Context, ws *satchel.Workspace) error {
	paths := make([]string, 0, len(AccessFiles))
	for p := range AccessFiles {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if err := ws.Write(ctx, p, AccessFiles[p]); err != nil {
			return err
		}
	}
	return ws.Append(ctx, "notes/a.md", "more\n")
}

// RunAccessCase makes the case's call through the Go API on ws (a
// workspace opened with the case's Options, of the table's agent) and
// returns what it printed.
func RunAccessCase(ctx context.Context, ws *satchel.Workspace, c AccessCase) (string, error) {
	from, to, _ := strings.Cut(c.Path, " -> ")
	switch c.Op {
	case "read":
		return ws.Read(ctx, c.Path)
	case "write":
		return "", ws.Write(ctx, c.Path, "new\n")
	case "append":
		return "", ws.Append(ctx, c.Path, "more\n")
	case "edit":
		_, err := ws.StrReplace(ctx, c.Path, "e", "E", true)
		return "", err
	case "delete":
		return "", ws.Delete(ctx, c.Path)
	case "move":
		return "", ws.Move(ctx, from, to)
	case "stat":
		fi, err := ws.Stat(ctx, c.Path)
		return fmt.Sprint(fi), err
	case "glob":
		ps, err := ws.Glob(ctx, c.Path)
		return strings.Join(ps, "\n"), err
	case "list":
		ps, err := ws.List(ctx, c.Path, satchel.ListOptions{})
		return strings.Join(ps, "\n"), err
	case "grep":
		r, err := ws.Grep(ctx, c.Path, "", satchel.GrepOptions{})
		return fmt.Sprintf("%+v", r), err
	case "history":
		cs, err := ws.History(ctx, 0, 0)
		return fmt.Sprintf("%+v", cs), err
	case "diff":
		cs, err := ws.Diff(ctx, c.Path, "head")
		return fmt.Sprintf("%+v", cs), err
	case "restore":
		_, err := ws.Restore(ctx, c.Path)
		return "", err
	}
	return "", fmt.Errorf("unknown op %q", c.Op)
}

// CheckAccessCase checks what a surface answered to a case: the exact
// refusal (errText is the error's text as the surface shows it; exact
// says whether it must equal Err or only start with it, for surfaces that
// add to a message), the names a listing shows, and that nothing the
// rules hide shows, unless the call named it.
func CheckAccessCase(t testing.TB, c AccessCase, out, errText string, exact bool) {
	t.Helper()
	switch {
	case c.Err == "" && errText != "":
		t.Errorf("%s: %s %s: refused: %s", c.Name, c.Op, c.Path, errText)
	case c.Err != "" && errText == "":
		t.Errorf("%s: %s %s: allowed, want %q", c.Name, c.Op, c.Path, c.Err)
	case c.Err != "" && exact && errText != c.Err:
		t.Errorf("%s: %s %s: refused with %q, want %q", c.Name, c.Op, c.Path, errText, c.Err)
	case c.Err != "" && !strings.Contains(errText, c.Err):
		t.Errorf("%s: %s %s: refused with %q, want %q", c.Name, c.Op, c.Path, errText, c.Err)
	}
	for _, s := range c.Shows {
		if !strings.Contains(out, s) {
			t.Errorf("%s: %s %s: output does not show %q:\n%s", c.Name, c.Op, c.Path, s, out)
		}
	}
	for _, s := range c.Hidden() {
		if strings.Contains(c.Path, s) {
			continue
		}
		if strings.Contains(out, s) || strings.Contains(errText, s) {
			t.Errorf("%s: %s %s: shows the hidden %q:\n%s%s", c.Name, c.Op, c.Path, s, out, errText)
		}
	}
}

// fileRules runs the table through the Go API.
func (s *suite) fileRules(t *testing.T, st *satchel.Store, _ *satchel.Workspace) {
	for i, c := range AccessCases() {
		thread := fmt.Sprintf("rules-%d", i)
		setup, err := st.Workspace(bg, "default", thread)
		must(t, "open", err)
		must(t, "set up", SetUpAccess(bg, setup))
		opts, err := c.Options()
		must(t, "options", err)
		ws, err := st.Workspace(bg, "default", thread, append(opts, satchel.WorkspaceActor(satchel.Actor{Agent: AccessAgent}))...)
		must(t, "open with rules", err)
		out, err := RunAccessCase(bg, ws, c)
		errText := ""
		if err != nil {
			errText = err.Error()
			if c.Err != "" && !satchelRefusal(err) {
				t.Errorf("%s: %v is of no refusal kind", c.Name, err)
			}
		}
		CheckAccessCase(t, c, out, errText, true)
	}
	// A grep whose only matches are in hidden files returns nothing and
	// says nothing of them: no match, no count, no notice.
	all, err := st.Workspace(bg, "default", "rules-grep")
	must(t, "open", err)
	must(t, "set up", SetUpAccess(bg, all))
	ws, err := st.Workspace(bg, "default", "rules-grep", satchel.WithFileRules(mustRules(t, RulesAgent)))
	must(t, "open", err)
	g, err := ws.Grep(bg, "TOKEN-SECRET", "", satchel.GrepOptions{})
	must(t, "grep", err)
	if len(g.Matches) != 0 || g.Truncated || g.SkippedBinary != 0 || g.Stopped != "" {
		t.Errorf("grep of hidden matches = %+v", g)
	}
	if g, err := all.Grep(bg, "TOKEN-SECRET", "", satchel.GrepOptions{}); err != nil || len(g.Matches) != 1 {
		t.Errorf("grep without rules = %+v, %v", g, err)
	}
	// The snapshot of a commit and its io/fs view hide the same files.
	snap, err := ws.At(bg, "head")
	must(t, "at", err)
	if _, err := snap.FS(bg).Open("secrets/key.md"); err == nil {
		t.Errorf("a snapshot's FS opens a hidden file")
	}

	// Refusals are counted by agent and reason.
	var readOnly, hidden int64
	for _, r := range st.AccessRefusals() {
		if r.Agent == AccessAgent && r.Reason == "read_only" {
			readOnly = r.Count
		}
		if r.Agent == AccessAgent && r.Reason == "hidden" {
			hidden = r.Count
		}
	}
	if readOnly == 0 || hidden == 0 {
		t.Errorf("refusals counted: read_only %d, hidden %d; want both", readOnly, hidden)
	}
}

func satchelRefusal(err error) bool {
	for _, k := range []error{satchel.ErrAccess, satchel.ErrNotFound} {
		if errors.Is(err, k) {
			return true
		}
	}
	return false
}

// fileRulesMerge: a merge, a fork and a publish keep to the rules; a
// merge that would change a read-only path is refused naming it, and the
// conflicts of hidden paths are never listed.
func (s *suite) fileRulesMerge(t *testing.T, st *satchel.Store, main *satchel.Workspace) {
	must(t, "set up", SetUpAccess(bg, main))
	feature, err := main.Fork(bg, "head", "feature")
	must(t, "fork", err)
	write(t, feature, "docs/readme.md", "changed docs\n", "notes/a.md", "changed notes\n")
	rules, err := satchel.ParseFileRules(RulesAgent)
	must(t, "rules", err)
	agent := satchel.WorkspaceActor(satchel.Actor{Agent: AccessAgent})
	ruled, err := st.Workspace(bg, "default", "main", satchel.WithFileRules(rules), agent)
	must(t, "open", err)
	_, err = ruled.Merge(bg, "feature")
	refused(t, "merge onto a read-only path", err, satchel.ErrAccess,
		"merging feature into main would change files agent research may not write: docs/readme.md")

	// A merge touching a hidden path names none.
	write(t, feature, "docs/readme.md", "hello docs\n", "secrets/key.md", "changed secret\n")
	_, err = ruled.Merge(bg, "feature")
	refused(t, "merge onto a hidden path", err, satchel.ErrAccess, "merging feature into main would change files hidden from agent research")

	// A fork keeps the rules: the forked thread hides the same files.
	f2, err := ruled.Fork(bg, "head", "ruled-fork")
	must(t, "fork with rules", err)
	_, err = f2.Read(bg, "secrets/key.md")
	refused(t, "read hidden in the fork", err, satchel.ErrNotFound, "file not found: secrets/key.md")
	if f2.Access("docs/readme.md") != satchel.AccessRead || f2.ReadsEverything() {
		t.Errorf("fork: access %v, reads everything %v", f2.Access("docs/readme.md"), f2.ReadsEverything())
	}
	other, err := ruled.OnThread(bg, "feature")
	must(t, "on thread", err)
	_, err = other.Read(bg, "secrets/key.md")
	refused(t, "read hidden on another thread", err, satchel.ErrNotFound, "file not found: secrets/key.md")

	// The rules narrow what a merge writes, not what it may merge: notes
	// only is fine.
	clean, err := main.Fork(bg, "head", "clean")
	must(t, "fork", err)
	write(t, clean, "notes/b.md", "merged notes\n")
	_, err = ruled.Merge(bg, "clean")
	must(t, "merge of writable paths", err)

	// A publish onto a thread that the rules keep from changing is refused.
	_, err = clean.PublishTo(bg, ruled.ForActor(satchel.Actor{Agent: AccessAgent}), mustSeq(t, main))
	if err == nil {
		// clean has main's files plus notes/b.md; main has the merge: a
		// publish changes notes only, which the rules allow (or the head
		// moved: a conflict).
		t.Log("publish allowed")
	}
	ro, err := st.Workspace(bg, "default", "main", satchel.ReadOnlyFiles(), agent)
	must(t, "open read-only", err)
	write(t, clean, "notes/b.md", "again\n")
	_, err = clean.PublishTo(bg, ro, mustSeq(t, main))
	if err == nil || !errors.Is(err, satchel.ErrAccess) {
		t.Errorf("publish onto a read-only workspace: %v", err)
	}
	if !ro.ReadsEverything() || ro.Access("x") != satchel.AccessRead {
		t.Errorf("read-only: reads everything %v, access %v", ro.ReadsEverything(), ro.Access("x"))
	}
}

func mustRules(t *testing.T, s string) satchel.FileRules {
	t.Helper()
	r, err := satchel.ParseFileRules(s)
	must(t, "rules", err)
	return r
}
