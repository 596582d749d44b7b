package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/satchel-dev/satchel"
)

// checkProjectResult is what `check --json` prints.
type checkProjectResult struct {
	Dir    string   `json:"dir"`
	Stores []string `json:"stores"`
	Agents []string `json:"agents"`
	// Warnings are the problems that do not fail the check (also printed
	// on standard error).
	Warnings []string `json:"warnings,omitempty"`
}

func newCheckCmd(a *app) *cobra.Command {
	var dir string
	var storage bool
	cmd := &cobra.Command{
		Use:     "check",
		GroupID: groupCollections,
		Short:   "Validate a project's stores and agents, or the database's storage",
		Long: `Check loads the definitions of the project directory --dir (default .):
stores/*.json and agents/*/agent.json. Every problem of every file is
reported at once, each with the file, the field path and what is wrong,
and the command exits 1; the database is not opened ("satchel doc check"
lists the stored documents that no longer fit the definitions). An
agent's "files" rules are checked too: each pair a [GLOB, ACCESS] of
strings, ACCESS one of rw, read, none, the glob valid, and no pair that
can never match because an earlier one always does. Problems that do not
fail the check, such as "rw" on a shared store (agents only read shared
stores), are printed as warnings on standard error.

Prints the stores and agents found; with --json, {"dir": ..., "stores":
[...], "agents": [...]}.

With --storage, check verifies the database instead: every retained
commit of every thread (of --scope only, when given), each node and chunk
it reaches, the totals of its tree, the checkpoints, the heads, and that
the commits a collection keeps are those the logs reach. It prints every
fault, one a line (scope/thread@commit: object: problem), then a summary,
and exits 1 if there is any; with --json, {"threads", "commits",
"objects", "faults": [{"scope", "thread", "seq", "object", "problem"}]}.
Run it on a quiet database: commits made meanwhile may show as faults.`,
		Example: `  satchel check
  satchel check --dir research
  satchel check --storage --db team.db
  satchel check --storage --scope acme --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if storage {
				return checkStorage(cmd, a)
			}
			p, err := satchel.LoadProject(dir)
			if err != nil {
				return err
			}
			for _, s := range p.Skipped() {
				a.notice("%s", s)
			}
			for _, w := range p.Warnings() {
				a.notice("%s", w)
			}
			r := checkProjectResult{Dir: dir, Stores: nonEmpty(p.Stores()), Agents: nonEmpty(p.Agents()), Warnings: p.Warnings()}
			return a.emit(r, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "ok: %s (%s), %s (%s)\n",
					nouns(len(r.Stores), "store", "stores"), strings.Join(r.Stores, ", "), nouns(len(r.Agents), "agent", "agents"), strings.Join(r.Agents, ", "))
				return err
			})
		},
	}
	cmd.Flags().StringVar(&dir, "dir", ".", "project `DIR` with stores/ and agents/")
	cmd.Flags().BoolVar(&storage, "storage", false, "check the database's storage instead (of --scope only, when given)")
	return cmd
}

// checkStorage runs `check --storage`.
func checkStorage(cmd *cobra.Command, a *app) error {
	ctx := cmd.Context()
	st, err := a.open(ctx)
	if err != nil {
		return err
	}
	var opts []satchel.CheckOption
	if a.root != nil && a.root.PersistentFlags().Changed("scope") {
		opts = append(opts, satchel.InScope(a.scope))
	}
	rep, err := st.Check(ctx, opts...)
	if err != nil {
		return err
	}
	rep.Faults = nonEmpty(rep.Faults)
	if err := a.emit(rep, func(w io.Writer) error {
		var b strings.Builder
		for _, f := range rep.Faults {
			b.WriteString(f.String())
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "checked %d threads, %d commits, %d objects: %d faults\n", rep.Threads, rep.Commits, rep.Objects, len(rep.Faults))
		_, err := io.WriteString(w, b.String())
		return err
	}); err != nil {
		return err
	}
	if n := len(rep.Faults); n > 0 {
		return fmt.Errorf("storage check: %d faults", n)
	}
	return nil
}
