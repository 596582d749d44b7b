package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/satchel-dev/satchel"
)

// logRow is how plain output shows a commit, a line of log: sequence,
// time (RFC 3339, UTC), checkpoint names (comma-separated, or empty),
// agent ("-": an operator) and summary, separated by tabs.
func logRow(c satchel.Commit) string {
	agent := c.Agent
	if agent == "" {
		agent = "-"
	}
	return fmt.Sprintf("%d\t%s\t%s\t%s\t%s\n", c.Seq, stamp(c.Time), strings.Join(c.Checkpoints, ","), agent, c.Summary)
}

// logHeader names log's columns, which every command that prints a commit
// shares.
var logHeader = []string{"SEQ", "TIME", "CHECKPOINTS", "AGENT", "SUMMARY"}

// commitTable prints one commit as log does: its row, under log's header
// on a terminal.
func commitTable(c satchel.Commit) func(io.Writer) error { return table(logHeader, logRow(c)) }

func newCheckpointCmd(a *app) *cobra.Command {
	var kf *keyFlag
	cmd := &cobra.Command{
		Use:     "checkpoint NAME",
		GroupID: groupVersions,
		Short:   "Name the head commit",
		Long: `Give the head commit of the workspace (--scope, --thread) the name NAME, to
read, diff, fork or restore it later by name. A name is 1 to 128 letters,
digits, '.', '_' or '-', unique in its thread, and not one a reference
already means: not all digits, not a negative number, not head.

Prints the commit as log does (SEQ, TIME, CHECKPOINTS, AGENT, SUMMARY, tab
separated); with --json, the Commit.`,
		Example: `  satchel checkpoint before-refactor
  satchel fs read notes/a.md --at before-refactor`,
		Args: exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			ws, err := a.workspace(ctx)
			if err != nil {
				return err
			}
			c, err := ws.Checkpoint(ctx, args[0], kf.opts()...)
			if err != nil {
				return err
			}
			return a.emit(c, commitTable(c))
		},
	}
	kf = addKeyFlag(cmd)
	return cmd
}

func newLogCmd(a *app) *cobra.Command {
	var limit int
	cmd := &cobra.Command{
		Use:     "log",
		GroupID: groupVersions,
		Short:   "List the commits of a thread",
		Long: `List the retained commits of the workspace (--scope, --thread), newest
first, one a line: SEQ, TIME (RFC 3339, UTC), CHECKPOINTS (the names given
to the commit, comma-separated, or empty), AGENT (the agent that made it,
"-" for an operator) and SUMMARY, separated by tabs; on a terminal, in
aligned columns under a header row. --limit N lists the newest N.

With --json, an array of commits: [{"seq": N, "time": ..., "checkpoints":
[...], "op": ..., "summary": ..., "agent": ..., "via": ...}] ([] when none).`,
		Example: `  satchel log
  satchel log --limit 5 --thread research`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if err := notNegative("limit", limit); err != nil {
				return err
			}
			ws, err := a.workspace(ctx)
			if err != nil {
				return err
			}
			cs, err := ws.History(ctx, 0, limit)
			if err != nil {
				return err
			}
			var b strings.Builder
			for _, c := range cs {
				b.WriteString(logRow(c))
			}
			return a.emit(nonEmpty(cs), table(logHeader, b.String()))
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 0, "list the newest `N` commits (0: all)")
	return cmd
}

// diffResult is what `diff FROM TO PATH --json` prints.
type diffResult struct {
	Path string `json:"path"`
	Diff string `json:"diff"`
}

func newDiffCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "diff FROM [TO [PATH]]",
		GroupID: groupVersions,
		Short:   "Show what changed between two commits",
		Long: `Compare two commits of the workspace, FROM and TO (each a sequence number,
a checkpoint name, "head", or 0 for the empty tree before the first commit).
TO defaults to head, as the MCP tool's does.

Without PATH, prints one line per path that differs, in path order:
"added", "removed" or "changed", a tab, and the path. With --json, an
array of changes: [{"path": ..., "kind": "added"}] ([] when none).

With PATH, prints the unified diff of that file; with --json, {"path":
..., "diff": ...}. When nothing differs, a terminal gets "no changes
between FROM and TO" and a pipe gets nothing.`,
		Example: `  satchel diff draft-1
  satchel diff 3 7 notes/plan.md`,
		Args: argsBetween([]string{"FROM"}, "TO", "PATH"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if len(args) == 1 {
				args = append(args, "head")
			}
			ws, err := a.workspace(ctx)
			if err != nil {
				return err
			}
			if len(args) == 3 {
				d, err := ws.DiffFile(ctx, args[0], args[1], args[2])
				if err != nil {
					return err
				}
				if d == "" {
					a.emptyNote(fmt.Sprintf("no changes between %s and %s in %s", args[0], args[1], args[2]))
				}
				return a.emit(diffResult{Path: args[2], Diff: d}, text(d))
			}
			cs, err := ws.Diff(ctx, args[0], args[1])
			if err != nil {
				return err
			}
			if len(cs) == 0 {
				a.emptyNote(fmt.Sprintf("no changes between %s and %s", args[0], args[1]))
			}
			return a.emit(nonEmpty(cs), func(w io.Writer) error {
				var b strings.Builder
				for _, c := range cs {
					fmt.Fprintf(&b, "%s\t%s\n", c.Kind, c.Path)
				}
				_, err := io.WriteString(w, b.String())
				return err
			})
		},
	}
}

