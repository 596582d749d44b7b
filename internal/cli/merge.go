package cli

import (
	"github.com/satchel-dev/satchel"
	"github.com/spf13/cobra"
)

func newMergeCmd(a *app) *cobra.Command {
	var into, conflicts string
	var dryRun bool
	cmd := &cobra.Command{
		Use:     "merge FROM [--into THREAD] [--conflicts refuse|markers] [--dry-run]",
		GroupID: groupVersions,
		Short:   "Merge the changes of another thread into this one",
		Long: `Merge into thread --into (default: --thread) the changes that FROM (a thread,
its head, or THREAD@REF) made since the newest commit the two have in
common: the commit one was forked from, or the one the last merge between
them merged. A path changed on one side only takes that side's version; a
text file changed on both is merged by lines, as git merge-file does.
Overlapping changes, a deletion against a change, and two different binary
versions are conflicts.

With --conflicts refuse (the default), a merge with conflicts commits
nothing and lists them all. With --conflicts markers, each conflicting
region is written between "<<<<<<< INTO", "=======" and ">>>>>>> FROM"
lines (a binary file keeps the target's version, a file deleted on one
side and changed on the other keeps the changed version), and the merge
commits and lists them. --dry-run says what the merge would do.

The merge is one commit, summarized "merged FROM@N"; the next merge
between the two threads starts from it. Prints what was merged, or
"unchanged: ..." when there is nothing new; with --json, the result.`,
		Example: `  satchel fork try-b --from main
  satchel --thread try-b fs write notes/plan.md < plan.md
  satchel merge try-b
  satchel merge try-b@17 --into main --conflicts markers`,
		Args: exactArgs("FROM"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			var opts []satchel.MergeOption
			switch conflicts {
			case "refuse":
			case "markers":
				opts = append(opts, satchel.ConflictMarkers())
			default:
				return &satchel.Error{Kind: satchel.ErrInvalidArgument, Msg: "invalid --conflicts " + conflicts + ": refuse or markers"}
			}
			if dryRun {
				opts = append(opts, satchel.DryRun())
			}
			if into == "" {
				into = a.thread
			}
			ws, err := a.workspaceOf(ctx, into)
			if err != nil {
				return err
			}
			r, err := ws.Merge(ctx, args[0], opts...)
			if err != nil {
				return err
			}
			return a.emit(r, text(r.Message()+"\n"))
		},
	}
	cmd.Flags().StringVar(&into, "into", "", "merge into `THREAD` (default: --thread)")
	cmd.Flags().StringVar(&conflicts, "conflicts", "refuse", "what a conflict does: refuse (commit nothing) or markers (write them, commit)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "say what the merge would do, commit nothing")
	return cmd
}
