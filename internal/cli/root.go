// Package cli is the satchel command: one file per command, over the
// public Go API. Main runs it in-process, so tests call it directly;
// cmd/satchel only calls Main.
//
// Adding a command is one line in newRootCmd, root.AddCommand(newXCmd(a)),
// where newXCmd returns a *cobra.Command whose RunE uses the shared app:
// a.workspace or a.open for the store, a.emit to print, and errors
// returned as they are (see errors.go for how they become exit codes).
package cli

import (
	"context"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/spf13/cobra"

	"github.com/satchel-dev/satchel/internal/version"
)

// Main runs the satchel command with args (without the program name) and
// returns the exit code: 0 on success, 1 when satchel refused or something
// failed, 2 for a usage error. Results go to stdout, messages to stderr.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return run(ctx, newApp(stdin, stdout, stderr), args)
}

// run is Main with the app given, so tests can share a store between runs.
func run(ctx context.Context, a *app, args []string) int {
	root := newRootCmd(a)
	root.SetArgs(args)
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	cmd, err := root.ExecuteContextC(ctx)
	if cerr := a.close(); err == nil && cerr != nil {
		err = runError{cerr}
	}
	if a.json || jsonAsked(args) {
		return reportJSON(a.stderr, err)
	}
	return report(a.stderr, cmd, err)
}

// jsonAsked says whether args ask for --json, for the errors cobra raises
// before it parses the flags (an unknown command).
func jsonAsked(args []string) bool {
	for _, arg := range args {
		switch arg {
		case "--":
			return false
		case "--json", "--json=true":
			return true
		}
	}
	return false
}

// Command groups, in the order `satchel --help` lists them. A group is
// shown only when a command belongs to it.
const (
	groupFiles       = "files"
	groupVersions    = "versions"
	groupCollections = "collections"
	groupServe       = "serve"
	groupTools       = "tools"
	groupAdmin       = "admin"
)

var groups = []cobra.Group{
	{ID: groupFiles, Title: "Files:"},
	{ID: groupVersions, Title: "Versions and threads:"},
	{ID: groupCollections, Title: "Collections:"},
	{ID: groupServe, Title: "Serving agents:"},
	{ID: groupTools, Title: "Spill and untrusted text:"},
	{ID: groupAdmin, Title: "Operations:"},
}