// forkResult is what `fork --json` prints.
type forkResult struct {
	Scope  string `json:"scope"`
	Thread string `json:"thread"`
	From   string `json:"from"`
	// Head is the new thread's first commit; absent when the fork is of
	// the empty tree (commit 0), which makes no commit.
	Head *satchel.Commit `json:"head,omitempty"`
}

func newForkCmd(a *app) *cobra.Command {
	var from string
	var kf *keyFlag
	cmd := &cobra.Command{
		Use:     "fork NEW_THREAD --from THREAD[@REF]",
		GroupID: groupVersions,
		Short:   "Start a new thread from a commit of another",
		Long: `Make a new thread NEW_THREAD in --scope whose first commit is the tree of
commit REF of THREAD (a sequence number or a checkpoint name). THREAD alone
means its head; without --from, the head of --thread. Nothing is copied:
a fork takes the same time whatever the workspace's size, and the two
threads then change independently.

Prints the new thread's first commit as log does; with --json,
{"scope": ..., "thread": ..., "from": "THREAD@REF", "head": COMMIT}.`,
		Example: `  satchel fork experiment --from main@before-refactor
  satchel fork retry --from main
  satchel --thread experiment fs ls`,
		Args: exactArgs("NEW_THREAD"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			thread, ref := a.thread, ""
			if cmd.Flags().Changed("from") {
				thread, ref, _ = strings.Cut(from, "@")
			}
			s, err := a.open(ctx)
			if err != nil {
				return err
			}
			src, err := a.workspaceOf(ctx, thread)
			if err != nil {
				return err
			}
			// Fork of a thread that does not exist would fork the empty
			// tree; say it does not exist instead.
			threads, err := s.Threads(ctx, a.scope)
			if err != nil {
				return err
			}
			found := false
			for _, t := range threads {
				found = found || t.Name == thread
			}
			if !found {
				return &satchel.Error{Kind: satchel.ErrNotFound, Msg: "thread not found: " + thread}
			}
			nw, err := src.Fork(ctx, ref, args[0], kf.opts()...)
			if err != nil {
				return err
			}
			res := forkResult{Scope: a.scope, Thread: args[0], From: thread + "@" + ref}
			if ref == "" {
				res.From = thread + "@head"
			}
			hs, err := nw.History(ctx, 0, 1)
			if err != nil {
				return err
			}
			if len(hs) > 0 {
				res.Head = &hs[0]
			}
			return a.emit(res, func(w io.Writer) error {
				if res.Head == nil {
					return nil
				}
				return commitTable(*res.Head)(w)
			})
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "fork commit `THREAD@REF` (THREAD alone: its head; default: the head of --thread)")
	kf = addKeyFlag(cmd)
	return cmd
}

func newRestoreCmd(a *app) *cobra.Command {
	var kf *keyFlag
	cmd := &cobra.Command{
		Use:     "restore REF",
		GroupID: groupVersions,
		Short:   "Make the head's files those of an earlier commit",
		Long: `Make the files of the workspace (--scope, --thread) those of commit REF (a
sequence number or a checkpoint name). The restore is itself a new commit,
so nothing is lost: the commits after REF stay in the log. When the head
already has the files of REF, no commit is made.

Prints the new commit as log does, or "unchanged: ..."; with --json, the
Commit ("unchanged": true when none was made).`,
		Example: `  satchel restore before-refactor
  satchel restore 12`,
		Args: exactArgs("REF"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			ws, err := a.workspace(ctx)
			if err != nil {
				return err
			}
			c, err := ws.Restore(ctx, args[0], kf.opts()...)
			if err != nil {
				return err
			}
			if c.Unchanged {
				return a.emit(c, text(fmt.Sprintf("unchanged: the head (commit %d) already has the files of %s\n", c.Seq, args[0])))
			}
			return a.emit(c, commitTable(c))
		},
	}
	kf = addKeyFlag(cmd)
	return cmd
}
