package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/satchel-dev/satchel"
)

func newScopesCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "scopes",
		GroupID: groupAdmin,
		Short:   "List the scopes of the database with their usage",
		Long: `List every scope that has threads or documents, by name, with its usage:
threads (archived ones among them), files and live bytes at the threads'
heads (bytes as the workspace's max_bytes bound counts them: every path and
content as a JSON string), documents (expired ones not yet swept included),
and the time of the last commit or document change.

Prints one scope a line, tab-separated: scope, threads, archived, files,
live bytes, documents, last activity (under a header on a terminal).
With --json, an array: [{"scope": S, "threads": N, "archived": N,
"files": N, "live_bytes": N, "documents": N, "last_activity": TIME}]
([] when none; "documents" is left out when the backend cannot count
them).`,
		Example: `  satchel scopes
  satchel scopes --json --db team.db`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s, err := a.open(ctx)
			if err != nil {
				return err
			}
			l, err := s.ScopeUsage(ctx)
			if err != nil {
				return err
			}
			var b strings.Builder
			for _, u := range l {
				docs := "-"
				if u.Documents != nil {
					docs = fmt.Sprint(*u.Documents)
				}
				fmt.Fprintf(&b, "%s\t%d\t%d\t%d\t%d\t%s\t%s\n", u.Scope, u.Threads, u.Archived, u.Files, u.LiveBytes, docs, stamp(u.LastActivity))
			}
			return a.emit(nonEmpty(l), table([]string{"SCOPE", "THREADS", "ARCHIVED", "FILES", "LIVE BYTES", "DOCUMENTS", "LAST ACTIVITY"}, b.String()))
		},
	}
}

func newScopeCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "scope",
		GroupID: groupAdmin,
		Short:   "Manage a scope (purge)",
		Long:    `Manage a whole scope. satchel scopes lists them.`,
		Example: `  satchel scope purge acme --yes`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmd.Help()
		},
	}
	cmd.AddCommand(newScopePurgeCmd(a))
	return cmd
}

func newScopePurgeCmd(a *app) *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "purge SCOPE --yes",
		Short: "Delete everything of a scope, for good",
		Long: `Delete the scope SCOPE for good: its threads with their history,
checkpoints and storage, its settings, documents and access tokens. The
space is given back at once where the backend can (SQLite). Purging cannot
be undone, so it asks for --yes, or for a confirmation when standard input
is a terminal; without either it refuses and says what it would remove.

A writer racing the purge, in any process, either commits before it (and
is purged) or after it, into a fresh, empty scope. A scope with no
threads, documents or tokens is refused (exit 1) with the list of scopes,
so a mistyped name is not reported as purged.

Prints what it removed; with --json, {"scope": S, "threads": N,
"commits": N, "files": N, "documents": N, "tokens": N, "bytes": N}
(files and bytes: those of the threads' heads).`,
		Example: `  satchel scope purge acme --yes`,
		Args:    exactArgs("SCOPE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			scope := args[0]
			if err := satchel.ValidScope(scope); err != nil {
				return err
			}
			s, err := a.open(ctx)
			if err != nil {
				return err
			}
			if err := knownScope(ctx, s, scope); err != nil {
				return err
			}
			if !yes {
				u, err := s.ScopeInfo(ctx, scope)
				if err != nil {
					return err
				}
				docs := "its documents"
				if u.Documents != nil {
					docs = fmt.Sprintf("%d documents", *u.Documents)
				}
				what := fmt.Sprintf("scope %s: %d threads with their history (%d files, %d bytes at their heads), %s, its settings and access tokens",
					scope, u.Threads, u.Files, u.LiveBytes, docs)
				ok, err := a.confirm("purge " + what + "?")
				if err != nil {
					return err
				}
				if !ok {
					return refuse("not purged: scope purge deletes %s for good; give --yes", what)
				}
			}
			r, err := s.Purge(ctx, scope)
			if err != nil {
				return err
			}
			return a.emit(r, text(fmt.Sprintf("purged scope %s: %d threads, %d commits, %d files, %d documents, %d tokens, %d bytes\n",
				r.Scope, r.Threads, r.Commits, r.Files, r.Documents, r.Tokens, r.Bytes)))
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "purge without asking")
	return cmd
}

// knownScope refuses a scope that holds nothing the purge would remove
// (no threads, documents or tokens), naming the scopes there are, so a
// mistyped name is not reported as purged.
func knownScope(ctx context.Context, s *satchel.Store, scope string) error {
	l, err := s.ScopeUsage(ctx)
	if err != nil {
		return err
	}
	names := []string{}
	seen := map[string]bool{}
	for _, u := range l {
		names = append(names, u.Scope)
		seen[u.Scope] = true
	}
	toks, err := s.Tokens(ctx)
	if err != nil {
		return err
	}
	for _, t := range toks {
		if t.Scope != "" && !seen[t.Scope] {
			names = append(names, t.Scope)
			seen[t.Scope] = true
		}
	}
	if seen[scope] {
		return nil
	}
	if len(names) == 0 {
		return refusef(satchel.ErrNotFound, "no scope %s: the database has no scopes", scope)
	}
	sort.Strings(names)
	return refusef(satchel.ErrNotFound, "no scope %s; the scopes are: %s", scope, strings.Join(names, ", "))
}

func newThreadsArchiveCmd(a *app, archive bool) *cobra.Command {
	use, short, long := "archive NAME", "Make a thread read-only, keeping it",
		`Archive the thread NAME of --scope: it keeps its files and history and can
be read, forked and deleted, but every write to it (file operations,
restore, checkpoint, publish, spill; from the CLI, MCP or the API, in any
process) is refused until satchel threads unarchive. The archive is an
entry in the thread's log (op "archive"), so a write racing it either lands
before it or is refused. Archiving an archived thread changes nothing.`
	if !archive {
		use, short, long = "unarchive NAME", "Make an archived thread writable again",
			`Unarchive the thread NAME of --scope: writes to it are accepted again. The
change is an entry in the thread's log (op "unarchive"). Unarchiving a
thread that is not archived changes nothing.`
	}
	return &cobra.Command{
		Use:   use,
		Short: short,
		Long: long + `

Prints what it did; with --json, {"thread": NAME, "archived": BOOL,
"changed": BOOL, "head": SEQ}.`,
		Example: "  satchel threads " + strings.Fields(use)[0] + " experiment --scope acme",
		Args:    exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s, err := a.open(ctx)
			if err != nil {
				return err
			}
			var r satchel.ArchiveResult
			if archive {
				r, err = s.ArchiveThread(ctx, a.scope, args[0], satchel.WorkspaceActor(a.actor()))
			} else {
				r, err = s.UnarchiveThread(ctx, a.scope, args[0], satchel.WorkspaceActor(a.actor()))
			}
			if err != nil {
				return err
			}
			state := "archived"
			if !archive {
				state = "writable"
			}
			msg := fmt.Sprintf("thread %s of scope %s is %s (head at commit %d)\n", r.Thread, a.scope, state, r.Head)
			if !r.Changed {
				msg = fmt.Sprintf("thread %s of scope %s was already %s (head at commit %d)\n", r.Thread, a.scope, state, r.Head)
			}
			return a.emit(r, text(msg))
		},
	}
}

// threadLines prints a threads listing: one name a line, an archived
// thread's followed by " (archived)".
func threadLines(ts []satchel.ThreadInfo) func(w io.Writer) error {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.Name
		if t.Archived {
			names[i] += " (archived)"
		}
	}
	return lines(names)
}