func newRootCmd(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "satchel",
		Short: "A versioned workspace store for AI agents",
		Long: `satchel keeps an agent's files versioned, bounded and safe: every change
to a workspace is a commit, so checkpoints, history, diffs, forks and
restores come for free.

A workspace is one thread (--thread, default main) of one scope (--scope,
default default) of a database. The database is --db, else $SATCHEL_DB,
else the one a project's satchel.json names (init writes it; looked
for in the working directory, then in its parents, as git finds .git), else
./satchel.db: a SQLite file path (file: optional), memory: for a throwaway
store that lives as long as the command, or a postgres:// URL. Commands
that only read refuse a database that does not exist and open it
read-only; commands that write create it, and say so.

Results go to standard output: plain text by default (one result a line),
or one JSON value with --json. Refusals print their message alone on
standard error and exit 1; usage errors exit 2. With --json a refusal is
one line of JSON on standard error: {"error": MESSAGE, "code": KIND}.`,
		Example: `  satchel fs write notes/plan.md "# Plan"
  echo "- step one" | satchel fs append notes/plan.md
  satchel fs read notes/plan.md --numbered
  satchel checkpoint draft-1
  satchel log
  satchel --db team.db --scope acme --thread research fs ls notes`,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmd.Help()
		},
	}
	a.root = root
	root.Version = version.Get().String()
	root.SetVersionTemplate("satchel {{.Version}}\n")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })

	pf := root.PersistentFlags()
	pf.StringVar(&a.db, "db", "", "database: a SQLite file, memory: or a postgres:// URL (default $SATCHEL_DB, else "+defaultDB+")")
	pf.StringVar(&a.scope, "scope", "default", "scope (tenant) of the workspace")
	pf.StringVar(&a.thread, "thread", "main", "thread of the workspace")
	pf.BoolVar(&a.json, "json", false, "print the result as one JSON value")

	root.AddCommand(newFSCmd(a))
	root.AddCommand(newCheckpointCmd(a))
	root.AddCommand(newLogCmd(a))
	root.AddCommand(newDiffCmd(a))
	root.AddCommand(newForkCmd(a))
	root.AddCommand(newMergeCmd(a))
	root.AddCommand(newReviewCmd(a))
	root.AddCommand(newGitCmd(a))
	root.AddCommand(newRestoreCmd(a))
	root.AddCommand(newThreadsCmd(a))
	root.AddCommand(newScopesCmd(a), newScopeCmd(a))
	root.AddCommand(newRetainCmd(a))
	root.AddCommand(newQuotaCmd(a), newLimitsCmd(a))
	root.AddCommand(newGCCmd(a))
	root.AddCommand(newSpillCmd(a))
	root.AddCommand(newUntrustedCmd(a))
	root.AddCommand(newBenchCmd(a))
	root.AddCommand(newMigrateCmd(a))
	root.AddCommand(newInitCmd(a))
	root.AddCommand(newServeCmd(a), newTokenCmd(a))
	root.AddCommand(newRunCmd(a))
	root.AddCommand(newShCmd(a))
	root.AddCommand(newUICmd(a))
	root.AddCommand(newDocCmd(a), newCheckCmd(a), newSchemaCmd(a))
	root.AddCommand(newVersionCmd(a))
	root.AddCommand(newAuditCmd(a))
	root.AddCommand(newExportCmd(a), newImportCmd(a), newBackupCmd(a), newRestoreBackupCmd(a))

	addUsedGroups(root)
	addCompletions(a, root)
	markRunErrors(a, root)
	return root
}

// addUsedGroups declares the groups that root's commands use.
func addUsedGroups(root *cobra.Command) {
	used := map[string]bool{}
	for _, c := range root.Commands() {
		used[c.GroupID] = true
	}
	for i := range groups {
		if used[groups[i].ID] {
			root.AddGroup(&groups[i])
		}
	}
}

// newGroupCmd returns a command that only holds subcommands: alone it
// prints its help; with an unknown subcommand it is a usage error (cobra
// would otherwise print the help and succeed).
func newGroupCmd(use, short, long, example string) *cobra.Command {
	return &cobra.Command{
		Use:     use,
		Short:   short,
		Long:    long,
		Example: example,
		Args:    cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			return usagef("unknown command %q for %q%s", args[0], cmd.CommandPath(), suggest(cmd, args[0]))
		},
	}
}

// suggest names the subcommands of cmd that typed may be a misspelling
// of, as cobra does for the root's: "fs raed" suggests read.
func suggest(cmd *cobra.Command, typed string) string {
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2 // cobra's default, set only for the root
	}
	s := cmd.SuggestionsFor(typed)
	if len(s) == 0 {
		return ""
	}
	return "\n\nDid you mean this?\n\t" + strings.Join(s, "\n\t")
}

// exactArgs, rangeArgs ... are cobra's validators with messages that name
// what is missing; cobra's errors are reported as usage errors.
func exactArgs(names ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < len(names) {
			return usagef("%s: missing %s", cmd.CommandPath(), names[len(args)])
		}
		if len(args) > len(names) {
			return usagef("%s: takes %d argument(s), got %d", cmd.CommandPath(), len(names), len(args))
		}
		return nil
	}
}

// argsBetween accepts the required names, then up to len(optional) more.
func argsBetween(required []string, optional ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < len(required) {
			return usagef("%s: missing %s", cmd.CommandPath(), required[len(args)])
		}
		if max := len(required) + len(optional); len(args) > max {
			return usagef("%s: takes at most %d argument(s), got %d", cmd.CommandPath(), max, len(args))
		}
		return nil
	}
}
